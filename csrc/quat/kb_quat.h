/*
 * kb_quat.h -- private inline quaternion operations of the kbspline core.
 *
 * IMPORTANT: quaternions here are double[4] in (w, x, y, z) order, scalar
 * first.  Hamilton product; a unit q rotates v as q v q*.  "Pure" 3-vectors
 * v stand for the quaternion (0, v).  log(cos a + sin a n) = a n, so a log
 * is half the rotation vector.
 *
 * Near the identity nothing divides by a small sine: log divides by |v|
 * only after atan2 (exact as |v| -> 0), exp by the angle, not its sine.
 *
 * Jets: a value with its first and second derivatives along one parameter,
 * j[0], j[1], j[2]; they carry the analytic derivatives of squad.  Their
 * parameters are not const: C11 will not pass double[3][4] as const.
 */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_QUAT_H
#define KB_QUAT_H

#include <math.h>

/* Second-order jet of a product (Leibniz's rule): the scalar jet
 * (a0, a1, a2) times component iv of the jet v, into component io of out.
 * For double and kb_v4 jets alike, so that both round the same way. */
#define KB_JET_TIMES(a0, a1, a2, v, iv, out, io)                                  \
    ((out)[0][io] = (a0) * (v)[0][iv],                                             \
     (out)[1][io] = (a1) * (v)[0][iv] + (a0) * (v)[1][iv],                         \
     (out)[2][io] = (a2) * (v)[0][iv] + 2.0 * (a1) * (v)[1][iv] + (a0) * (v)[2][iv])

/* Its first-order part alone (a jet whose second derivatives are not wanted). */
#define KB_JET_TIMES1(a0, a1, v, iv, out, io)                                     \
    ((out)[0][io] = (a0) * (v)[0][iv],                                             \
     (out)[1][io] = (a1) * (v)[0][iv] + (a0) * (v)[1][iv])

/*
 * The functions of the log and exp jets, written once for double and kb_v4
 * alike (the scalar jets below and the vector ones in kb_squad.h), so that
 * both round the same way.  Log: g(theta) = theta / sin(theta) and its
 * derivatives in w = cos(theta), as series in t2 = theta^2 near the
 * identity or in closed form from theta, c = cos and s = sin.
 */
#define KB_LOG_G_NEAR(t2)                                                              \
    (1 + (t2) * (1.0 / 6 + (t2) * (7.0 / 360 + (t2) * (31.0 / 15120 +                  \
        (t2) * (127.0 / 604800 + (t2) * (73.0 / 3421440))))))
#define KB_LOG_GW_NEAR(t2)                                                             \
    (-1.0 / 3 - (t2) * (2.0 / 15 + (t2) * (2.0 / 63 + (t2) * (4.0 / 675 +              \
        (t2) * (2.0 / 2079 + (t2) * (2764.0 / 19348875))))))
#define KB_LOG_GWW_NEAR(t2)                                                            \
    (4.0 / 15 + (t2) * (6.0 / 35 + (t2) * (13.0 / 210 + (t2) * (1153.0 / 69300 +       \
        (t2) * (187619.0 / 50450400 + (t2) * (3325549.0 / 4540536000))))))
#define KB_LOG_G_FAR(th, s) ((th) / (s))
#define KB_LOG_GW_FAR(th, c, s) (((th) * (c) - (s)) / ((s) * (s) * (s)))
#define KB_LOG_GWW_FAR(th, c, s)                                                       \
    (((th) * ((s) * (s)) + 3.0 * (c) * ((th) * (c) - (s))) /                           \
     (((s) * (s)) * ((s) * (s)) * (s)))

/* Exp: Sn(s) = sin(sqrt s) / sqrt s = sum_k (-s)^k / (2k+1)!, whose
 * coefficients these are, and its first two derivatives in closed form. */
static const double kb_sinc_series[9] = {1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880,
                                         -1.0 / 39916800, 1.0 / 6227020800.0,
                                         -1.0 / 1307674368000.0, 1.0 / 355687428096000.0};
#define KB_SINC_S(C, Sn, s) (((C) - (Sn)) / (2.0 * (s)))
#define KB_SINC_SS(Sn, Sn_s, s) ((-0.5 * (Sn) - 3.0 * (Sn_s)) / (2.0 * (s)))

/* sin and cos of one angle, in one call where the C library has sincos
 * (glibc). */
static inline void kb_sincos(double a, double *s, double *c)
{
#if defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
    __builtin_sincos(a, s, c);
#else
    *s = sin(a);
    *c = cos(a);
#endif
}

/* Whether q (any scale) is normalised by dividing by its norm directly,
 * with the bits of the exact rescaling: finite, its largest component in
 * [2^-200, 2^200] and none in (0, 2^-822) (the scaling would then be exact,
 * no component becoming subnormal and so rounded twice, and squares that
 * underflow are far below half an ulp of the largest square).  A NaN or
 * infinity is not. */
static inline int kb_quat_direct(const double *q)
{
    int fine = 1, big = 0;
    for (int j = 0; j < 4; j++) {
        const double a = fabs(q[j]);
        fine &= (a <= 0x1p200) & ((a >= 0x1p-822) | (a == 0.0));
        big |= a >= 0x1p-200;
    }
    return fine & big;
}

/* The rotation matrix (row-major, acting on column vectors) of the unit
 * quaternion (w, x, y, z) into m[0 .. 8].  For double and kb_v4 alike, so
 * that both round the same way. */
#define KB_QUAT_MATRIX(w, x, y, z, m)                                              \
    ((m)[0] = 1 - 2 * ((y) * (y) + (z) * (z)), (m)[1] = 2 * ((x) * (y) - (w) * (z)), \
     (m)[2] = 2 * ((x) * (z) + (w) * (y)), (m)[3] = 2 * ((x) * (y) + (w) * (z)),     \
     (m)[4] = 1 - 2 * ((x) * (x) + (z) * (z)), (m)[5] = 2 * ((y) * (z) - (w) * (x)), \
     (m)[6] = 2 * ((x) * (z) - (w) * (y)), (m)[7] = 2 * ((y) * (z) + (w) * (x)),     \
     (m)[8] = 1 - 2 * ((x) * (x) + (y) * (y)))

/* 2 atan2(s, c) for s, c >= 0: the angle of the rotation whose quaternion
 * has a vector part of length s and scalar part c.  Where s <= c / 16 (7
 * degrees), as key reduction's errors mostly are, atan's series to x^17
 * (x = s / c): its next term is below 2^-72 x, so it is within an ulp or
 * two of atan2, and a few times faster. */
static inline double kb_rotation_angle(double s, double c)
{
    if (s <= 0.0625 * c && c > 0.0) {
        const double x = s / c, y = x * x;
        const double tail = 1.0 / 3 - y * (1.0 / 5 - y * (1.0 / 7 - y * (1.0 / 9 - y * (
            1.0 / 11 - y * (1.0 / 13 - y * (1.0 / 15 - y * (1.0 / 17)))))));
        return 2.0 * (x - x * y * tail);
    }
    return 2.0 * atan2(s, c);
}

static inline void kb_qmul(const double *a, const double *b, double *out)
{
    double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    out[0] = w;
    out[1] = x;
    out[2] = y;
    out[3] = z;
}

/* a* b without forming a*. */
static inline void kb_qmul_conj_left(const double *a, const double *b, double *out)
{
    const double ac[4] = {a[0], -a[1], -a[2], -a[3]};
    kb_qmul(ac, b, out);
}

static inline double kb_qdot(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}

/* log of a unit quaternion: theta n with theta = atan2(|v|, w) in [0, pi]. */
static inline void kb_qlog(const double *q, double *v)
{
    const double n = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double c;
    if (n > 0.0)
        c = atan2(n, q[0]) / n;
    else
        c = q[0] >= 0.0 ? 1.0 : 0.0; /* identity: 0; -1: no axis, take 0 */
    v[0] = c * q[1];
    v[1] = c * q[2];
    v[2] = c * q[3];
}

/* exp of a pure quaternion: (cos a, sin a / a * v), a = |v|. */
static inline void kb_qexp(const double *v, double *q)
{
    const double a = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    double sin_a, cos_a;
    kb_sincos(a, &sin_a, &cos_a);
    const double s = a > 0.0 ? sin_a / a : 1.0;
    q[0] = cos_a;
    q[1] = s * v[0];
    q[2] = s * v[1];
    q[3] = s * v[2];
}

/* p exp(t L) with L = log(p* q): slerp along the arc p and q span, without
 * choosing the shorter one (squad's inner slerps must not flip). */
static inline void kb_qslerp_log(double t, const double *p, const double *L, double *out)
{
    const double tl[3] = {t * L[0], t * L[1], t * L[2]};
    double e[4];
    kb_qexp(tl, e);
    kb_qmul(p, e, out);
}

static inline void kb_qslerp(double t, const double *p, const double *q, double *out)
{
    double r[4], L[3];
    kb_qmul_conj_left(p, q, r);
    kb_qlog(r, L);
    kb_qslerp_log(t, p, L, out);
}

/* ---- jets ------------------------------------------------------------- */

/* (ab)' = a'b + ab', (ab)'' = a''b + 2a'b' + ab'' */
static inline void kb_qjet_mul(double a[3][4], double b[3][4], double out[3][4])
{
    double t1[4], t2[4];
    kb_qmul(a[0], b[0], out[0]);
    kb_qmul(a[1], b[0], t1);
    kb_qmul(a[0], b[1], t2);
    for (int i = 0; i < 4; i++)
        out[1][i] = t1[i] + t2[i];
    double t3[4];
    kb_qmul(a[2], b[0], t1);
    kb_qmul(a[1], b[1], t2);
    kb_qmul(a[0], b[2], t3);
    for (int i = 0; i < 4; i++)
        out[2][i] = t1[i] + 2.0 * t2[i] + t3[i];
}

static inline void kb_qjet_conj(double a[3][4], double out[3][4])
{
    for (int k = 0; k < 3; k++) {
        out[k][0] = a[k][0];
        out[k][1] = -a[k][1];
        out[k][2] = -a[k][2];
        out[k][3] = -a[k][3];
    }
}

/*
 * Jet of log(q) for a unit-quaternion jet q = (w, v): log = g(w) v with
 * g(w) = acos(w) / sqrt(1 - w^2) = theta / sin(theta).  g_w and g_ww in
 * closed form, or by their series in theta near the identity where the
 * closed forms cancel.
 */
static inline void kb_qjet_log(double q[3][4], double out[3][3])
{
    const double n = sqrt(q[0][1] * q[0][1] + q[0][2] * q[0][2] + q[0][3] * q[0][3]);
    const double th = atan2(n, q[0][0]);
    double g, gw, gww;
    if (th < 0.1) {
        const double t2 = th * th;
        g = KB_LOG_G_NEAR(t2);
        gw = KB_LOG_GW_NEAR(t2);
        gww = KB_LOG_GWW_NEAR(t2);
    } else {
        g = KB_LOG_G_FAR(th, n);
        gw = KB_LOG_GW_FAR(th, q[0][0], n);
        gww = KB_LOG_GWW_FAR(th, q[0][0], n);
    }
    const double w1 = q[1][0], w2 = q[2][0];
    const double g1 = gw * w1, g2 = gww * w1 * w1 + gw * w2;
    for (int i = 0; i < 3; i++)
        KB_JET_TIMES(g, g1, g2, q, i + 1, out, i);
}

/*
 * Jet of exp(v) for a pure-quaternion jet v: exp = (C(s), Sn(s) v) with
 * s = |v|^2, C = cos(sqrt s), Sn = sin(sqrt s) / sqrt s, both entire in s.
 */
static inline void kb_qjet_exp(double v[3][3], double out[3][4])
{
    const double s = v[0][0] * v[0][0] + v[0][1] * v[0][1] + v[0][2] * v[0][2];
    const double s1 = 2.0 * (v[0][0] * v[1][0] + v[0][1] * v[1][1] + v[0][2] * v[1][2]);
    const double s2 = 2.0 * (v[1][0] * v[1][0] + v[1][1] * v[1][1] + v[1][2] * v[1][2] +
                             v[0][0] * v[2][0] + v[0][1] * v[2][1] + v[0][2] * v[2][2]);
    const double a = sqrt(s);
    double C, Sn, Sn_s, Sn_ss;
    if (s < 0.25) {
        C = cos(a);
        /* Sn and its derivatives term by term */
        const double *c = kb_sinc_series;
        Sn = Sn_s = Sn_ss = 0.0;
        for (int k = 8; k >= 0; k--)
            Sn = Sn * s + c[k];
        for (int k = 8; k >= 1; k--)
            Sn_s = Sn_s * s + k * c[k];
        for (int k = 8; k >= 2; k--)
            Sn_ss = Sn_ss * s + k * (k - 1) * c[k];
    } else {
        kb_sincos(a, &Sn, &C);
        Sn /= a;
        Sn_s = KB_SINC_S(C, Sn, s);
        Sn_ss = KB_SINC_SS(Sn, Sn_s, s);
    }
    const double C_s = -0.5 * Sn, C_ss = -0.5 * Sn_s;
    out[0][0] = C;
    out[1][0] = C_s * s1;
    out[2][0] = C_ss * s1 * s1 + C_s * s2;
    const double d1 = Sn_s * s1, d2 = Sn_ss * s1 * s1 + Sn_s * s2;
    for (int i = 0; i < 3; i++)
        KB_JET_TIMES(Sn, d1, d2, v, i, out, i + 1);
}

#endif /* KB_QUAT_H */
