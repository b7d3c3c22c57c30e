/*
 * kb_squad.h -- private: one squad segment's value and its jet (first and
 * second derivatives in the segment parameter), from its control points
 * c = (q0, a, b, q1) and precomputed logs lg = (log(q0* q1), log(a* b)).
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

/* kb_qmul on four quaternions at once, one vector per component. */
KB_INLINE void kb_v4_qmul(const kb_v4 *a, const kb_v4 *b, kb_v4 *out)
{
    const kb_v4 w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    const kb_v4 x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    const kb_v4 y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    const kb_v4 z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    out[0] = w;
    out[1] = x;
    out[2] = y;
    out[3] = z;
}

/* p exp(e L) for pure L of norm `norm`: (cos a, sin a / norm L), a = e norm;
 * sin a / norm tends to e as norm -> 0. */
KB_INLINE void kb_v4_slerp_log(kb_v4 e, const kb_v4 *p, const kb_v4 *L, kb_v4 norm,
                                kb_v4 *out)
{
    kb_v4 s, c;
    kb_v4_sincos(e * norm, &s, &c);
    const kb_v4 k = kb_v4_select(norm > 0.0, s / norm, e);
    const kb_v4 x[4] = {c, k * L[0], k * L[1], k * L[2]};
    kb_v4_qmul(p, x, out);
}

/*
 * Four squad values at once, lane by lane: control points c (16 vectors:
 * q0, a, b, q1), logs lg (6 vectors: log(q0* q1), log(a* b)), parameters *ep.
 * squad(q0, a, b, q1; e) = slerp(2e(1-e), slerp(e, q0, q1), slerp(e, a, b)):
 * the inner slerps from their logs; the outer one is P exp(h log(P* Q)), and
 * with P* Q = (w, v), theta = atan2(|v|, w): exp(h log) = (cos h theta,
 * sin(h theta) / |v| v).  Arguments stay within [0, pi] (e in [0, 1], log
 * norms at most pi), where the vector sine and cosine are exact to an ulp.
 */
KB_INLINE void squad_value4(const kb_v4 *c, const kb_v4 *lg, const kb_v4 *ep, kb_v4 *out)
{
    const kb_v4 e = *ep;
    kb_v4 p[4], q[4], r[4];
    kb_v4_slerp_log(e, c, lg, kb_v4_sqrt(lg[0] * lg[0] + lg[1] * lg[1] + lg[2] * lg[2]), p);
    kb_v4_slerp_log(e, c + 4, lg + 3, kb_v4_sqrt(lg[3] * lg[3] + lg[4] * lg[4] + lg[5] * lg[5]),
                    q);
    const kb_v4 pc[4] = {p[0], -p[1], -p[2], -p[3]};
    kb_v4_qmul(pc, q, r);
    const kb_v4 n = kb_v4_sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    const kb_m4 apart = n > 0.0;  /* else p = +-q: log is 0 (kb_qlog takes 0 for -1 too) */
    kb_v4 sn, cs;
    kb_v4_sincos(2.0 * e * (1.0 - e) * kb_v4_atan2_upper(n, r[0]), &sn, &cs);
    const kb_v4 k = sn / n;
    const kb_v4 x[4] = {cs, k * r[1], k * r[2], k * r[3]};
    kb_v4 s[4];
    kb_v4_qmul(p, x, s);
    for (int j = 0; j < 4; j++)
        out[j] = kb_v4_select(apart, s[j], p[j]);
}

#endif

/* One squad value, c = (q0, a, b, q1), lg = (log(q0* q1), log(a* b)).  With
 * vector extensions it is lane 0 of squad_value4, so that a value never
 * depends on how queries were grouped. */
static inline void squad_value(const double *c, const double *lg, double e, double *out)
{
#if defined(KB_HAVE_VMATH)
    kb_v4 cv[16], lv[6], ov[4];
    for (int j = 0; j < 16; j++)
        cv[j] = kb_v4_splat(c[j]);
    for (int j = 0; j < 6; j++)
        lv[j] = kb_v4_splat(lg[j]);
    const kb_v4 ev = kb_v4_splat(e);
    squad_value4(cv, lv, &ev, ov);
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

/* Jet of squad along e: S = P exp(h M), M = log(P* Q), h = 2e(1 - e). */
static inline void squad_jet(const double *c, const double *lg, double e, double S[3][4])
{
    double P[3][4], Q[3][4], Pc[3][4], R[3][4], M[3][3], hM[3][3], X[3][4];
    slerp_jet(c, lg, e, P);
    slerp_jet(c + 4, lg + 3, e, Q);
    kb_qjet_conj(P, Pc);
    kb_qjet_mul(Pc, Q, R);
    kb_qjet_log(R, M);
    const double h = 2.0 * e * (1.0 - e), h1 = 2.0 - 4.0 * e, h2 = -4.0;
    for (int j = 0; j < 3; j++) {
        hM[0][j] = h * M[0][j];
        hM[1][j] = h1 * M[0][j] + h * M[1][j];
        hM[2][j] = h2 * M[0][j] + 2.0 * h1 * M[1][j] + h * M[2][j];
    }
    kb_qjet_exp(hM, X);
    kb_qjet_mul(P, X, S);
}

#endif /* KB_SQUAD_H */
