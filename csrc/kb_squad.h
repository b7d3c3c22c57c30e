/*
 * kb_squad.h -- private: one squad segment's value and its jet (first and
 * second derivatives in the segment parameter), from its control points
 * q0 and a, c = (q0, a), and precomputed logs lg = (log(q0* q1), log(a* b)).
 *
 * Derivation of the analytic rates.  With e the (eased) segment parameter,
 *   P(e) = q0 exp(e L0),  Q(e) = a exp(e Lab)          (the inner slerps)
 *   M(e) = log(P* Q),     h(e) = 2e(1 - e)
 *   S(e) = P exp(h M)                                   (the outer slerp)
 * Each factor is differentiated exactly: P' = P L0 and P'' = -|L0|^2 P
 * (L0 is pure and commutes with exp(e L0)); (P* Q)' by the product rule;
 * log of a unit quaternion (w, v) is g(w) v with g = theta / sin theta,
 * theta = acos w, whose w-derivatives have closed forms (series near
 * theta = 0); exp of a pure v is (C(s), Sn(s) v) with s = |v|^2,
 * C = cos sqrt(s), Sn = sin sqrt(s) / sqrt(s), entire functions of s.
 * In time, S_t = S' e_t and S_tt = S'' e_t^2 + S' e_tt (e_t = Ease'(u) / dt).
 * Then the world angular velocity is w = 2 S_t S*, its derivative
 * 2 (S_tt S* + S_t S_t*); in the body frame 2 S* S_t and 2 (S_t* S_t + S* S_tt).
 * tests/test_rotation_calculus.py checks all four against finite differences.
 */
#ifndef KB_SQUAD_H
#define KB_SQUAD_H

#include "kb_quat.h"
#include "kb_vmath.h"

#if defined(KB_HAVE_VMATH)

#define KB_V kb_v4
#define KB_M kb_m4
#define KB_LANES 4
#define KB_VFN(name) kb_v4_##name
#include "kb_squad_lanes.h"
#undef KB_V
#undef KB_M
#undef KB_LANES
#undef KB_VFN

#define KB_V kb_v8
#define KB_M kb_m8
#define KB_LANES 8
#define KB_VFN(name) kb_v8_##name
#include "kb_squad_lanes.h"
#undef KB_V
#undef KB_M
#undef KB_LANES
#undef KB_VFN

/* ---- jets, four at a time: the scalar jets of kb_quat.h, lane by lane --- */
/* `order` is 2, or 1 where only first derivatives are wanted (angular
 * velocity): a constant, so the second derivatives' code folds away; the
 * first derivatives are the same either way, bit for bit. */

/* Jet of p exp(e L) along e: (P, P L, -|L|^2 P). */
KB_INLINE void kb_v4_slerp_jet(kb_v4 e, const kb_v4 *p, const kb_v4 *L, int order,
                               kb_v4 out[3][4])
{
    const kb_v4 L2 = L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
    const kb_v4 Lq[4] = {kb_v4_splat(0.0), L[0], L[1], L[2]};
    kb_v4_slerp_log(e, p, L, kb_v4_sqrt(L2), out[0]);
    kb_v4_qmul(out[0], Lq, out[1]);
    for (int j = 0; order > 1 && j < 4; j++)
        out[2][j] = -L2 * out[0][j];
}

/* (ab)' = a'b + ab', (ab)'' = a''b + 2a'b' + ab'' */
KB_INLINE void kb_v4_qjet_mul(kb_v4 a[3][4], kb_v4 b[3][4], int order, kb_v4 out[3][4])
{
    kb_v4 t1[4], t2[4], t3[4];
    kb_v4_qmul(a[0], b[0], out[0]);
    kb_v4_qmul(a[1], b[0], t1);
    kb_v4_qmul(a[0], b[1], t2);
    for (int i = 0; i < 4; i++)
        out[1][i] = t1[i] + t2[i];
    if (order < 2)
        return;
    kb_v4_qmul(a[2], b[0], t1);
    kb_v4_qmul(a[1], b[1], t2);
    kb_v4_qmul(a[0], b[2], t3);
    for (int i = 0; i < 4; i++)
        out[2][i] = t1[i] + 2.0 * t2[i] + t3[i];
}

/* kb_qjet_log: both the series (theta < 0.1) and the closed forms are
 * computed, and each lane takes its own. */
KB_INLINE void kb_v4_qjet_log(kb_v4 q[3][4], int order, kb_v4 out[3][3])
{
    const kb_v4 n = kb_v4_sqrt(q[0][1] * q[0][1] + q[0][2] * q[0][2] + q[0][3] * q[0][3]);
    const kb_v4 th = kb_v4_atan2_upper(n, q[0][0]);
    const kb_v4 t2 = th * th, c = q[0][0];
    const kb_m4 near = th < 0.1;
    const kb_v4 g = kb_v4_select(near, KB_LOG_G_NEAR(t2), KB_LOG_G_FAR(th, n));
    const kb_v4 gw = kb_v4_select(near, KB_LOG_GW_NEAR(t2), KB_LOG_GW_FAR(th, c, n));
    const kb_v4 w1 = q[1][0], g1 = gw * w1;
    if (order < 2) {
        for (int i = 0; i < 3; i++)
            KB_JET_TIMES1(g, g1, q, i + 1, out, i);
        return;
    }
    const kb_v4 gww = kb_v4_select(near, KB_LOG_GWW_NEAR(t2), KB_LOG_GWW_FAR(th, c, n));
    const kb_v4 w2 = q[2][0], g2 = gww * w1 * w1 + gw * w2;
    for (int i = 0; i < 3; i++)
        KB_JET_TIMES(g, g1, g2, q, i + 1, out, i);
}

/* kb_qjet_exp: the series of Sn (s < 0.25) or the closed forms, per lane.
 * |v| <= pi/2 here (h <= 1/2, |log| <= pi), inside the vector sine's range. */
KB_INLINE void kb_v4_qjet_exp(kb_v4 v[3][3], int order, kb_v4 out[3][4])
{
    const kb_v4 s = v[0][0] * v[0][0] + v[0][1] * v[0][1] + v[0][2] * v[0][2];
    const kb_v4 s1 = 2.0 * (v[0][0] * v[1][0] + v[0][1] * v[1][1] + v[0][2] * v[1][2]);
    const kb_v4 a = kb_v4_sqrt(s);
    kb_v4 sin_a, C;
    kb_v4_sincos(a, &sin_a, &C);
    const double *c = kb_sinc_series;
    kb_v4 Sn0 = kb_v4_splat(0.0), Sn_s0 = Sn0, Sn_ss0 = Sn0;
    for (int k = 8; k >= 0; k--)
        Sn0 = Sn0 * s + c[k];
    for (int k = 8; k >= 1; k--)
        Sn_s0 = Sn_s0 * s + k * c[k];
    const kb_v4 Sn1 = sin_a / a, Sn_s1 = KB_SINC_S(C, Sn1, s);
    const kb_m4 small = s < 0.25;
    const kb_v4 Sn = kb_v4_select(small, Sn0, Sn1), Sn_s = kb_v4_select(small, Sn_s0, Sn_s1);
    const kb_v4 C_s = -0.5 * Sn, d1 = Sn_s * s1;
    out[0][0] = C;
    out[1][0] = C_s * s1;
    if (order < 2) {
        for (int i = 0; i < 3; i++)
            KB_JET_TIMES1(Sn, d1, v, i, out, i + 1);
        return;
    }
    for (int k = 8; k >= 2; k--)
        Sn_ss0 = Sn_ss0 * s + k * (k - 1) * c[k];
    const kb_v4 Sn_ss = kb_v4_select(small, Sn_ss0, KB_SINC_SS(Sn1, Sn_s1, s));
    const kb_v4 s2 = 2.0 * (v[1][0] * v[1][0] + v[1][1] * v[1][1] + v[1][2] * v[1][2] +
                            v[0][0] * v[2][0] + v[0][1] * v[2][1] + v[0][2] * v[2][2]);
    const kb_v4 C_ss = -0.5 * Sn_s;
    out[2][0] = C_ss * s1 * s1 + C_s * s2;
    const kb_v4 d2 = Sn_ss * s1 * s1 + Sn_s * s2;
    for (int i = 0; i < 3; i++)
        KB_JET_TIMES(Sn, d1, d2, v, i, out, i + 1);
}

/* Four squad jets along e at once (see squad_jet), to the given order. */
KB_INLINE void squad_jet4(const kb_v4 *c, const kb_v4 *lg, const kb_v4 *ep, int order,
                          kb_v4 S[3][4])
{
    const kb_v4 e = *ep;
    kb_v4 P[3][4], Q[3][4], Pc[3][4], R[3][4], M[3][3], hM[3][3], X[3][4];
    kb_v4_slerp_jet(e, c, lg, order, P);
    kb_v4_slerp_jet(e, c + 4, lg + 3, order, Q);
    for (int k = 0; k < order + 1; k++) {
        Pc[k][0] = P[k][0];
        for (int j = 1; j < 4; j++)
            Pc[k][j] = -P[k][j];
    }
    kb_v4_qjet_mul(Pc, Q, order, R);
    kb_v4_qjet_log(R, order, M);
    const kb_v4 h = 2.0 * e * (1.0 - e), h1 = 2.0 - 4.0 * e;
    const double h2 = -4.0;
    for (int j = 0; j < 3; j++) {
        if (order > 1)
            KB_JET_TIMES(h, h1, h2, M, j, hM, j);
        else
            KB_JET_TIMES1(h, h1, M, j, hM, j);
    }
    kb_v4_qjet_exp(hM, order, X);
    kb_v4_qjet_mul(P, X, order, S);
}

#endif

/* One squad value, c = (q0, a), lg = (log(q0* q1), log(a* b)).  With
 * vector extensions it is lane 0 of kb_v4_squad_value, so that a value never
 * depends on how queries were grouped. */
static inline void squad_value(const double *c, const double *lg, double e, double *out)
{
#if defined(KB_HAVE_VMATH)
    kb_v4 cv[8], lv[6], ov[4];
    kb_v4_splat_segment(c, lg, cv, lv);
    const kb_v4 ev = kb_v4_splat(e);
    kb_v4_squad_value(cv, lv, &ev, ov);
    for (int j = 0; j < 4; j++)
        out[j] = ov[j][0];
#else
    double p[4], q[4], r[4];
    kb_qslerp_log(e, c, lg, p);
    kb_qslerp_log(e, c + 4, lg + 3, q);
    kb_qmul_conj_left(p, q, r);
    const double n = sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    if (!(n > 0.0)) {
        for (int j = 0; j < 4; j++)
            out[j] = p[j];
        return;
    }
    double sn, cs;
    kb_sincos(2.0 * e * (1.0 - e) * atan2(n, r[0]), &sn, &cs);
    const double k = sn / n;
    const double x[4] = {cs, k * r[1], k * r[2], k * r[3]};
    kb_qmul(p, x, out);
#endif
}

/* Jet of p exp(e L) along e: (P, P L, -|L|^2 P). */
static inline void slerp_jet(const double *p, const double *L, double e, double out[3][4])
{
    const double Lq[4] = {0.0, L[0], L[1], L[2]};
    const double L2 = L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
    kb_qslerp_log(e, p, L, out[0]);
    kb_qmul(out[0], Lq, out[1]);
    for (int j = 0; j < 4; j++)
        out[2][j] = -L2 * out[0][j];
}

/* Jet of squad along e: S = P exp(h M), M = log(P* Q), h = 2e(1 - e), with
 * the C library's sine, cosine and atan2. */
static inline void squad_jet_scalar(const double *c, const double *lg, double e,
                                    double S[3][4])
{
    double P[3][4], Q[3][4], Pc[3][4], R[3][4], M[3][3], hM[3][3], X[3][4];
    slerp_jet(c, lg, e, P);
    slerp_jet(c + 4, lg + 3, e, Q);
    kb_qjet_conj(P, Pc);
    kb_qjet_mul(Pc, Q, R);
    kb_qjet_log(R, M);
    const double h = 2.0 * e * (1.0 - e), h1 = 2.0 - 4.0 * e, h2 = -4.0;
    for (int j = 0; j < 3; j++)
        KB_JET_TIMES(h, h1, h2, M, j, hM, j);
    kb_qjet_exp(hM, X);
    kb_qjet_mul(P, X, S);
}

/* The jet of squad along e.  With vector extensions it is lane 0 of
 * squad_jet4, like squad_value; otherwise squad_jet_scalar. */
static inline void squad_jet(const double *c, const double *lg, double e, double S[3][4])
{
#if defined(KB_HAVE_VMATH)
    kb_v4 cv[8], lv[6], Sv[3][4];
    kb_v4_splat_segment(c, lg, cv, lv);
    const kb_v4 ev = kb_v4_splat(e);
    squad_jet4(cv, lv, &ev, 2, Sv);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++)
            S[k][j] = Sv[k][j][0];
#else
    squad_jet_scalar(c, lg, e, S);
#endif
}

#endif /* KB_SQUAD_H */
