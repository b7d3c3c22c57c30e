/* kb_rot_eval.c -- evaluating squad rotation splines: rotations and their
 * analytic angular velocity and acceleration (built by kb_rot_build.c). */
#include <stdlib.h>

#include "kb_internal.h"
#include "spline/kb_locate.h"
#include "quat/kb_quat.h"
#include "rotation/kb_cumulative.h"

static void store(double *out64, float *out32, ptrdiff_t off, const double *v, int n)
{
    for (int j = 0; j < n; j++) {
        if (out64)
            out64[off + j] = v[j];
        else
            out32[off + j] = (float)v[j];
    }
}

static void store_quat(double *out64, float *out32, ptrdiff_t off, const double *q,
                       int scalar_first)
{
    const double xyzw[4] = {q[1], q[2], q[3], q[0]};
    store(out64, out32, off, scalar_first ? q : xyzw, 4);
}

/* Angular velocity (nu 1) or acceleration (nu 2), world or body frame, from
 * a jet J along e (kb_v4_rates, lane 0: the groups' formula) and the
 * parameter's time derivatives s1, s2; acceleration is zero outside the
 * domain. */
static void rates_from_jet(double J[3][4], double s1, double s2, int nu, int body,
                           int outside, double v[3])
{
    if (nu == 2 && outside) {
        v[0] = v[1] = v[2] = 0.0;
        return;
    }
#if defined(KB_HAVE_VMATH)
    kb_v4 S[3][4], r[3];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++)
            S[k][j] = kb_v4_splat(k < nu + 1 ? J[k][j] : 0.0);
    kb_v4_rates(S, kb_v4_splat(s1), kb_v4_splat(s2), nu, body, r);
    for (int j = 0; j < 3; j++)
        v[j] = r[j][0];
#else
    double qd[4], qc[4], a[4], b[4], qdd[4], qdc[4];
    for (int j = 0; j < 4; j++) {
        qd[j] = J[1][j] * s1;
        qc[j] = j ? -J[0][j] : J[0][j];
        qdd[j] = nu == 2 ? J[2][j] * s1 * s1 + J[1][j] * s2 : 0.0;
        qdc[j] = j ? -qd[j] : qd[j];
    }
    if (nu == 1) {
        kb_qmul(body ? qc : qd, body ? qd : qc, a);
        for (int j = 0; j < 3; j++)
            v[j] = 2.0 * a[j + 1];
        return;
    }
    kb_qmul(body ? qdc : qdd, body ? qd : qc, a);
    kb_qmul(body ? qc : qd, body ? qdd : qdc, b);
    for (int j = 0; j < 3; j++)
        v[j] = 2.0 * a[j + 1] + 2.0 * b[j + 1];
#endif
}

/* The eased parameter of a located query and its time derivatives. */
static void eased(const kb_rot_curve *c, ptrdiff_t tr, const kb_loc *L, double *e,
                  double *s1, double *s2)
{
    const double *ez = c->ease ? c->ease + (tr * c->n_seg + L->seg) * 2 : NULL;
    double de = 1.0, dde = 0.0;
    *e = L->u;
    if (ez)
        kb_ease(L->u, ez[0], ez[1], e, &de, &dde);
    *s1 = de * L->inv_dt;
    *s2 = dde * L->inv_dt * L->inv_dt;
}

/* One query outside the domain by its jet at the end: angular velocity or
 * acceleration (3 values), or a rotation extrapolated linearly (4). */
static void rot_sample(const kb_rot_curve *c, ptrdiff_t tr, const kb_loc *L, int nu,
                       int body, int scalar_first, double *out64, float *out32,
                       ptrdiff_t off)
{
    const ptrdiff_t S = c->n_seg;
    double e, s1, s2, J[3][4], v[3];
    eased(c, tr, L, &e, &s1, &s2);
    const ptrdiff_t i = tr * S + L->seg;
    rot_segment_jet(c->kind ? c->kind[i] : KB_SEG_SQUAD, c->seg + i * KB_ROT_SEG, e, J);
    if (nu == 0) {
        /* linear extrapolation: q(t) = exp(omega tau / 2) q_end */
        double omega[3];
        rates_from_jet(J, s1, s2, 1, 0, L->outside, omega);
        const double half[3] = {0.5 * L->excess * omega[0], 0.5 * L->excess * omega[1],
                                0.5 * L->excess * omega[2]};
        double r[4], q[4];
        kb_qexp(half, r);
        kb_qmul(r, J[0], q);
        store_quat(out64, out32, off, q, scalar_first);
        return;
    }
    rates_from_jet(J, s1, s2, nu, body, L->outside, v);
    store(out64, out32, off, v, 3);
}

/* The query checks are the position curve's. */
static kb_status rot_validate_queries(const kb_rot_curve *c, int nu, const double *t,
                                      ptrdiff_t n_eval, ptrdiff_t t_stride, double *out64,
                                      float *out32, kb_error *err)
{
    if (!c || !c->seg)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    const kb_curve view = {c->n_tracks, c->n_seg, 1, c->knots, c->knots_stride, c->seg,
                           c->ease, c->extrap};
    kb_status s = kb_curve_validate(&view, nu, t, n_eval, t_stride, err);
    if (s == KB_OK && (out64 == NULL) == (out32 == NULL))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    return s;
}

typedef struct {
    const kb_rot_curve *c;
    int nu, body, scalar_first;
    const double *t;
    ptrdiff_t n_eval, t_stride;
    double *out64;
    float *out32;
} rot_job;

/* Up to eight queries of one track inside the domain, evaluated together
 * (they may lie on different segments), then stored: rotations, or for
 * angular rates the jets, with the parameter's time derivatives s1, s2. */
typedef struct {
    int n, mixed;  /* mixed: not all on seg[0] */
    ptrdiff_t off[8], seg[8];
    double e[8], s1[8], s2[8];
} sample_group;

/* The group's values q, or its angular rates w (nu > 0), V (v4 or v8) lanes
 * at a time from loaded vectors: VALUE(ov) and RATES(s1, s2, rv) are the
 * kernel's calls.  The same operations lane by lane at either width, so
 * the same results.  Lanes past g->n (pad_group) repeat the first query
 * and are not kept. */
#define KB_GROUP_RESULTS(V, VALUE, RATES)                                          \
    do {                                                                           \
        kb_##V ev;                                                                 \
        memcpy(&ev, g->e, sizeof ev);                                              \
        if (nu == 0) {                                                             \
            kb_##V ov[4];                                                          \
            VALUE;                                                                 \
            for (int l = 0; l < g->n; l++)                                         \
                for (int j = 0; j < 4; j++)                                        \
                    q[l][j] = ov[j][l];                                            \
        } else {                                                                   \
            kb_##V s1, s2, rv[3];                                                  \
            memcpy(&s1, g->s1, sizeof s1);                                         \
            memcpy(&s2, g->s2, sizeof s2);                                         \
            RATES;                                                                 \
            for (int l = 0; l < g->n; l++)                                         \
                for (int j = 0; j < 3; j++)                                        \
                    w[l][j] = rv[j][l];                                            \
        }                                                                          \
    } while (0)

/* The group's squad values or rates (see KB_GROUP_RESULTS). */
#define KB_SQUAD_GROUP(V)                                                          \
    do {                                                                           \
        kb_##V cv[8], lv[KB_SEGMENT_VECTORS];                                      \
        kb_##V##_load_segments(seg, KB_ROT_SEG, KB_SQUAD_LOGS, g->seg, !g->mixed, cv, lv); \
        KB_GROUP_RESULTS(V, kb_##V##_squad_value(cv, lv, &ev, ov),                 \
                         kb_##V##_squad_rates(cv, lv, &ev, s1, s2, nu, body, rv)); \
    } while (0)

#if defined(KB_HAVE_VMATH) && defined(KB_HAVE_AVX512)
#define KB_HAVE_V8 1
/* Eight at a time with AVX-512 (groups of five to eight; fewer, and any
 * single query, take the four-lane code). */
KB_TARGET_AVX512
static void squad_group8(const double *seg, const sample_group *g, int nu, int body,
                         double q[][4], double w[][3])
{
    KB_SQUAD_GROUP(v8);
}
#endif

/* The group's values or rates on cumulative segments (see
 * KB_GROUP_RESULTS); `far` gets the lanes (a bit each) load_cumulative
 * finds out of the vector sine's range, whose q or w are not valid. */
#define KB_CUMULATIVE_GROUP(V)                                                     \
    do {                                                                           \
        kb_##V cv[KB_CUMULATIVE_VECTORS];                                          \
        far = kb_##V##_load_cumulative(seg, KB_ROT_SEG, g->seg, !g->mixed, cv);    \
        KB_GROUP_RESULTS(V, kb_##V##_cumulative_value(cv, ev, ov),                 \
                         kb_##V##_cumulative_rates(cv, ev, s1, s2, nu, body, rv)); \
    } while (0)

#if defined(KB_HAVE_V8)
KB_TARGET_AVX512
static int cumulative_group8(const double *seg, const sample_group *g, int nu, int body,
                             double q[][4], double w[][3])
{
    int far;
    KB_CUMULATIVE_GROUP(v8);
    return far;
}
#endif

/* The lanes past g->n repeat the first query, so that every lane of a
 * vector loaded from the group holds a legal one. */
static void pad_group(sample_group *g)
{
    for (int l = g->n; l < 8; l++) {
        g->seg[l] = g->seg[0];
        g->e[l] = g->e[0];
        g->s1[l] = g->s1[0];
        g->s2[l] = g->s2[0];
    }
}

/* Up to four of a group's queries (g->n <= 4) on squad segments. */
KB_INLINE void squad_group4(const double *seg, const sample_group *g, int nu, int body,
                            double q[][4], double w[][3])
{
#if defined(KB_HAVE_VMATH)
    KB_SQUAD_GROUP(v4);
#else
    for (int l = 0; l < g->n; l++) {
        const double *rec = seg + g->seg[l] * KB_ROT_SEG;
        double J[3][4];
        if (nu == 0) {
            squad_value(rec, rec + KB_SQUAD_LOGS, g->e[l], q[l]);
        } else {
            squad_jet(rec, rec + KB_SQUAD_LOGS, g->e[l], J);
            rates_from_jet(J, g->s1[l], g->s2[l], nu, body, 0, w[l]);
        }
    }
#endif
}

/* Up to four of a group's queries on cumulative segments; returns the
 * lanes left to cumulative_scalar (without vector extensions, all). */
KB_INLINE int cumulative_group4(const double *seg, const sample_group *g, int nu, int body,
                                double q[][4], double w[][3])
{
#if defined(KB_HAVE_VMATH)
    int far;
    KB_CUMULATIVE_GROUP(v4);
    return far;
#else
    (void)seg, (void)nu, (void)body, (void)q, (void)w;
    return (1 << g->n) - 1;
#endif
}

/* Lane l of a group on a cumulative segment, with the C library's sine and
 * cosine: only for logs too long for the vector sine (its argument
 * reduction is exact to KB_VMATH_MAX_ARG), so that every other query on a
 * cumulative segment takes the lanes' code, alone or in any group. */
static void cumulative_scalar(const double *seg, const sample_group *g, int l, int nu,
                              int body, double q[][4], double w[][3])
{
    const double *rec = seg + g->seg[l] * KB_ROT_SEG;
    double J[3][4];
    if (nu == 0) {
        cumulative_value(rec, rec + KB_CUMULATIVE_LOGS, g->e[l], q[l]);
    } else {
        cumulative_jet(rec, rec + KB_CUMULATIVE_LOGS, g->e[l], J);
        rates_from_jet(J, g->s1[l], g->s2[l], nu, body, 0, w[l]);
    }
}

/* The lanes of g in `lanes` (a bit each), in order from lane 0, padded.
 * Inlined so that it is compiled into flush_group's AVX clone: called
 * there as SSE code, it would run with the AVX registers' upper halves
 * dirty. */
KB_INLINE void take_lanes(const sample_group *g, unsigned lanes, sample_group *out)
{
    out->n = out->mixed = 0;
    for (int l = 0; l < g->n; l++) {
        if (!(lanes >> l & 1))
            continue;
        const int k = out->n++;
        out->off[k] = g->off[l];
        out->seg[k] = g->seg[l];
        out->e[k] = g->e[l];
        out->s1[k] = g->s1[l];
        out->s2[k] = g->s2[l];
        out->mixed |= g->seg[l] != out->seg[0];
    }
    pad_group(out);
}

/* A group whose queries are all on segments of one kind, evaluated and
 * stored: four or eight lanes at a time (a lane's result is the same at
 * either width). */
KB_INLINE void eval_group(const double *seg, sample_group *g, int cumulative, int nu, int body,
                          int scalar_first, double *out64, float *out32)
{
    double q[8][4], w[8][3];
    pad_group(g);
    int far = 0;
#if defined(KB_HAVE_V8)
    if (g->n > 4) {
        if (cumulative)
            far = cumulative_group8(seg, g, nu, body, q, w);
        else
            squad_group8(seg, g, nu, body, q, w);
    } else
#endif
    {
        if (cumulative)
            far = cumulative_group4(seg, g, nu, body, q, w);
        else
            squad_group4(seg, g, nu, body, q, w);
    }
    for (int l = 0; l < g->n; l++) {
        if (far >> l & 1)
            cumulative_scalar(seg, g, l, nu, body, q, w);
        if (nu == 0)
            store_quat(out64, out32, g->off[l], q[l], scalar_first);
        else
            store(out64, out32, g->off[l], w[l], 3);
    }
}

/* A group by the kinds of its segments: all squad or all cumulative (runs
 * of queries, mostly) in one go; a mix (a group across a knot between the
 * kinds) as two groups, each kind in its own lanes. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
__attribute__((target_clones("default", "avx2")))
#endif
static void flush_group(const kb_rot_curve *c, ptrdiff_t tr, sample_group *g, int nu,
                        int body, int scalar_first, double *out64, float *out32)
{
    const double *seg = c->seg + tr * c->n_seg * KB_ROT_SEG;
    const unsigned char *kind = c->kind ? c->kind + tr * c->n_seg : NULL;
    const unsigned all = (1u << g->n) - 1;
    unsigned cumulative = 0;  /* the lanes on cumulative segments, a bit each */
    for (int l = 0; kind && l < g->n; l++)
        cumulative |= (unsigned)(kind[g->seg[l]] == KB_SEG_CUMULATIVE) << l;
    if (cumulative == 0 || cumulative == all) {
        eval_group(seg, g, cumulative != 0, nu, body, scalar_first, out64, out32);
    } else {
        sample_group part;
        take_lanes(g, all & ~cumulative, &part);
        eval_group(seg, &part, 0, nu, body, scalar_first, out64, out32);
        take_lanes(g, cumulative, &part);
        eval_group(seg, &part, 1, nu, body, scalar_first, out64, out32);
    }
    g->n = g->mixed = 0;
}

/* Queries [i0, i1) of track tr: located in `shared` (its entry i - i0)
 * where every track shares knots and times, else here from *hint and the
 * track's grid. */
static void track_queries(const rot_job *j, ptrdiff_t tr, ptrdiff_t i0, ptrdiff_t i1,
                          const kb_loc *shared, ptrdiff_t *hint, const seg_grid *grid)
{
    const kb_rot_curve *c = j->c;
    const ptrdiff_t width = j->nu == 0 ? 4 : 3;
    const int group = kb_cpu_avx512() ? 8 : 4;  /* see squad_group8 */
    const double *k = c->knots + tr * c->knots_stride;
    const double *tt = j->t + tr * j->t_stride;
    sample_group g;  /* its lanes are written before they are read */
    g.n = g.mixed = 0;
    for (ptrdiff_t i = i0; i < i1; i++) {
        kb_loc L;
        if (shared) {
            L = shared[i - i0];
        } else {
            *hint = grid_hint(grid, k, c->n_seg, tt[i], *hint);
            locate(k, c->n_seg, c->extrap, tt[i], hint, &L);
        }
        const ptrdiff_t off = (tr * j->n_eval + i) * width;
        if (!L.outside) {
            g.off[g.n] = off;
            g.seg[g.n] = L.seg;
            g.mixed |= L.seg != g.seg[0];
            eased(c, tr, &L, &g.e[g.n], &g.s1[g.n], &g.s2[g.n]);
            if (++g.n == group)
                flush_group(c, tr, &g, j->nu, j->body, j->scalar_first, j->out64, j->out32);
        } else {
            rot_sample(c, tr, &L, j->nu, j->body, j->scalar_first, j->out64, j->out32, off);
        }
    }
    if (g.n)
        flush_group(c, tr, &g, j->nu, j->body, j->scalar_first, j->out64, j->out32);
}

/* Queries located at a time when every track shares knots and times. */
#define KB_ROT_BLOCK 256

/* A block of queries located once for every track (shared knots and
 * times), with their parameters and segments side by side for the values'
 * runs of eight. */
typedef struct {
    ptrdiff_t n;
    kb_loc loc[KB_ROT_BLOCK];
    double u[KB_ROT_BLOCK], inv_dt[KB_ROT_BLOCK];
    ptrdiff_t seg[KB_ROT_BLOCK];
    int inside_from[KB_ROT_BLOCK];  /* queries inside the domain from i on */
} rot_block;

#if defined(KB_HAVE_V8)
/* Eight quaternions, components (w, x, y, z) in ov[0 .. 4), stored from
 * out64 / out32 + off one after another. */
KB_INLINE void store_quats8(const kb_v8 *ov, int scalar_first, double *out64, float *out32,
                            ptrdiff_t off)
{
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
    if (out64) {  /* rows from the components: two zips of pairs */
        const kb_v8 *c = ov, xyzw[4] = {ov[1], ov[2], ov[3], ov[0]};
        if (!scalar_first)
            c = xyzw;
#define KB_ZIP(a, b, h)                                                                    \
    __builtin_shufflevector(a, b, 4 * h, 4 * h + 8, 4 * h + 1, 4 * h + 9, 4 * h + 2,       \
                            4 * h + 10, 4 * h + 3, 4 * h + 11)
#define KB_PAIRS(a, b, h)                                                                  \
    __builtin_shufflevector(a, b, 4 * h, 4 * h + 1, 4 * h + 8, 4 * h + 9, 4 * h + 2,       \
                            4 * h + 3, 4 * h + 10, 4 * h + 11)
        const kb_v8 ab0 = KB_ZIP(c[0], c[1], 0), cd0 = KB_ZIP(c[2], c[3], 0);
        const kb_v8 ab1 = KB_ZIP(c[0], c[1], 1), cd1 = KB_ZIP(c[2], c[3], 1);
        const kb_v8 rows[4] = {KB_PAIRS(ab0, cd0, 0), KB_PAIRS(ab0, cd0, 1),
                               KB_PAIRS(ab1, cd1, 0), KB_PAIRS(ab1, cd1, 1)};
#undef KB_ZIP
#undef KB_PAIRS
        memcpy(out64 + off, rows, sizeof rows);
        return;
    }
#endif
#endif
    for (int l = 0; l < 8; l++) {
        const double q[4] = {ov[0][l], ov[1][l], ov[2][l], ov[3][l]};
        store_quat(out64, out32, off + 4 * l, q, scalar_first);
    }
}

/* Eight 3-vectors, components in v[0 .. 3), stored from out64 / out32 +
 * off one after another. */
KB_INLINE void store_vectors8(const kb_v8 *v, double *out64, float *out32, ptrdiff_t off)
{
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
    if (out64) {  /* (x, y) pairs placed, then z into the gaps */
        const kb_v8 x = v[0], y = v[1], z = v[2];
        const kb_v8 t0 = __builtin_shufflevector(x, y, 0, 8, 0, 1, 9, 1, 2, 10);
        const kb_v8 t1 = __builtin_shufflevector(x, y, 0, 3, 11, 0, 4, 12, 0, 5);
        const kb_v8 t2 = __builtin_shufflevector(x, y, 13, 0, 6, 14, 0, 7, 15, 0);
        const kb_v8 rows[3] = {__builtin_shufflevector(t0, z, 0, 1, 8, 3, 4, 9, 6, 7),
                               __builtin_shufflevector(t1, z, 10, 1, 2, 11, 4, 5, 12, 7),
                               __builtin_shufflevector(t2, z, 0, 13, 2, 3, 14, 5, 6, 15)};
        memcpy(out64 + off, rows, sizeof rows);
        return;
    }
#endif
#endif
    for (int l = 0; l < 8; l++) {
        const double w[3] = {v[0][l], v[1][l], v[2][l]};
        store(out64, out32, off + 3 * l, w, 3);
    }
}

/* Queries [i0, i0 + b->n) of track tr, without easing: runs of eight
 * queries inside the domain on squad segments eight lanes at a time,
 * straight from the block (the group's kernels, bit for bit, without its
 * copies; a segment's broadcasts kept from run to run), the rest by
 * track_queries.  Uneased, e = u, de/dt = 1 / dt and d2e/dt2 = 0. */
KB_TARGET_AVX512
static void track_block8(const rot_job *j, ptrdiff_t tr, ptrdiff_t i0, const rot_block *b)
{
    const kb_rot_curve *c = j->c;
    const double *seg = c->seg + tr * c->n_seg * KB_ROT_SEG;
    const unsigned char *kind = c->kind ? c->kind + tr * c->n_seg : NULL;
    const int nu = j->nu;
    kb_v8 cv[8], lv[KB_SEGMENT_VECTORS];
    memset(cv, 0, sizeof cv);  /* loaded below before use; compilers cannot tell */
    memset(lv, 0, sizeof lv);
    ptrdiff_t loaded = -1;     /* the segment in every lane of cv, lv */
    ptrdiff_t done = 0;        /* queries before it are stored */
    for (ptrdiff_t i = 0; i + 8 <= b->n;) {
        int one = 1, squad = b->inside_from[i] >= 8;
        for (int l = 0; squad && l < 8; l++) {
            one &= b->seg[i + l] == b->seg[i];
            squad &= !kind || kind[b->seg[i + l]] != KB_SEG_CUMULATIVE;
        }
        if (!squad) {
            i++;
            continue;
        }
        track_queries(j, tr, i0 + done, i0 + i, b->loc + done, NULL, NULL);
        if (!one || b->seg[i] != loaded) {
            kb_v8_load_segments(seg, KB_ROT_SEG, KB_SQUAD_LOGS, b->seg + i, one, cv, lv);
            loaded = one ? b->seg[i] : -1;
        }
        const ptrdiff_t at = tr * j->n_eval + i0 + i;
        kb_v8 ev;
        memcpy(&ev, b->u + i, sizeof ev);
        if (nu == 0) {
            kb_v8 ov[4];
            kb_v8_squad_value(cv, lv, &ev, ov);
            store_quats8(ov, j->scalar_first, j->out64, j->out32, at * 4);
        } else {
            kb_v8 s1, rv[3];
            memcpy(&s1, b->inv_dt + i, sizeof s1);
            kb_v8_squad_rates(cv, lv, &ev, s1, kb_v8_splat(0.0), nu, j->body, rv);
            store_vectors8(rv, j->out64, j->out32, at * 3);
        }
        i += 8;
        done = i;
    }
    track_queries(j, tr, i0 + done, i0 + b->n, b->loc + done, NULL, NULL);
}
#endif

/* Queries [i0, i0 + b->n) of track tr from block b. */
static void track_block(const rot_job *j, ptrdiff_t tr, ptrdiff_t i0, const rot_block *b)
{
#if defined(KB_HAVE_V8)
    if (!j->c->ease && kb_cpu_avx512()) {
        track_block8(j, tr, i0, b);
        return;
    }
#endif
    track_queries(j, tr, i0, i0 + b->n, b->loc, NULL, NULL);
}

static void rot_range(void *ctx, ptrdiff_t begin, ptrdiff_t end)
{
    const rot_job *j = ctx;
    const kb_rot_curve *c = j->c;
    const ptrdiff_t width = j->nu == 0 ? 4 : 3;
    if (begin >= end || j->n_eval == 0)
        return;  /* no queries to read: a batch of no tracks may have none */
    /* from the first track's queries and one track's values (shared queries
     * are located once for all tracks): a hint, so any track's will do.
     * None for sorted queries, each found from the one before in O(1):
     * with knots of their own, every track would build one for nothing. */
    const double *t0 = j->t + begin * j->t_stride;
    seg_grid grid = {0};
    if (!queries_ascend(t0, j->n_eval))
        grid_alloc(&grid, c->n_seg, t0, j->n_eval, j->n_eval * width);
    if (c->knots_stride == 0 && j->t_stride == 0) {
        rot_block *b = malloc(sizeof *b);
        if (b) {
            ptrdiff_t hint = 0;
            grid_build(&grid, c->knots, c->n_seg);
            /* one track's records past about a megabyte, queried at random:
             * asked for as the block is located, before they are read */
            const double *first = c->seg + begin * c->n_seg * KB_ROT_SEG;
            const int large = (double)c->n_seg * KB_ROT_SEG * sizeof *first > (double)(1 << 20);
            for (ptrdiff_t i0 = 0; i0 < j->n_eval; i0 += KB_ROT_BLOCK) {
                b->n = j->n_eval - i0 < KB_ROT_BLOCK ? j->n_eval - i0 : KB_ROT_BLOCK;
                const int ahead = large && !queries_ascend(j->t + i0, b->n);
                for (ptrdiff_t i = 0; i < b->n; i++) {
                    kb_loc *L = &b->loc[i];
                    hint = grid_hint(&grid, c->knots, c->n_seg, j->t[i0 + i], hint);
                    locate(c->knots, c->n_seg, c->extrap, j->t[i0 + i], &hint, L);
                    b->u[i] = L->u;
                    b->inv_dt[i] = L->inv_dt;
                    b->seg[i] = L->seg;
                    if (ahead)
                        kb_prefetch(first + L->seg * KB_ROT_SEG, KB_ROT_SEG * sizeof *first);
                }
                for (ptrdiff_t i = b->n - 1; i >= 0; i--)
                    b->inside_from[i] =
                        b->loc[i].outside ? 0 : 1 + (i + 1 < b->n ? b->inside_from[i + 1] : 0);
                for (ptrdiff_t tr = begin; tr < end; tr++)
                    track_block(j, tr, i0, b);
            }
            free(b);
            free(grid.first);
            return;
        }
    }
    for (ptrdiff_t tr = begin; tr < end; tr++) {  /* (without memory for a block too) */
        ptrdiff_t hint = 0;
        if (tr == begin || c->knots_stride != 0)
            grid_build(&grid, c->knots + tr * c->knots_stride, c->n_seg);
        track_queries(j, tr, 0, j->n_eval, NULL, &hint, &grid);
    }
    free(grid.first);
}

kb_status kb_rot_eval(const kb_rot_curve *c, int nu, int body, int scalar_first,
                      const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                      ptrdiff_t track_begin, ptrdiff_t track_end, double *out64,
                      float *out32, kb_error *err)
{
    kb_status s = rot_validate_queries(c, nu, t, n_eval, t_stride, out64, out32, err);
    if (s != KB_OK)
        return s;
    if (track_begin < 0 || track_end > c->n_tracks || track_begin > track_end)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    rot_job job = {c, nu, body, scalar_first, t, n_eval, t_stride, out64, out32};
    rot_range(&job, track_begin, track_end);
    return kb_ok(err);
}

void kb_rot_values_at(const kb_rot_curve *c, const double *t, const kb_loc *loc, ptrdiff_t n,
                      double *out)
{
    /* kb_rot_eval's own path for one track's rotations: the same kernels
     * on the same lanes, so the same bits */
    const rot_job job = {c, 0, 0, 1, t, n, n, out, NULL};
    if (n > 0)
        track_queries(&job, 0, 0, n, loc, NULL, NULL);
}

kb_status kb_rot_eval_threaded(const kb_rot_curve *c, int nu, int body, int scalar_first,
                               const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                               int n_threads, double *out64, float *out32, kb_error *err)
{
    kb_status s = rot_validate_queries(c, nu, t, n_eval, t_stride, out64, out32, err);
    if (s != KB_OK)
        return s;
    rot_job job = {c, nu, body, scalar_first, t, n_eval, t_stride, out64, out32};
    /* a squad sample costs about as much as ten position outputs */
    const double work = 10.0 * (double)c->n_tracks * (double)n_eval;
    kb_parallel_for(c->n_tracks, kb_threads_for(c->n_tracks, work, n_threads), 1, rot_range,
                    &job);
    return kb_ok(err);
}
