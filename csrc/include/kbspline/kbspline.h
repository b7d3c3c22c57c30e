/*
 * kbspline/kbspline.h -- the public C API of kbspline, all of it.
 *
 * Kochanek-Bartels splines for batches of tracks, in C11; thread-safe, the
 * only global state the worker pool (kb_threads_shutdown).  Arrays are
 * C-contiguous float64, shapes named by axes, e.g. values (n_tracks, n_keys,
 * dim).  Derivatives are d/dt in global time, never d/du.
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
