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
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_SQUAD_H
#define KB_SQUAD_H

#include "quat/kb_quat.h"
#include "simd/kb_vmath.h"

#if defined(KB_HAVE_VMATH)

/* Per segment, besides its 6 logs: each log's norm and the norm's
 * reciprocal, computed once per segment rather than in every lane of every
 * group (the divider is squad's narrowest port). */
enum { KB_SEGMENT_VECTORS = 10 };

static inline void squad_log_norms(const double *lg, double out[4])
{
    for (int i = 0; i < 2; i++) {
        const double *L = lg + 3 * i;
        out[2 * i] = sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
        out[2 * i + 1] = 1.0 / out[2 * i];  /* inf for the identity: slerp_log selects */
    }
}

#define KB_LANES_FILE "rotation/kb_squad_lanes.h"
#include "simd/kb_lanes.h"
#undef KB_LANES_FILE

#endif

/* One squad value, c = (q0, a), lg = (log(q0* q1), log(a* b)).  With
 * vector extensions it is lane 0 of kb_v4_squad_value, so that a value never
 * depends on how queries were grouped. */
static inline void squad_value(const double *c, const double *lg, double e, double *out)
{
#if defined(KB_HAVE_VMATH)
    kb_v4 cv[8], lv[KB_SEGMENT_VECTORS], ov[4];
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
 * kb_v4_squad_jet, like squad_value; otherwise squad_jet_scalar. */
static inline void squad_jet(const double *c, const double *lg, double e, double S[3][4])
{
#if defined(KB_HAVE_VMATH)
    kb_v4 cv[8], lv[KB_SEGMENT_VECTORS], Sv[3][4];
    kb_v4_splat_segment(c, lg, cv, lv);
    const kb_v4 ev = kb_v4_splat(e);
    kb_v4_squad_jet(cv, lv, &ev, 2, Sv);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++)
            S[k][j] = Sv[k][j][0];
#else
    squad_jet_scalar(c, lg, e, S);
#endif
}

#endif /* KB_SQUAD_H */
