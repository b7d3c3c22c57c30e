/*
 * kbspline/kinematics.h -- forward kinematics of a joint hierarchy.
 *
 *   kb_joint_world  one joint placed in the world, frame by frame
 */
#ifndef KBSPLINE_KINEMATICS_H
#define KBSPLINE_KINEMATICS_H

#include "status.h"

KB_BEGIN_DECLS

/*
 * One joint in the world at n_frames frames: world_rot (n_frames, 9, row-major)
 * = parent_rot R(rotation), origin (n_frames, 3) = parent_origin + parent_rot
 * offset, from rotations (n_frames, 4) and offsets (n_frames, 3; or (3,) with
 * offset_stride 0); NULL parents for a root.  Points (the origin, then sites
 * (n_sites, 3)) to points (n_frames, 1 + n_sites, 3) unless NULL.
 */
kb_status kb_joint_world(ptrdiff_t n_frames, const double *parent_rot,
                         const double *parent_origin, const double *rotations,
                         const double *offsets, ptrdiff_t offset_stride, ptrdiff_t n_sites,
                         const double *sites, double *world_rot, double *origin,
                         double *points, kb_error *err);

KB_END_DECLS
#endif /* KBSPLINE_KINEMATICS_H */
