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

/* p exp(e L), given |L| = norm: (cos a, sin a / norm L) with a = e norm,
 * which is exp's (cos a, sin a / a e L) without forming e L; sin a / norm
 * tends to e as norm -> 0. */
static inline void slerp_log_norm(double e, const double *p, const double *L, double norm,
                                  double *out)
{
    double s, c;
    kb_sincos(e * norm, &s, &c);
    const double k = norm > 0.0 ? s / norm : e;
    const double x[4] = {c, k * L[0], k * L[1], k * L[2]};
    kb_qmul(p, x, out);
}

/* squad(q0, a, b, q1; e) = slerp(2e(1-e), slerp(e, q0, q1), slerp(e, a, b)),
 * the two inner slerps from their precomputed logs and the norms of those,
 * lg_norm.  The outer one is p exp(h log(p* q)): with p* q = (w, v) and
 * theta = atan2(|v|, w), exp(h log) = (cos h theta, sin(h theta) / |v| v). */
static inline void squad_value(const double *c, const double *lg, const double *lg_norm,
                               double e, double *out)
{
    double p[4], qq[4], r[4];
    slerp_log_norm(e, c, lg, lg_norm[0], p);
    slerp_log_norm(e, c + 4, lg + 3, lg_norm[1], qq);
    kb_qmul_conj_left(p, qq, r);
    const double n = sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    if (!(n > 0.0)) {  /* p = +-q: log is 0 (kb_qlog takes 0 for -1 too) */
        for (int j = 0; j < 4; j++)
            out[j] = p[j];
        return;
    }
    double sn, cs;
    kb_sincos(2.0 * e * (1.0 - e) * atan2(n, r[0]), &sn, &cs);
    const double k = sn / n;
    const double x[4] = {cs, k * r[1], k * r[2], k * r[3]};
    kb_qmul(p, x, out);
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
