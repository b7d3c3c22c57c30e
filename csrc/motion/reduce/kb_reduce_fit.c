/* kb_reduce_fit.c -- the least-squares fit of tangent keys' tangents (each key's own:
 * it shapes only the two segments beside it), and the refits of the keys near a drop. */
#include <float.h>
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

/* The part of a fit that moves: the tangents of keys [lo, hi] (the others
 * fixed) against the frames [first, last] they shape. */
typedef struct {
    ptrdiff_t lo, hi, first, last;
} fit_range;

#define KEY_MOVES(k, r) ((k) >= (r).lo && (k) <= (r).hi)

/* The frames of range r a fit weighs: up to FIT_PER_SEGMENT of each
 * segment, evenly spaced (the drops check every frame); how many. */
static ptrdiff_t weigh_frames(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K,
                              fit_range r, fit_space *w)
{
    ptrdiff_t m = 0;
    for (ptrdiff_t s = 0; s + 1 < K; s++) {
        w->seg_start[s] = m;
        ptrdiff_t start = keys[s], inner = keys[s + 1] - start - 1;
        ptrdiff_t count = inner > FIT_PER_SEGMENT ? FIT_PER_SEGMENT : inner;
        for (ptrdiff_t i = 0; i < count; i++) {
            ptrdiff_t f = start + 1 + (inner == count ? i : (2 * i + 1) * inner / (2 * count));
            if (f < r.first || f > r.last)
                continue;
            w->at[m] = f;
            w->at_times[m++] = jt->times[f];
        }
    }
    w->seg_start[K - 1] = m;
    return m;
}

/* The normal equations of the keys that move, J^T J step = -J^T r.  A weighed frame
 * moves by h (b0 dT0 + b1 dT1) with its segment's tangents: Hermite bases b0 = u (1 - u)^2,
 * b1 = -u^2 (1 - u) (into w->basis), h the duration times scale (the rotation's residual
 * is twice its log).  One tridiagonal matrix serves all three components; a fixed
 * key's gradient is not solved for. */
static void normal_equations(const double *times, const ptrdiff_t *keys, ptrdiff_t K,
                             double scale, const double *residual, fit_range r, fit_space *w)
{
    memset(w->diag, 0, (size_t)K * sizeof(double));
    memset(w->off, 0, (size_t)K * sizeof(double));
    memset(w->gradient, 0, (size_t)(3 * K) * sizeof(double));
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        const double t0 = times[keys[seg]], dt = times[keys[seg + 1]] - t0;
        double sum[3] = {0.0, 0.0, 0.0}, r0[3] = {0.0, 0.0, 0.0}, r1[3] = {0.0, 0.0, 0.0};
        for (ptrdiff_t j = w->seg_start[seg]; j < w->seg_start[seg + 1]; j++) {
            double u = (w->at_times[j] - t0) / dt, v = 1.0 - u;
            double b0 = u * v * v, b1 = -u * u * v;
            w->basis[2 * j] = b0;
            w->basis[2 * j + 1] = b1;
            sum[0] += b0 * b0;
            sum[1] += b0 * b1;
            sum[2] += b1 * b1;
            for (int c = 0; c < 3; c++) {
                r0[c] += b0 * residual[3 * j + c];
                r1[c] += b1 * residual[3 * j + c];
            }
        }
        const double h = scale * dt, hh = h * h;
        const int from = KEY_MOVES(seg, r), to = KEY_MOVES(seg + 1, r);
        w->h[seg] = h;
        for (int c = 0; c < 3; c++) {
            w->gradient[3 * seg + c] += (from ? h : 0.0) * r0[c];
            w->gradient[3 * seg + 3 + c] += (to ? h : 0.0) * r1[c];
        }
        if (w->seg_start[seg] == w->seg_start[seg + 1])  /* no frame weighed */
            continue;
        if (from)
            w->diag[seg] += sum[0] * hh;
        if (to)
            w->diag[seg + 1] += sum[2] * hh;
        if (from && to)
            w->off[seg + 1] += sum[1] * hh;
    }
    double trace = 0.0;  /* the damping's weights: the diagonal, kept off zero */
    for (ptrdiff_t k = 0; k < K; k++)
        trace += w->diag[k];
    w->floor = 1e-12 * (trace / (double)K + 1e-300);
}

/* The damped step of the moving keys into w->step, (N + damping (diag(N) + floor)) step
 * = -gradient, by LDL^T of the tridiagonal N per component; 0 where not positive definite. */
static int tangent_solve(fit_space *w, fit_range r, double damping)
{
    double *inv_d = w->inv_d, *l = w->l, *x = w->step;
    for (ptrdiff_t k = r.lo; k <= r.hi; k++) {
        double d = w->diag[k] + damping * (w->diag[k] + w->floor);
        if (k > r.lo) {
            l[k] = w->off[k] * inv_d[k - 1];
            d -= w->off[k] * l[k];
        }
        if (!(d > 0 && d <= DBL_MAX))  /* positive and finite */
            return 0;
        inv_d[k] = 1.0 / d;
        for (int c = 0; c < 3; c++) {
            x[3 * k + c] = -w->gradient[3 * k + c];
            if (k > r.lo)
                x[3 * k + c] -= l[k] * x[3 * k - 3 + c];
        }
    }
    for (ptrdiff_t k = r.hi; k >= r.lo; k--)  /* L^T x = D^-1 y */
        for (int c = 0; c < 3; c++)
            x[3 * k + c] = k < r.hi ? x[3 * k + c] * inv_d[k] - l[k + 1] * x[3 * k + 3 + c]
                                    : x[3 * k + c] * inv_d[k];
    return 1;
}

/* The model's residual after the step (w->step) into moved: each moving
 * key's step times h and its basis, in its two segments. */
static void model_residual(ptrdiff_t K, fit_range r, const fit_space *w, const double *residual,
                           double *moved)
{
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        const double h = w->h[seg], *step = w->step + 3 * seg;
        double T0[3], T1[3];
        for (int c = 0; c < 3; c++) {
            T0[c] = KEY_MOVES(seg, r) ? h * step[c] : 0.0;
            T1[c] = KEY_MOVES(seg + 1, r) ? h * step[3 + c] : 0.0;
        }
        for (ptrdiff_t j = w->seg_start[seg]; j < w->seg_start[seg + 1]; j++)
            for (int c = 0; c < 3; c++)
                moved[3 * j + c] = residual[3 * j + c] + w->basis[2 * j] * T0[c]
                                 + w->basis[2 * j + 1] * T1[c];
    }
}

/* One channel's tangents by one Levenberg-Marquardt step on the residual's linear
 * model, damped by FIT_DAMPING (holding a poorly determined tangent near where it
 * was); *worst the model's largest residual at the weighed frames after it (0: none). */
static kb_status model_fit(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                           ptrdiff_t K, double *tcb, fit_range r, fit_space *w, space *s,
                           double *worst, kb_error *err)
{
    const ptrdiff_t frames = weigh_frames(jt, keys, K, r, w);
    *worst = 0.0;
    kb_status status = kb_rd_prepare_keys(jt, rotation, keys, K, tcb, w->at_times, frames, s, err);
    if (status == KB_OK)
        status = kb_rd_spline_errors(jt, rotation, K, tcb, w->at, w->at_times, 0, frames, NULL,
                                     s->residual, s, err);
    if (status != KB_OK || !frames)
        return status;
    normal_equations(jt->times, keys, K, rotation ? 2.0 : 1.0, s->residual, r, w);
    const double *model = s->residual;
    if (tangent_solve(w, r, FIT_DAMPING)) {
        model_residual(K, r, w, s->residual, s->moved);
        model = s->moved;
        for (ptrdiff_t i = 3 * r.lo; i < 3 * r.hi + 3; i++)
            tcb[i] += w->step[i];
    }
    for (ptrdiff_t i = 0; i < 3 * frames; i += 3)
        *worst = larger(*worst, model[i] * model[i] + model[i + 1] * model[i + 1]
                                    + model[i + 2] * model[i + 2]);
    *worst = sqrt(*worst);
    return status;
}

/* The bytes of a fit_space of F frames (kb_rd_fit_place). */
size_t kb_rd_fit_bytes(ptrdiff_t F)
{
    return (size_t)F * (15 * sizeof(double) + 2 * sizeof(ptrdiff_t));
}

/* A fit_space for F frames in kb_rd_fit_bytes(F) at d (aligned for doubles). */
void kb_rd_fit_place(fit_space *w, ptrdiff_t F, double *d)
{
    size_t n = (size_t)F;
    w->basis = d;
    w->diag = w->basis + 2 * n;
    w->off = w->diag + n;
    w->inv_d = w->off + n;
    w->l = w->inv_d + n;
    w->h = w->l + n;
    w->gradient = w->h + n;
    w->step = w->gradient + 3 * n;
    w->at_times = w->step + 3 * n;
    w->at = (ptrdiff_t *)(w->at_times + n);
    w->seg_start = w->at + n;
}

/* Fits again the keys within `near` of a marked one, each run on a window
 * of keys around it; model_worst (F, 2; NULL to skip) each run's model error. */
kb_status kb_rd_refit_near(joint_fit *j, double *const tcb[2], const unsigned char *mark,
                           ptrdiff_t near, double *model_worst, kb_error *err)
{
    const ptrdiff_t K = j->K;
    kb_status status = KB_OK;
    for (ptrdiff_t i = 0; i < K && status == KB_OK; i++) {
        if (!mark[i])
            continue;
        ptrdiff_t lo = i >= near ? i - near : 0, hi = i + near;
        for (ptrdiff_t k = i + 1; k < K && k <= hi + 1; k++)  /* runs that touch merge */
            if (mark[k])
                hi = k + near;
        hi = hi < K - 1 ? hi : K - 1;
        i = hi;
        /* one key beyond: a tangent key's tangent hangs on no neighbour */
        ptrdiff_t a = lo >= 1 ? lo - 1 : 0, b = hi + 1 < K - 1 ? hi + 1 : K - 1;
        fit_range r = {lo - a, hi - a, j->keys[a], j->keys[b]};
        double worst[2] = {0.0, 0.0};
        for (int c = 0; c < j->channels && status == KB_OK; c++)
            status = model_fit(j->jt, c == 0, j->keys + a, b - a + 1, tcb[c] + 3 * a, r, &j->w,
                               &j->s, worst + c, err);
        for (ptrdiff_t k = lo; model_worst && k <= hi; k++)
            memcpy(model_worst + 2 * k, worst, sizeof worst);
    }
    return status;
}

/* Fritsch and Butland's mean of channel ch's steps per time either side of frame f, as
 * PCHIP takes it (zero at a hold's edge); the rotation's steps are short-arc logs. */
void kb_rd_monotone_tangent(const kb_reduce_joint *jt, int ch, ptrdiff_t f, double *tangent)
{
    const double *t = jt->times + f, h0 = t[0] - t[-1], h1 = t[1] - t[0];
    const double *q = jt->rotations + 4 * f, *x = jt->translations + 3 * f;
    double before[3], after[3];
    if (ch == 0) {
        short_log(q - 4, q, before);
        short_log(q, q + 4, after);
    } else {
        for (int c = 0; c < 3; c++) {
            before[c] = x[c] - x[c - 3];
            after[c] = x[3 + c] - x[c];
        }
    }
    for (int c = 0; c < 3; c++)
        tangent[c] = fritsch_butland(before[c] / h0, after[c] / h1, 2.0 * h1 + h0, h1 + 2.0 * h0);
}

/* Before refitting a drop's neighbours m and m + 1: a rotation tangent turning over a
 * radian on the longer segment restarts from kb_rd_monotone_tangent (beyond the refit's
 * log-space model otherwise). */
void kb_rd_restart_far(joint_fit *j, ptrdiff_t m)
{
    const kb_reduce_joint *jt = j->jt;
    double dt = jt->times[j->keys[m + 1]] - jt->times[j->keys[m]];
    for (ptrdiff_t k = m; k <= m + 1; k++) {
        ptrdiff_t f = j->keys[k];
        double *T = j->tcb[0] + 3 * k;
        double turn = sqrt(T[0] * T[0] + T[1] * T[1] + T[2] * T[2]) * dt;
        if (f > 0 && f + 1 < jt->n_frames && turn > 1.0)
            kb_rd_monotone_tangent(jt, 0, f, T);
    }
}
