/* test_cumulative.c -- the cumulative cubic in the vector lanes
 * (kb_cumulative_lanes.h) against its scalar transcription
 * (kb_cumulative.h, the C library's sine and cosine), eight lanes against
 * four, and evaluation's choice between them: every query inside the
 * domain on a cumulative segment takes the lanes' code, alone or in any
 * group, except on logs too long for the vector sine. */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "rotation/kb_cumulative.h"
#include "kb_internal.h"
#include "quat/kb_quat.h"
#include "rotation/kb_rot_segment.h"
#include "kb_test.h"
#include "kbspline/kbspline.h"

static uint64_t rng_state = 88172645463325252u;

static double uniform01(void)  /* xorshift64: the same draws everywhere */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

static double uniform(double a, double b)
{
    return a + (b - a) * uniform01();
}

static void random_axis(double *v)
{
    double n;
    do {
        for (int j = 0; j < 3; j++)
            v[j] = uniform(-1.0, 1.0);
        n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    } while (!(n > 0.1 && n <= 1.0));
    for (int j = 0; j < 3; j++)
        v[j] /= n;
}

#if defined(KB_HAVE_VMATH)
/* The longest log the lanes take (kb_rot.c leaves longer ones to the
 * scalar transcription). */
#define LANES_MAX_LOG KB_VMATH_MAX_ARG

/* A log tangent near `base`: equal to it, tiny (down to subnormal) or
 * exactly zero apart, or apart by up to a few radians. */
static void tangent_near(const double *base, double *T)
{
    const int kind = (int)(uniform01() * 6);
    double d[3];
    random_axis(d);
    const double size = kind == 0 ? 0.0 : kind == 1 ? 1e-310 : kind == 2 ? 1e-300
                        : kind == 3 ? pow(10.0, uniform(-14, -4)) : pow(10.0, uniform(-2, 0.7));
    for (int j = 0; j < 3; j++)
        T[j] = kind == 5 && uniform01() < 0.3 ? 0.0 : base[j] + size * d[j];
}

/* A random cumulative segment's record (KB_ROT_SEG doubles): without a spin
 * (a chord of up to half a turn), or on a spin of up to several turns or
 * of up to `max_spin` radians (a log's norm: half the angle); beyond the
 * vector sine's range, on a spin of max_spin itself. */
static void random_record(double max_spin, double *rec)
{
    const int force = max_spin > KB_VMATH_MAX_ARG;  /* then a spin of max_spin */
    double q0[4], q1[4], L[3], e[4], T0[3], T1[3], ctrl[16], logs[12];
    for (int j = 0; j < 4; j++)
        q0[j] = uniform(-1.0, 1.0);
    const double n = sqrt(kb_qdot(q0, q0));
    for (int j = 0; j < 4; j++)
        q0[j] /= n;
    const int spin = force || uniform01() < 0.5;
    const double r = force ? 1.0 : uniform01();
    const double half = !spin ? (r < 0.1 ? 0.0 : r < 0.2 ? 1e-9 * r : uniform(0.0, 0.5 * KB_PI))
                        : r < 0.8 ? uniform(0.5 * KB_PI, 4.0 * KB_PI)
                                  : force ? max_spin : pow(10.0, uniform(1.0, log10(max_spin)));
    random_axis(L);
    for (int j = 0; j < 3; j++)
        L[j] *= half;
    kb_qexp(L, e);
    kb_qmul(q0, e, q1);
    tangent_near(spin ? L : (const double[3]){0, 0, 0}, T0);
    tangent_near(uniform01() < 0.5 ? T0 : L, T1);
    kb_cumulative_segment(q0, q1, L, spin, T0, T1, ctrl, logs);
    rot_segment_pack(KB_SEG_CUMULATIVE, ctrl, logs, rec);
}

#else
#define LANES_MAX_LOG 0.0  /* no lanes: every query on a cumulative segment is scalar */
#endif

/* The sum of the logs' norms: the angles the factors turn through. */
static double log_sum(const double *rec)
{
    double s = 0.0;
    for (int i = 0; i < 4; i++) {
        const double *w = rec + KB_CUMULATIVE_LOGS + 3 * i;
        s += sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    }
    return s;
}

/* Angular velocity or acceleration from a scalar jet J: 2 q' q*,
 * 2 (q'' q* + q' q'*) or, in the body frame, 2 q* q', 2 (q'* q' + q* q''),
 * with q' = J1 s1 and q'' = J2 s1^2 + J1 s2. */
static void jet_rates(double J[3][4], double s1, double s2, int nu, int body, double *v)
{
    double qd[4], qc[4], qdd[4], qdc[4], a[4], b[4] = {0, 0, 0, 0};
    for (int j = 0; j < 4; j++) {
        qd[j] = J[1][j] * s1;
        qdd[j] = J[2][j] * s1 * s1 + J[1][j] * s2;
        qc[j] = j ? -J[0][j] : J[0][j];
        qdc[j] = j ? -qd[j] : qd[j];
    }
    if (nu == 1) {
        kb_qmul(body ? qc : qd, body ? qd : qc, a);
    } else {
        kb_qmul(body ? qdc : qdd, body ? qd : qc, a);
        kb_qmul(body ? qc : qd, body ? qdd : qdc, b);
    }
    for (int j = 0; j < 3; j++)
        v[j] = 2.0 * a[j + 1] + 2.0 * b[j + 1];
}

#if defined(KB_HAVE_VMATH)
/* Parameters at the segment's ends, beside them and inside. */
static double random_e(void)
{
    const double r = uniform01();
    return r < 0.15 ? 0.0 : r < 0.3 ? 1.0 : r < 0.35 ? 1e-300 : r < 0.4 ? 1.0 - DBL_EPSILON / 2
           : r < 0.45 ? 0.5 : uniform01();
}

#endif

/* The lanes' values and rates (four segments gathered in four lanes, and
 * one segment broadcast) agree with the scalar transcription to 1e-14 of
 * their size, for velocity and acceleration in both frames, and the
 * broadcast and the gathered lanes agree bit for bit.  Sizes: W = 1 + the
 * logs' norms for values (an angle's rounding moves a value by about its
 * ulp), s1 W^2 for velocity, (s1^2 + |s2|) W^3 for acceleration; the worst
 * seen is below 1e-15 of them. */
KB_TEST(test_cumulative_lanes_match_scalar)
{
#if defined(KB_HAVE_VMATH)
    for (int trial = 0; trial < 20000; trial++) {
        double rec[4][KB_ROT_SEG];
        ptrdiff_t seg[4] = {0, 1, 2, 3};
        kb_v4 e, s1, s2, cv[KB_CUMULATIVE_VECTORS];
        for (int l = 0; l < 4; l++) {
            random_record(5e4, rec[l]);
            e[l] = random_e();
            s1[l] = uniform(0.1, 3.0);
            s2[l] = uniform(-5.0, 5.0);
        }
        KB_ASSERT(kb_v4_load_cumulative(rec[0], KB_ROT_SEG, seg, 0, cv) == 0);
        const int nu = trial % 3, body = trial / 3 % 2;
        kb_v4 out[4], one[4];
        if (nu == 0)
            kb_v4_cumulative_value(cv, e, out);
        else
            kb_v4_cumulative_rates(cv, e, s1, s2, nu, body, out);
        for (int l = 0; l < 4; l++) {
            const double *r = rec[l], W = 1.0 + log_sum(r);
            double want[4], J[3][4], scale = 1.0;
            if (nu == 0) {
                cumulative_value(r, r + KB_CUMULATIVE_LOGS, e[l], want);
            } else {
                cumulative_jet(r, r + KB_CUMULATIVE_LOGS, e[l], J);
                jet_rates(J, s1[l], s2[l], nu, body, want);
                /* |q'| <= 3 W s1, |q''| <= 9 W^2 s1^2 + 3 W |s2| */
                scale = nu == 1 ? s1[l] * W : (s1[l] * s1[l] + fabs(s2[l])) * W * W;
            }
            for (int j = 0; j < (nu == 0 ? 4 : 3); j++) {
                KB_ASSERT_NEAR(out[j][l], want[j], 1e-14 * scale * W);
            }
            /* segment l broadcast in every lane: the same bits */
            ptrdiff_t same[4] = {l, l, l, l};
            kb_v4 cv1[KB_CUMULATIVE_VECTORS];
            KB_ASSERT(kb_v4_load_cumulative(rec[0], KB_ROT_SEG, same, 1, cv1) == 0);
            for (int j = 0; j < KB_CUMULATIVE_VECTORS; j++)
                KB_ASSERT(memcmp(&cv1[j][0], &cv[j][l], sizeof(double)) == 0);
            if (nu == 0)
                kb_v4_cumulative_value(cv1, kb_v4_splat(e[l]), one);
            else
                kb_v4_cumulative_rates(cv1, kb_v4_splat(e[l]), kb_v4_splat(s1[l]),
                                       kb_v4_splat(s2[l]), nu, body, one);
            for (int j = 0; j < (nu == 0 ? 4 : 3); j++)
                KB_ASSERT(one[j][0] == out[j][l] && one[j][3] == out[j][l]);
        }
    }
    /* logs longer than the vector sine's range are flagged, lane by lane */
    double rec[2][KB_ROT_SEG];
    memset(rec, 0, sizeof rec);
    rec[0][0] = rec[1][0] = 1.0;
    rec[1][KB_CUMULATIVE_LOGS + 7] = 1.5 * KB_VMATH_MAX_ARG;  /* w2's y */
    rec[0][KB_CUMULATIVE_LOGS + 2] = KB_VMATH_MAX_ARG;         /* the spin's z: in range */
    const ptrdiff_t seg[4] = {0, 1, 1, 0}, first[4] = {1, 1, 1, 1};
    kb_v4 cv[KB_CUMULATIVE_VECTORS];
    KB_ASSERT(kb_v4_load_cumulative(rec[0], KB_ROT_SEG, seg, 0, cv) == 6);
    KB_ASSERT(kb_v4_load_cumulative(rec[0], KB_ROT_SEG, first, 1, cv) == 15);
#endif
}

/* Eight lanes give the values and rates four lanes give, bit for bit (and
 * flag the same lanes out of range), with different cumulative segments
 * and parameters in every lane, gathered or broadcast. */
KB_TEST(test_cumulative_eight_lanes_equal_four)
{
#if defined(KB_HAVE_VMATH)
    double rec[12][KB_ROT_SEG];
    for (int i = 0; i < 12; i++)
        random_record(i == 11 ? 1e7 : 5e4, rec[i]);
    rec[10][KB_CUMULATIVE_LOGS + 4] = 2.0 * KB_VMATH_MAX_ARG;  /* w1 out of range */
    for (int trial = 0; trial < 2000; trial++) {
        ptrdiff_t seg[8];
        kb_v8 cv8[KB_CUMULATIVE_VECTORS], e8, s1, s2, out8[4];
        for (int l = 0; l < 8; l++) {
            seg[l] = (ptrdiff_t)(uniform01() * 12);
            e8[l] = random_e();
            s1[l] = uniform(0.1, 3.0);
            s2[l] = uniform(-5.0, 5.0);
        }
        const int n = 1 + trial % 8;
        for (int l = n; l < 8; l++) {  /* flush_group's padding */
            seg[l] = seg[0];
            e8[l] = e8[0];
            s1[l] = s1[0];
            s2[l] = s2[0];
        }
        const int nu = trial % 3, body = trial / 3 % 2;
        const int far8 = kb_v8_load_cumulative(rec[0], KB_ROT_SEG, seg, n == 1, cv8);
        if (nu == 0)
            kb_v8_cumulative_value(cv8, e8, out8);
        else
            kb_v8_cumulative_rates(cv8, e8, s1, s2, nu, body, out8);
        for (int half = 0; half < 2; half++) {
            kb_v4 cv4[KB_CUMULATIVE_VECTORS], e4, s14, s24, out4[4];
            ptrdiff_t seg4[4];
            for (int l = 0; l < 4; l++) {
                const int src = 4 * half + l < n ? 4 * half + l : 0;
                seg4[l] = seg[src];
                e4[l] = e8[src];
                s14[l] = s1[src];
                s24[l] = s2[src];
            }
            const int far4 = kb_v4_load_cumulative(rec[0], KB_ROT_SEG, seg4, 0, cv4);
            if (nu == 0)
                kb_v4_cumulative_value(cv4, e4, out4);
            else
                kb_v4_cumulative_rates(cv4, e4, s14, s24, nu, body, out4);
            for (int l = 0; l < 4 && 4 * half + l < n; l++) {
                const int far = far8 >> (4 * half + l) & 1;
                KB_ASSERT(far == (far4 >> l & 1));
                KB_ASSERT(far == (seg4[l] >= 10));
                for (int j = 0; !far && j < (nu == 0 ? 4 : 3); j++)
                    KB_ASSERT(memcmp(&out8[j][4 * half + l], &out4[j][l], sizeof(double)) == 0);
            }
        }
    }
#endif
}

/* Through kb_rot_eval: a track of multi-turn chords (cumulative segments,
 * one on a spin of about 1e5 radians, beyond the vector sine) and ordinary
 * ones, queried at random so that groups mix kinds and segments.  Every
 * query gives the same bits alone and in the batch; inside the domain on a
 * cumulative segment it is the lanes' code (lane 0 of four), or where a
 * log is too long for the vector sine the scalar transcription; both close
 * to the scalar transcription. */
KB_TEST(test_rotation_cumulative_queries_take_the_lanes)
{
    enum { K = 9, S = K - 1, M = 203 };
    const double times[K] = {0.0, 0.7, 1.9, 2.2, 3.6, 4.0, 4.5, 5.5, 6.0};
    const double half[S] = {0.2, 2.5 * KB_PI, 0.3, 1e5 + 0.25, 0.25, 0.3, 3.0 * KB_PI, 0.1};
    double L[3 * S], q[4 * K], tin[3 * K], tout[3 * K], seg[S * KB_ROT_SEG], tcb[3][K];
    double zero[K] = {0};
    unsigned char kind[S];
    q[0] = 0.5, q[1] = -0.5, q[2] = 0.5, q[3] = 0.5;
    for (int n = 0; n < S; n++) {
        double e[4];
        random_axis(L + 3 * n);
        for (int j = 0; j < 3; j++)
            L[3 * n + j] *= half[n];
        kb_qexp(L + 3 * n, e);
        kb_qmul(q + 4 * n, e, q + 4 * n + 4);
    }
    for (int i = 0; i < K; i++)
        for (int p = 0; p < 3; p++)
            tcb[p][i] = uniform(-0.5, 0.5);
    kb_rot_keys k = {1, K, {times, 0}, q, {tcb[0], 0}, {tcb[1], 0}, {tcb[2], 0}, {zero, 0},
                     {zero, 0}, {NULL, 0}, {NULL, 0}, KB_TIMING_KB, KB_ENDS_NATURAL, L, NULL, NULL};
    kb_error err;
    KB_ASSERT(kb_rot_build(&k, tin, tout, seg, NULL, kind, NULL, &err) == KB_OK);
    int far[S], count[3] = {0, 0, 0};  /* squad, cumulative in range, beyond it */
    for (int n = 0; n < S; n++) {
        far[n] = 0;
        for (int i = 0; kind[n] == KB_SEG_CUMULATIVE && i < 4; i++) {
            const double *w = seg + n * KB_ROT_SEG + KB_CUMULATIVE_LOGS + 3 * i;
            far[n] |= !(sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) <= LANES_MAX_LOG);
        }
        count[kind[n] == KB_SEG_CUMULATIVE ? 1 + far[n] : 0]++;
    }
    KB_ASSERT(count[0] > 0 && count[1] + count[2] > 0 && far[3]);
#if defined(KB_HAVE_VMATH)
    KB_ASSERT(count[1] > 0);
#endif
    kb_rot_curve c = {1, S, times, 0, seg, NULL, KB_EXTRAP_CLAMP, kind};
    double t[M];
    for (int i = 0; i < M; i++)  /* knots and ends too */
        t[i] = i % 17 == 0 ? times[(i / 17) % K] : uniform(-0.1, 6.1);
    for (int nu = 0; nu <= 2; nu++)
        for (int body = 0; body < 2; body++) {
            const int width = nu == 0 ? 4 : 3;
            double batch[4 * M], alone[4];
            KB_ASSERT(kb_rot_eval(&c, nu, body, 1, t, M, 0, 0, 1, batch, NULL, &err) == KB_OK);
            for (int i = 0; i < M; i++) {
                const double *got = batch + width * i;
                KB_ASSERT(kb_rot_eval(&c, nu, body, 1, t + i, 1, 0, 0, 1, alone, NULL, &err) ==
                          KB_OK);
                KB_ASSERT(memcmp(alone, got, width * sizeof(double)) == 0);
                /* the segment and parameter as evaluation locates them */
                const double ti = fmin(fmax(t[i], times[0]), times[K - 1]);
                ptrdiff_t n = 0;
                while (n < S - 1 && ti >= times[n + 1])
                    n++;
                if (kind[n] != KB_SEG_CUMULATIVE)
                    continue;
                const double inv_dt = 1.0 / (times[n + 1] - times[n]);
                const double e = ti == times[K - 1] ? 1.0 : (ti - times[n]) * inv_dt;
                const double *r = seg + n * KB_ROT_SEG;
                double want[4], J[3][4];
                if (nu == 0) {
                    cumulative_value(r, r + KB_CUMULATIVE_LOGS, e, want);
                } else {
                    cumulative_jet(r, r + KB_CUMULATIVE_LOGS, e, J);
                    jet_rates(J, inv_dt, 0.0, nu, body, want);
                }
                if (far[n]) {  /* the scalar transcription itself */
                    for (int j = 0; j < width; j++)
                        KB_ASSERT(got[j] == want[j]);
                    continue;
                }
                const double W = 1.0 + log_sum(r);
                for (int j = 0; j < width; j++)
                    KB_ASSERT_NEAR(got[j], want[j], 1e-14 * W * pow(inv_dt * W, nu));
#if defined(KB_HAVE_VMATH)
                const ptrdiff_t one[4] = {n, n, n, n};
                kb_v4 cv[KB_CUMULATIVE_VECTORS], out[4];
                KB_ASSERT(kb_v4_load_cumulative(seg, KB_ROT_SEG, one, 1, cv) == 0);
                if (nu == 0)
                    kb_v4_cumulative_value(cv, kb_v4_splat(e), out);
                else
                    kb_v4_cumulative_rates(cv, kb_v4_splat(e), kb_v4_splat(inv_dt),
                                           kb_v4_splat(0.0), nu, body, out);
                for (int j = 0; j < width; j++)
                    KB_ASSERT(memcmp(&got[j], &out[j][0], sizeof(double)) == 0);
#endif
            }
        }
}
