/*
 * kbspline/rotation.h -- rotation splines: squad with KB tangents on the logs.
 *
 *   kb_rot_build, kb_rot_build_threaded  keys to segments
 *   kb_rot_eval, kb_rot_eval_threaded  rotations, angular velocity, acceleration
 */
#ifndef KBSPLINE_ROTATION_H
#define KBSPLINE_ROTATION_H

#include "status.h"

KB_BEGIN_DECLS

/* Quaternions are (w, x, y, z) (kb_rot_eval can write (x, y, z, w)), Hamilton
 * product, q v q*.  Angular velocity w: dq/dt = w q / 2 (world), q w / 2 (body). */

typedef struct {
    ptrdiff_t n_tracks, n_keys;
    kb_param times;            /* (n_tracks | 1, n_keys), strictly increasing */
    const double *quats;       /* (n_tracks, n_keys, 4), any nonzero norm */
    kb_param tension, continuity, bias;   /* (n_tracks | 1, n_keys) */
    kb_param ease_from, ease_to;          /* (n_tracks | 1, n_keys), in [0, 1] */
    kb_param start_omega, end_omega;      /* (n_tracks | 1, 3) world angular velocity
                                             for clamped ends; data may be NULL (zero) */
    kb_timing timing;
    kb_ends ends;
    const double *chords;      /* (n_tracks, n_keys - 1, 3) or NULL: multi-turn keys, the
                                  segments' logs L_n unreduced (|L_n| half the angle);
                                  keys then q_(n+1) = q_n exp(L_n), not sign-aligned */
    const double *given_in, *given_out;  /* (n_tracks, n_keys, 3) log-space tangents per
                                            time, or NULL: as kb_tcb_keys' */
} kb_rot_keys;

/* A segment's kind: squad(q_n, a_n, b_(n+1), q_(n+1)), or on a spin the
 * cumulative cubic of Kim, Kim & Shin (1995). */
enum { KB_SEG_SQUAD = 0, KB_SEG_CUMULATIVE = 1 };

/*
 * Builds rotation segments: KB tangents on the chords L_n = log(q_n* q_(n+1)),
 * a_n = q_n exp((T0_n - L_n) / 2), b_(n+1) = q_(n+1) exp((L_n - T1_(n+1)) / 2);
 * squad where a speed bound proves it tame, else the cumulative cubic
 * (docs/guide/rotations.md).
 *   tan_in, tan_out  (n_tracks, n_keys, 3) log-space tangents per time
 *   seg    (n_tracks, S, KB_ROT_SEG): what evaluation reads (opaque)
 *   ctrl   (n_tracks, S, 4, 4) control points or NULL; kind (n_tracks, S)
 *   ease   (n_tracks, S, 2) or NULL
 * Validates first; an overflow while building is KB_ERANGE (values, index
 * the segment's first key; outputs partly written).  Allocates 7 n_keys doubles.
 */
kb_status kb_rot_build(const kb_rot_keys *keys, double *tan_in, double *tan_out,
                       double *seg, double *ctrl, unsigned char *kind, double *ease,
                       kb_error *err);

/* kb_rot_build over up to n_threads threads (see kb_tcb_build_threaded). */
kb_status kb_rot_build_threaded(const kb_rot_keys *keys, double *tan_in, double *tan_out,
                                double *seg, double *ctrl, unsigned char *kind, double *ease,
                                int n_threads, kb_error *err);

/* Doubles per segment record (kb_rot_build's seg). */
#define KB_ROT_SEG 16

typedef struct {
    ptrdiff_t n_tracks, n_seg;
    const double *knots;    /* (n_tracks | 1, n_seg + 1) */
    ptrdiff_t knots_stride; /* 0 or n_seg + 1 */
    const double *seg;      /* (n_tracks, n_seg, KB_ROT_SEG), see kb_rot_build */
    const double *ease;     /* (n_tracks, n_seg, 2) or NULL */
    kb_extrap extrap;
    const unsigned char *kind; /* (n_tracks, n_seg), or NULL: every segment squad */
} kb_rot_curve;

/*
 * nu = 0: unit quaternions (n_tracks, n_eval, 4), (x, y, z, w) where
 * scalar_first = 0; nu = 1, 2: angular velocity, acceleration (n_tracks,
 * n_eval, 3), world frame or with body = 1 body frame (analytic).  Linear
 * extrapolation turns on at the end rate.  Validates first; never allocates.
 */
kb_status kb_rot_eval(const kb_rot_curve *curve, int nu, int body, int scalar_first,
                      const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                      ptrdiff_t track_begin, ptrdiff_t track_end, double *out64,
                      float *out32, kb_error *err);

/* kb_rot_eval over all tracks on up to n_threads threads. */
kb_status kb_rot_eval_threaded(const kb_rot_curve *curve, int nu, int body, int scalar_first,
                               const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                               int n_threads, double *out64, float *out32, kb_error *err);

KB_END_DECLS
#endif /* KBSPLINE_ROTATION_H */
