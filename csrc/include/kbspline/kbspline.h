/*
 * kbspline/kbspline.h -- the public C API of kbspline, all of it.
 *
 * Kochanek-Bartels (tension / continuity / bias) splines for batches of
 * vector tracks.  Pure C11: no Python, no allocation in evaluation loops,
 * thread-safe; the only global state is the pool of worker threads that
 * large batches are split over (see kb_threads_shutdown).  Every array is
 * C-contiguous float64 and its shape is written with named axes, e.g.
 * values (n_tracks, n_keys, dim).
 *
 * Derivatives are d/dt in global time (per unit of t), never d/du.
 *
 * Headers (include this one; each opens with an index of its functions):
 *   status.h      errors, option codes, per-key parameters, threads
 *   position.h    position-like splines: build, evaluate
 *   rotation.h    rotation splines: build, evaluate
 *   length.h      arc length and swept angle
 *   quat.h        quaternion utilities
 *   kinematics.h  forward kinematics
 *   reduce.h      key reduction of a clip
 */
#ifndef KBSPLINE_H
#define KBSPLINE_H

#include "status.h"
#include "position.h"
#include "rotation.h"
#include "length.h"
#include "quat.h"
#include "kinematics.h"
#include "reduce.h"

#endif /* KBSPLINE_H */
