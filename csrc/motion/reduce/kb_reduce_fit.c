/*
 * kb_reduce_fit.c -- the least-squares fit of tangent keys' tangents
 * (each key's own tangent, so a key shapes only the two segments beside
 * it), and the refits of the keys near a drop.
 */
#include <float.h>
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

/* The damped normal equations of tangent keys: three tridiagonal systems
 * (a component each, 3 apart), solved by LDL^T; 0 where not positive definite. */
static int tangent_solve(const fit_space *w, ptrdiff_t first, ptrdiff_t last, double damping)
{
    double *L = w->chol, *x = w->step;  /* L[i * BAND] = 1 / D(i), L[i * BAND + 3] = L(i, i - 3) */
    const double *N = w->normal;
    /* the factor and L y = -g row by row (a failed factor's rows of y are
     * written again by the next solve, and only those) */
    for (ptrdiff_t i = first; i < last; i++) {
        double d = N[i * BAND] + damping * w->diagonal[i], y = -w->gradient[i];
        if (i - first >= 3) {
            L[i * BAND + 3] = N[i * BAND + 3] * L[(i - 3) * BAND];
            d -= N[i * BAND + 3] * L[i * BAND + 3];
            y -= L[i * BAND + 3] * x[i - 3];
        }
        if (!(d > 0 && d <= DBL_MAX))  /* positive and finite */
            return 0;
        L[i * BAND] = 1.0 / d;
        x[i] = y;
    }
    for (ptrdiff_t i = last - 1; i >= first; i--)  /* L^T x = D^-1 y */
        x[i] = i + 3 < last ? x[i] * L[i * BAND] - L[(i + 3) * BAND + 3] * x[i + 3]
                            : x[i] * L[i * BAND];
    return 1;
}

static double sum_squares(const double *x, ptrdiff_t n)
{
    double s = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        s += x[i] * x[i];
    return s;
}

/* The part of a fit that moves: the TCB of keys [lo, hi] (the others fixed)
 * against the frames [first, last] they shape. */
typedef struct {
    ptrdiff_t lo, hi, first, last;
} fit_range;

/* The frames of range r a fit weighs: up to w->per_segment of each
 * segment, evenly spaced (the drops check every frame); how many. */
static ptrdiff_t weigh_frames(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K,
                              fit_range r, fit_space *w)
{
    ptrdiff_t m = 0;
    for (ptrdiff_t s = 0; s + 1 < K; s++) {
        w->seg_start[s] = m;
        ptrdiff_t start = keys[s], inner = keys[s + 1] - start - 1;
        ptrdiff_t count = inner > w->per_segment ? w->per_segment : inner;
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

/* Each segment's chord in its tangents' space and duration, as w->chord
 * and w->dt: the rotation's logs as kb_rd_prepare_keys took them (s->chords),
 * the translation's differences here. */
static void chords(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys, ptrdiff_t K,
                   const space *s, fit_space *w)
{
    if (rotation) {
        w->chord = s->chords.tchord;
        w->dt = s->chords.dt;
        return;
    }
    w->chord = w->chord_store;
    w->dt = w->dt_store;
    for (ptrdiff_t i = 0; i + 1 < K; i++) {
        const double *a = jt->translations + 3 * keys[i], *b = jt->translations + 3 * keys[i + 1];
        w->dt_store[i] = jt->times[keys[i + 1]] - jt->times[keys[i]];
        for (int c = 0; c < 3; c++)
            w->chord_store[3 * i + c] = b[c] - a[c];
    }
}

/* Each weighed frame's Hermite bases of its segment's start and end
 * tangents (per u), h0 = u (1 - u)^2 and h1 = -u^2 (1 - u), into w->basis,
 * and each segment's sums of h0^2, h0 h1 and h1^2 into w->sums: the curve
 * at a frame moves by h0 dT0 + h1 dT1 as the tangents do. */
static void tangent_bases(const double *times, const ptrdiff_t *keys, ptrdiff_t K, fit_space *w)
{
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        double t0 = times[keys[seg]], *sum = w->sums + 3 * seg;
        sum[0] = sum[1] = sum[2] = 0.0;
        for (ptrdiff_t j = w->seg_start[seg]; j < w->seg_start[seg + 1]; j++) {
            double u = (w->at_times[j] - t0) / w->dt[seg], v = 1.0 - u;
            double h0 = u * v * v, h1 = -u * u * v;
            w->basis[2 * j] = h0;
            w->basis[2 * j + 1] = h1;
            sum[0] += h0 * h0;
            sum[1] += h0 * h1;
            sum[2] += h1 * h1;
        }
    }
}

/* Whether key k moves in a fit of range r (a tangent key's end has its tangent). */
#define KEY_MOVES(k, r) ((k) >= (r).lo && (k) <= (r).hi)

/* Segment seg's share of J^T J: h times the identity per tangent, so only
 * the diagonal and the two keys' like components (3 apart) are not zero. */
static void tangent_normal(ptrdiff_t seg, const double *sum, double h, int rows_from,
                           int rows_to, fit_space *w)
{
    const double hh = h * h;
    for (int a = rows_from; a < rows_to; a++)
        w->normal[(3 * seg + a) * BAND] += (a < 3 ? sum[0] : sum[2]) * hh;
    for (int c = 0; rows_from == 0 && rows_to == 6 && c < 3; c++)
        w->normal[(3 * seg + 3 + c) * BAND + 3] += sum[1] * hh;
}

/* The normal matrix J^T J (lower band) and each segment's slopes, h times the
 * identity for each of its keys that moves, else zero: the Hermite cubic is
 * linear in its tangents (the rotation taken as one in log space; scale 2:
 * twice the log). */
static void closed_jacobian(ptrdiff_t K, double scale, fit_range r, fit_space *w)
{
    memset(w->normal, 0, (size_t)(3 * K * BAND) * sizeof(double));
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        const double h = scale * w->dt[seg];
        int from = KEY_MOVES(seg, r), to = KEY_MOVES(seg + 1, r);
        w->slope[2 * seg] = from ? h : 0.0;
        w->slope[2 * seg + 1] = to ? h : 0.0;
        if (w->seg_start[seg] != w->seg_start[seg + 1])  /* frames weighed: a share of J^T J */
            tangent_normal(seg, w->sums + 3 * seg, h, from ? 0 : 3, to ? 6 : 3, w);
    }
}

/* The gradient J^T r at the frames weighed (closed_jacobian): per segment,
 * its tangents' derivatives against the residuals summed with the bases
 * as weights.  A fixed key's rows stay zero, so its step is zero.  Tangent
 * keys' rows take their own component's product alone, the others' being
 * zeros (at a residual not finite, NaN, where no step lowers the error). */
static void gradient(ptrdiff_t K, const double *residual, fit_space *w)
{
    memset(w->gradient, 0, (size_t)(3 * K) * sizeof(double));
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        double r0[3] = {0, 0, 0}, r1[3] = {0, 0, 0};
        for (ptrdiff_t j = w->seg_start[seg]; j < w->seg_start[seg + 1]; j++)
            for (int c = 0; c < 3; c++) {
                r0[c] += w->basis[2 * j] * residual[3 * j + c];
                r1[c] += w->basis[2 * j + 1] * residual[3 * j + c];
            }
        for (int a = 0; a < 3; a++) {  /* h I: see tangent_normal */
            w->gradient[3 * seg + a] += w->slope[2 * seg] * r0[a];
            w->gradient[3 * seg + 3 + a] += w->slope[2 * seg + 1] * r1[a];
        }
    }
}

/* What a fit of one channel works on: its rows that move [first, last)
 * of n, its m residuals (three per frame weighed, in s->residual at the
 * TCB it starts from) and their squared sum. */
typedef struct {
    ptrdiff_t n, m, first, last;
    double error;
} fit_problem;

/* A fit's start (for fit_channel and model_fit): the frames it weighs,
 * the keys prepared, the residual at tcb, each segment's chord and the
 * frames' bases; 0 where there is nothing to fit (no key that moves, no
 * frame between keys to weigh) or *status is not KB_OK. */
static int fit_begin(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                     ptrdiff_t K, const double *tcb, fit_range r, fit_space *w, space *s,
                     fit_problem *p, kb_status *status, kb_error *err)
{
    ptrdiff_t frames = weigh_frames(jt, keys, K, r, w);
    p->n = 3 * K;
    p->m = 3 * frames;
    /* the keys stay: their chords and the frames' places are taken once */
    *status = kb_rd_prepare_keys(jt, rotation, keys, K, tcb, w->at_times, frames, s, err);
    if (*status == KB_OK)
        *status = kb_rd_spline_errors(jt, rotation, K, tcb, w->at, w->at_times, 0, frames, NULL,
                                s->residual, s, err);
    p->error = sum_squares(s->residual, p->m);
    chords(jt, rotation, keys, K, s, w);
    tangent_bases(jt->times, keys, K, w);
    p->first = 3 * r.lo;  /* the rows of the keys that move */
    p->last = 3 * (r.hi < K - 1 ? r.hi + 1 : K);
    memset(w->step, 0, (size_t)p->n * sizeof(double));
    return *status == KB_OK && p->first < p->last && frames;
}

/* The normal equations' damping weights (their diagonal, kept off zero). */
static void damping_weights(const fit_problem *p, fit_space *w)
{
    double trace = 0.0;
    for (ptrdiff_t i = 0; i < p->n; i++)
        trace += w->normal[i * BAND];
    for (ptrdiff_t i = 0; i < p->n; i++)
        w->diagonal[i] = w->normal[i * BAND] + 1e-12 * (trace / (double)p->n + 1e-300);
}

/* The damped step from the tangents tcb into
 * w->trial: 1, or 0 where the damped matrix is not positive definite, or
 * -1 where the step is shorter than FIT_SMALLEST_STEP (converged). */
static int damped_trial(const fit_problem *p, const double *tcb, double damping, fit_space *w)
{
    if (!tangent_solve(w, p->first, p->last, damping))
        return 0;
    double largest = 0.0;
    for (ptrdiff_t i = 0; i < p->n; i++) {
        w->trial[i] = tcb[i] + w->step[i];
        largest = larger(largest, fabs(w->trial[i] - tcb[i]));
    }
    return largest < FIT_SMALLEST_STEP ? -1 : 1;
}

/* model_residual with tangent keys, whose change is the tangent's own on
 * both sides of a key and which have no natural ends' terms: the same
 * products and sums, each key's change taken in its two segments. */
static void tangent_model_residual(ptrdiff_t K, const double *from, const double *to,
                                   const double *from_residual, double scale, fit_range r,
                                   const fit_space *w, double *moved)
{
    int moves[2] = {0, KEY_MOVES(0, r)};
    for (ptrdiff_t seg = 0; seg + 1 < K; seg++) {
        const ptrdiff_t first = w->seg_start[seg], last = w->seg_start[seg + 1];
        moves[0] = moves[1];
        moves[1] = KEY_MOVES(seg + 1, r);
        if (!(moves[0] || moves[1])) {  /* nothing moves these frames */
            memcpy(moved + 3 * first, from_residual + 3 * first,
                   (size_t)(3 * (last - first)) * sizeof(double));
            continue;
        }
        const double h = scale * w->dt[seg], *a = from + 3 * seg, *b = to + 3 * seg;
        double T0[3], T1[3];
        for (int c = 0; c < 3; c++) {
            T0[c] = moves[0] ? h * (b[c] - a[c]) : 0.0;
            T1[c] = moves[1] ? h * (b[3 + c] - a[3 + c]) : 0.0;
        }
        for (ptrdiff_t j = first; j < last; j++)
            for (int c = 0; c < 3; c++)
                moved[3 * j + c] = from_residual[3 * j + c] + w->basis[2 * j] * T0[c]
                                 + w->basis[2 * j + 1] * T1[c];
    }
}

/* One channel's tangents fitted by Levenberg-Marquardt steps on the
 * residual's linear model, up to `steps` or a gain below `gain`; *worst
 * (NULL to skip) the model's largest residual at the frames weighed. */
static kb_status model_fit(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                           ptrdiff_t K, double *tcb, fit_range r, int steps, double gain,
                           fit_space *w, space *s, double *worst, kb_error *err)
{
    fit_problem p;
    kb_status status;
    if (worst)
        *worst = 0.0;
    if (!fit_begin(jt, rotation, keys, K, tcb, r, w, s, &p, &status, err))
        return status;
    const double scale = rotation ? 2.0 : 1.0;  /* the residual is twice the rotation's log */
    /* the model's residual starts as the spline's (fit_begin's) */
    double *at = w->model_tcb, *model = s->residual, *moved = s->moved;
    memcpy(at, tcb, (size_t)p.n * sizeof(double));
    double error = p.error, damping = FIT_FIRST_DAMPING;
    int stepped = 0;
    for (int it = 0; it < steps; it++) {
        if (it == 0) {  /* the same at any tangents */
            closed_jacobian(K, scale, r, w);
            damping_weights(&p, w);
        }
        gradient(K, model, w);
        int taken = 0, settled = 0;
        for (; damping < 1e9; damping *= 10) {
            int trial = damped_trial(&p, at, damping, w);
            if (trial < 0) {
                settled = 1;
                break;
            }
            if (!trial)
                continue;
            tangent_model_residual(K, at, w->trial, model, scale, r, w, moved);
            double lower = sum_squares(moved, p.m);
            if (lower < error) {
                settled = error - lower < gain * error;
                memcpy(at, w->trial, (size_t)p.n * sizeof(double));
                double *swap = model;
                model = moved;
                moved = swap;
                error = lower;
                damping = fmax(damping / 3, 1e-9);
                taken = stepped = 1;
                break;
            }
        }
        if (!taken || settled)
            break;
    }
    for (ptrdiff_t i = 0; worst && i < p.m; i += 3)
        *worst = larger(*worst, model[i] * model[i] + model[i + 1] * model[i + 1]
                                   + model[i + 2] * model[i + 2]);
    if (worst)
        *worst = sqrt(*worst);
    if (stepped)
        memcpy(tcb, at, (size_t)p.n * sizeof(double));
    return status;
}

/* The bytes of a fit_space of F frames (kb_rd_fit_place). */
size_t kb_rd_fit_bytes(ptrdiff_t F)
{
    size_t n = (size_t)F;
    return (7 * n + 2 * 3 * n * BAND + 5 * 3 * n + n + 4 * n) * sizeof(double)
           + 2 * n * sizeof(ptrdiff_t);
}

/* A fit_space for jt in kb_rd_fit_bytes(n_frames) at d (aligned for doubles). */
void kb_rd_fit_place(fit_space *w, const kb_reduce_joint *jt, ptrdiff_t per_segment, double *d)
{
    w->per_segment = per_segment;
    size_t n = (size_t)jt->n_frames;
    w->slope = d;
    w->basis = w->slope + 2 * n;
    w->sums = w->basis + 2 * n;
    w->normal = w->sums + 3 * n;
    w->chol = w->normal + 3 * n * BAND;
    w->gradient = w->chol + 3 * n * BAND;
    w->diagonal = w->gradient + 3 * n;
    w->step = w->diagonal + 3 * n;
    w->trial = w->step + 3 * n;
    w->at_times = w->trial + 3 * n;
    w->chord_store = w->at_times + n;
    w->dt_store = w->chord_store + 3 * n;
    w->model_tcb = w->dt_store + n;
    w->at = (ptrdiff_t *)(w->model_tcb + 3 * n);
    w->seg_start = w->at + n;
}


/* Each frame's worst error relative to its tolerance, into s.score (the
 * errors of each channel of finite tolerance in s.angle, s.distance), for
 * these keys and tangents, and the worst of them. */
kb_status kb_rd_fit_score(joint_fit *j, const ptrdiff_t *keys, ptrdiff_t K, double *const tcb[2],
                          double *worst, kb_error *err)
{
    ptrdiff_t F = j->jt->n_frames;
    kb_status status = kb_rd_joint_errors(j->jt, keys, K, tcb[0], j->channels > 1 ? tcb[1] : NULL,
                                          0, F - 1, NULL, &j->s, err);
    *worst = 0.0;
    for (ptrdiff_t f = 0; f < F; f++)
        *worst = larger(*worst, j->s.score[f]);
    return status;
}

/* Fits again the keys within `near` of a marked one, each run on a window
 * of keys around it; model_worst (F, 2; NULL to skip) each run's model error. */
kb_status kb_rd_refit_near(joint_fit *j, double *const tcb[2], const unsigned char *mark,
                           ptrdiff_t near, int steps, double *model_worst, kb_error *err)
{
    const ptrdiff_t K = j->K, beyond = 1;  /* a tangent key's tangent hangs on no neighbour */
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
        ptrdiff_t a = lo >= beyond ? lo - beyond : 0;
        ptrdiff_t b = hi + beyond < K - 1 ? hi + beyond : K - 1;
        fit_range r = {lo - a, hi - a, j->keys[lo >= 1 ? lo - 1 : 0],
                       j->keys[hi + 1 < K - 1 ? hi + 1 : K - 1]};
        double worst[2] = {0.0, 0.0};
        for (int c = 0; c < j->channels && status == KB_OK; c++)
            status = model_fit(j->jt, c == 0, j->keys + a, b - a + 1, tcb[c] + 3 * a, r,
                               FIT_MODEL_STEPS * steps, FIT_MODEL_GAIN, &j->w, &j->s,
                               model_worst ? worst + c : NULL, err);
        for (ptrdiff_t k = lo; model_worst && k <= hi; k++)
            memcpy(model_worst + 2 * k, worst, sizeof worst);
    }
    return status;
}

/* Fritsch and Butland's mean of channel ch's steps per time either side
 * of frame f, per component, as PCHIP takes it (zero at a hold's edge);
 * the rotation's steps are logs on the short arc. */
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

/* Before refitting a drop's neighbours m and m + 1: a rotation tangent that
 * turns more than a radian over the longer segment restarts from
 * kb_rd_monotone_tangent (beyond the refit's log-space model otherwise). */
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

/* Copies keys and TCB without those where drop[i], into the spares;
 * returns how many are left. */
ptrdiff_t kb_rd_without(joint_fit *j, const unsigned char *drop)
{
    ptrdiff_t n = 0;
    ptrdiff_t *keys = j->spare_keys;
    for (ptrdiff_t i = 0; i < j->K; i++) {
        if (drop[i])
            continue;
        keys[n] = j->keys[i];
        for (int c = 0; c < j->channels; c++)
            memcpy(j->spare_tcb[c] + 3 * n, j->tcb[c] + 3 * i, 3 * sizeof(double));
        n++;
    }
    return n;
}

void kb_rd_take_spares(joint_fit *j, ptrdiff_t n)
{
    memcpy(j->keys, j->spare_keys, (size_t)n * sizeof(ptrdiff_t));
    for (int c = 0; c < j->channels; c++)
        memcpy(j->tcb[c], j->spare_tcb[c], (size_t)(3 * n) * sizeof(double));
    j->K = n;
}

