/*
 * kbspline/position.h -- position-like splines: build and evaluate.
 *
 *   kb_tcb_build, kb_tcb_build_threaded    keys to cubics
 *   kb_alpha_times                         key times from the keys
 *   kb_curve_eval, kb_curve_eval_threaded  evaluate
 */
#ifndef KBSPLINE_POSITION_H
#define KBSPLINE_POSITION_H

#include "status.h"

KB_BEGIN_DECLS

/* The keys of a batch of position-like tracks. */
typedef struct {
    ptrdiff_t n_tracks, n_keys, dim;
    kb_param times;        /* (n_tracks | 1, n_keys), strictly increasing */
    const double *values;  /* (n_tracks, n_keys, dim) */
    kb_param tension, continuity, bias;   /* (n_tracks | 1, n_keys) */
    kb_param ease_from, ease_to;          /* (n_tracks | 1, n_keys), in [0, 1] */
    kb_param start_tangent, end_tangent;  /* (n_tracks | 1, dim) per time;
                                             clamped only; data may be NULL (zero) */
    kb_timing timing;
    kb_ends ends;
    /* (n_tracks, n_keys, dim) given tangents (Hermite keys), both or neither;
     * TCB and timing then unused, ends natural */
    const double *given_in, *given_out;
} kb_tcb_keys;

/*
 * Builds KB splines of S = kb_num_segments(ends, n_keys) segments:
 *   tan_in, tan_out  (n_tracks, n_keys, dim) tangents per time, or both NULL
 *   coef   (n_tracks, S, 4, dim): segment n is sum c_i u^i, u in [0, 1]
 *   ease   (n_tracks, S, 2) (ease_from, ease_to) or NULL
 * Validates first; an overflow while building is KB_ERANGE (values, index
 * the key; outputs partly written).  Allocates O(n_keys dim) doubles.
 */
kb_status kb_tcb_build(const kb_tcb_keys *keys, double *tan_in, double *tan_out,
                       double *coef, double *ease, kb_error *err);

/* kb_tcb_build over up to n_threads threads for large batches (same outputs). */
kb_status kb_tcb_build_threaded(const kb_tcb_keys *keys, double *tan_in, double *tan_out,
                                double *coef, double *ease, int n_threads, kb_error *err);

/* Key times (n_tracks, n_keys) from the keys: t(0) = 0, t(n) = t(n-1) +
 * |x(n) - x(n-1)|^alpha.  KB_ENOTSORTED (values, index n) where alpha > 0 and
 * key n repeats key n-1; KB_ERANGE where a time overflows or does not grow. */
kb_status kb_alpha_times(ptrdiff_t n_tracks, ptrdiff_t n_keys, ptrdiff_t dim,
                         const double *values, double alpha, double *times_out,
                         kb_error *err);

/* A built batch of piecewise cubics, ready to evaluate. */
typedef struct {
    ptrdiff_t n_tracks, n_seg, dim;
    const double *knots;   /* (n_tracks | 1, n_seg + 1), strictly increasing */
    ptrdiff_t knots_stride;/* 0 (shared) or n_seg + 1 */
    const double *coef;    /* (n_tracks, n_seg, 4, dim) */
    const double *ease;    /* (n_tracks, n_seg, 2) or NULL (no ease) */
    kb_extrap extrap;
} kb_curve;

/*
 * The nu-th time derivative (0, 1 or 2) of tracks [track_begin, track_end)
 * at t (n_tracks | 1, n_eval; t_stride 0 or n_eval; sorted or not) into
 * out64 or out32 (exactly one), (n_tracks, n_eval, dim).  Validates first
 * (finite t, inside the domain to 1e-12 under KB_EXTRAP_ERROR); writes
 * nothing on error.  May allocate about 90 KB a thread; without it, the
 * same results, more slowly.
 */
kb_status kb_curve_eval(const kb_curve *curve, int nu, const double *t,
                        ptrdiff_t n_eval, ptrdiff_t t_stride,
                        ptrdiff_t track_begin, ptrdiff_t track_end,
                        double *out64, float *out32, kb_error *err);

/* kb_curve_eval over all tracks on up to n_threads threads (same outputs). */
kb_status kb_curve_eval_threaded(const kb_curve *curve, int nu, const double *t,
                                 ptrdiff_t n_eval, ptrdiff_t t_stride, int n_threads,
                                 double *out64, float *out32, kb_error *err);

KB_END_DECLS
#endif /* KBSPLINE_POSITION_H */
