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

/* IMPORTANT: quaternions are (w, x, y, z), scalar first, inside the core;
 * kb_rot_eval can write (x, y, z, w).  Hamilton product; a unit q rotates v
 * as q v q*.  Angular velocity w: dq/dt = w q / 2 (world) or q w / 2 (body),
 * in radians per unit time. */

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
    const double *chords;      /* (n_tracks, n_keys - 1, 3) or NULL: multi-turn keys.  The
                                  logs L_n of the segments, never reduced modulo a turn
                                  (|L_n| is half the angle turned); the keys must then be
                                  q_(n+1) = q_n exp(L_n), and are not sign-aligned */
    const double *given_in, *given_out;  /* (n_tracks, n_keys, 3) log-space tangents per
                                            time, or NULL: as kb_tcb_keys' */
} kb_rot_keys;

/* How a rotation segment is interpolated (kb_rot_curve.kind). */
enum {
    KB_SEG_SQUAD = 0,      /* squad(q_n, a_n, b_(n+1), q_(n+1)) */
    KB_SEG_CUMULATIVE = 1  /* the cumulative cubic of Kim, Kim & Shin (1995), on a spin */
};

/*
 * Builds rotation segments: keys normalised and sign-aligned, chords
 * L_n = log(q_n* q_(n+1)) (or the given multi-turn chords), tangents from
 * kb_key_tangents' weights on them, inner control points
 * a_n = q_n exp((T0_n - L_n) / 2), b_(n+1) = q_(n+1) exp((L_n - T1_(n+1)) / 2).
 * A segment is squad where a bound on its angular speed proves it tame,
 * else the cumulative cubic of the same ends and end angular velocities
 * (the construction and its bound: docs/guide/rotations.md).
 *   tan_in, tan_out  (n_tracks, n_keys, 3) log-space tangents per time
 *   seg    (n_tracks, S, KB_ROT_SEG): what evaluation reads (opaque)
 *   ctrl   (n_tracks, S, 4, 4) control points, or NULL: squad (q_n, a_n,
 *          b_(n+1), q_(n+1)); cumulative (q_n, q_n exp(w1), q_(n+1) exp(-w3), q_(n+1))
 *   kind   (n_tracks, S): KB_SEG_SQUAD or KB_SEG_CUMULATIVE
 *   ease   (n_tracks, S, 2) or NULL
 * Validates first; tangents too large to compute with (TCB or keys so
 * extreme that a segment's record overflows) are found while building:
 * KB_ERANGE, argument values, index the segment's first key, with the
 * outputs partly written.  Allocates one workspace of 7 n_keys doubles.
 */
kb_status kb_rot_build(const kb_rot_keys *keys, double *tan_in, double *tan_out,
                       double *seg, double *ctrl, unsigned char *kind, double *ease,
                       kb_error *err);

/* kb_rot_build split over up to n_threads threads for large batches (see
 * kb_tcb_build_threaded). */
kb_status kb_rot_build_threaded(const kb_rot_keys *keys, double *tan_in, double *tan_out,
                                double *seg, double *ctrl, unsigned char *kind, double *ease,
                                int n_threads, kb_error *err);

/* Doubles per segment record (kb_rot_build's seg): 128 bytes, what a
 * rotation spline keeps per segment besides its knots and kinds. */
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
 * nu = 0: unit quaternions, out (n_tracks, n_eval, 4), (w, x, y, z) or with
 * scalar_first = 0 (x, y, z, w); nu = 1: angular velocity, nu = 2: angular
 * acceleration, out (n_tracks, n_eval, 3), in the world frame or with
 * body = 1 the body frame.  Derivatives are analytic (jets through squad).
 * Linear extrapolation rotates on at the end angular velocity.  Tracks
 * [track_begin, track_end); validates first; never allocates.
 */
kb_status kb_rot_eval(const kb_rot_curve *curve, int nu, int body, int scalar_first,
                      const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                      ptrdiff_t track_begin, ptrdiff_t track_end, double *out64,
                      float *out32, kb_error *err);

/* kb_rot_eval over all tracks on up to n_threads threads (see
 * kb_curve_eval_threaded). */
kb_status kb_rot_eval_threaded(const kb_rot_curve *curve, int nu, int body, int scalar_first,
                               const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                               int n_threads, double *out64, float *out32, kb_error *err);

KB_END_DECLS
#endif /* KBSPLINE_ROTATION_H */
