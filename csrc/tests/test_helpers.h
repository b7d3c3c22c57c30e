/* test_helpers.h -- building single tracks for the C tests. */
#ifndef TEST_HELPERS_H
#define TEST_HELPERS_H

#include "kbspline/kbspline.h"

#define MAXK 16
#define MAXD 3

/* One track with up to MAXK keys and scalar TCB / ease. */
typedef struct {
    double times[MAXK], values[MAXK * MAXD];
    double tension[MAXK], continuity[MAXK], bias[MAXK], ease_from[MAXK], ease_to[MAXK];
    double start[MAXD], end[MAXD];
    double tin[MAXK * MAXD], tout[MAXK * MAXD], coef[MAXK * 4 * MAXD], ease[MAXK * 2];
    kb_tcb_keys keys;
    kb_curve curve;
} track;

/* Fills the keys of `tr` (parameters zero) and points its structs at them. */
static inline void track_init(track *tr, ptrdiff_t n_keys, ptrdiff_t dim,
                              const double *times, const double *values,
                              kb_timing timing, kb_ends ends)
{
    for (ptrdiff_t i = 0; i < n_keys; i++) {
        tr->times[i] = times[i];
        tr->tension[i] = tr->continuity[i] = tr->bias[i] = 0.0;
        tr->ease_from[i] = tr->ease_to[i] = 0.0;
        for (ptrdiff_t j = 0; j < dim; j++)
            tr->values[i * dim + j] = values[i * dim + j];
    }
    for (ptrdiff_t j = 0; j < MAXD; j++)
        tr->start[j] = tr->end[j] = 0.0;
    kb_tcb_keys k = {
        1, n_keys, dim, {tr->times, 0}, tr->values,
        {tr->tension, 0}, {tr->continuity, 0}, {tr->bias, 0},
        {tr->ease_from, 0}, {tr->ease_to, 0}, {tr->start, 0}, {tr->end, 0},
        timing, ends, NULL, NULL};
    tr->keys = k;
}

/* Builds `tr`; its curve evaluates with `extrap`. */
static inline kb_status track_build(track *tr, kb_extrap extrap, int with_ease)
{
    kb_error err;
    kb_status s = kb_tcb_build(&tr->keys, tr->tin, tr->tout, tr->coef,
                               with_ease ? tr->ease : NULL, &err);
    ptrdiff_t first = kb_first_segment_key(tr->keys.ends);
    kb_curve c = {1, kb_num_segments(tr->keys.ends, tr->keys.n_keys), tr->keys.dim,
                  tr->times + first, 0, tr->coef, with_ease ? tr->ease : NULL, extrap};
    tr->curve = c;
    return s;
}

/* The nu-th derivative of track `tr` at one time, into out (dim,). */
static inline kb_status track_eval(const track *tr, int nu, double t, double *out)
{
    kb_error err;
    return kb_curve_eval(&tr->curve, nu, &t, 1, 0, 0, 1, out, NULL, &err);
}

#endif
