/*
 * kbspline/kinematics.h -- forward kinematics of a joint hierarchy.
 *
 *   kb_joint_world  one joint placed in the world, frame by frame
 *   kb_joint_reach  how far each joint's points get from its origin
 */
#ifndef KBSPLINE_KINEMATICS_H
#define KBSPLINE_KINEMATICS_H

#include "status.h"

KB_BEGIN_DECLS

/* ------------------------------------------------------------------ */
/* Forward kinematics (kbspline.motion's world-space error).          */
/* ------------------------------------------------------------------ */

/*
 * One joint in the world at n_frames frames: its rotation matrices
 * world_rot (n_frames, 9; row-major, acting on column vectors) = parent_rot
 * R(rotation) and its origin (n_frames, 3) = parent_origin + parent_rot
 * offset, from its local rotations (n_frames, 4; (w, x, y, z), normalised
 * here, a zero or non-finite one refused; the other arrays are not
 * checked, and a NaN in them makes *max_error NaN) and offsets (n_frames,
 * 3, or one (3,) for every frame when offset_stride is 0, else 3); a root
 * passes NULL for both parent arrays.  Its points,
 * the origin then each of sites (n_sites, 3) carried by its frame, go to
 * points (n_frames, 1 + n_sites, 3) unless NULL; with truth (the same
 * shape; NULL to skip) their largest distance from it goes to *max_error.
 * With truth, it stops at the first point farther than limit from it (a
 * check that fails needs no more; with an infinite or NaN limit, only at a
 * NaN; with a negative one, at the first point): *max_error is then that
 * point's distance, above limit (or NaN), and the outputs are unfinished.
 * frame_worst (n_frames; NULL to skip; only with truth) takes each frame's
 * largest squared distance where it is larger (or NaN; a NaN there stays,
 * from any point of the frame or an earlier call) up to where it stops,
 * so that calls for the joints below one fold in the frames where they
 * stray (reduce_keys keeps the pieces of a joint's new keys that do not;
 * it passes no limit).
 */
kb_status kb_joint_world(ptrdiff_t n_frames, const double *parent_rot,
                         const double *parent_origin, const double *rotations,
                         const double *offsets, ptrdiff_t offset_stride, ptrdiff_t n_sites,
                         const double *sites, const double *truth, double limit,
                         double *world_rot, double *origin, double *points, double *max_error,
                         double *frame_worst, kb_error *err);

/*
 * Each joint's reach: reach[j], the farthest any point it carries (its own
 * and those of every joint below it) gets from its origin in any frame
 * (the largest distance's root of the largest square; NaN where a point
 * is NaN).  points: every joint's points in joint order, joint j's
 * (n_frames, 1 + n_sites[j], 3), its origin first, as kb_joint_world
 * writes them; parents[j] in [-1, j).  The first-order split of a
 * world-space tolerance divides a joint's share by it (reduce_keys).
 */
kb_status kb_joint_reach(ptrdiff_t n_joints, ptrdiff_t n_frames, const ptrdiff_t *parents,
                         const ptrdiff_t *n_sites, const double *points, double *reach,
                         kb_error *err);

KB_END_DECLS
#endif /* KBSPLINE_KINEMATICS_H */
