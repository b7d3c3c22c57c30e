/*
 * kbspline/quat.h -- quaternion utilities over arrays of (w, x, y, z).
 *
 *   kb_quat_multiply, kb_quat_conjugate, kb_quat_log, kb_quat_exp
 *   kb_quat_slerp, kb_quat_squad
 *   kb_quat_from_axis_angle, kb_quat_to_axis_angle
 *   kb_quat_from_matrix, kb_quat_to_matrix, kb_quat_from_euler, kb_quat_to_euler
 */
#ifndef KBSPLINE_QUAT_H
#define KBSPLINE_QUAT_H

#include "status.h"

KB_BEGIN_DECLS

/* Over n elements: quaternions (n, 4) as (w, x, y, z), vectors (n, 3),
 * matrices (n, 3, 3), scalars (n,).  Rotations are normalised (any finite
 * scale).  Errors: KB_ENONFINITE, KB_EZERONORM, KB_ERANGE (overflow), with
 * err->track the operand (0 the first) and err->index the element.  An
 * output may be an input of the same width (in place). */

kb_status kb_quat_multiply(ptrdiff_t n, const double *a, const double *b, double *out,
                           kb_error *err);
kb_status kb_quat_conjugate(ptrdiff_t n, const double *q, double *out, kb_error *err);
/* Full quaternion log (ln|q|, theta n) with theta in [0, pi]; exp inverts it.
 * A negative real q = -s has log (ln s, pi, 0, 0). */
kb_status kb_quat_log(ptrdiff_t n, const double *q, double *out, kb_error *err);
/* KB_ERANGE where e^w or the vector part's norm overflows. */
kb_status kb_quat_exp(ptrdiff_t n, const double *q, double *out, kb_error *err);
/* Slerp along the shorter arc (q is negated when p . q < 0); KB_ERANGE
 * (operand 2) where u times the angle overflows (|u| > 5e307). */
kb_status kb_quat_slerp(ptrdiff_t n, const double *p, const double *q, const double *u,
                        double *out, kb_error *err);
/* slerp(2u(1-u), slerp(u, p, q), slerp(u, a, b)), no slerp taking a shorter arc;
 * KB_ERANGE (operand 4) where 2u(1-u) times an angle overflows (|u| > 9e153). */
kb_status kb_quat_squad(ptrdiff_t n, const double *p, const double *a, const double *b,
                        const double *q, const double *u, double *out, kb_error *err);
kb_status kb_quat_from_axis_angle(ptrdiff_t n, const double *axis, const double *angle,
                                  double *out, kb_error *err);
/* angle in [0, pi]; the identity has axis (1, 0, 0). */
kb_status kb_quat_to_axis_angle(ptrdiff_t n, const double *q, double *axis, double *angle,
                                kb_error *err);
kb_status kb_quat_to_matrix(ptrdiff_t n, const double *q, double *out, kb_error *err);
/* KB_ERANGE where a matrix is not a rotation (orthonormal to 1e-6, det > 0);
 * the result has w >= 0. */
kb_status kb_quat_from_matrix(ptrdiff_t n, const double *matrix, double *out, kb_error *err);
/* Euler angles (n, 3) about axes[0], axes[1], axes[2] (0 = x, 1 = y, 2 = z),
 * extrinsic (fixed axes) or intrinsic (moving axes), radians. */
kb_status kb_quat_from_euler(ptrdiff_t n, const double *angles, const int *axes,
                             int extrinsic, double *out, kb_error *err);
/* Angles in [-pi, pi] (the middle one in [0, pi] or [-pi/2, pi/2]); at
 * gimbal lock the last extrinsic angle is 0. */
kb_status kb_quat_to_euler(ptrdiff_t n, const double *q, const int *axes, int extrinsic,
                           double *out, kb_error *err);

KB_END_DECLS
#endif /* KBSPLINE_QUAT_H */
