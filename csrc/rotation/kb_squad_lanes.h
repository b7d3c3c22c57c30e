/*
 * kb_squad_lanes.h -- private: squad values and jets KB_LANES at a time,
 * included by kb_squad.h once per vector width through kb_lanes.h (which
 * defines KB_V, KB_M, KB_LANES and KB_VFN).
 * No include guard: meant to be included twice.
 */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif

/* kb_qmul on KB_LANES quaternions at once, one vector per component. */
KB_INLINE void KB_VFN(qmul)(const KB_V *a, const KB_V *b, KB_V *out)
{
    const KB_V w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    const KB_V x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    const KB_V y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    const KB_V z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    out[0] = w;
    out[1] = x;
    out[2] = y;
    out[3] = z;
}

/* A squad segment's vectors in every lane, from its control points c (q0,
 * a) and logs lg: cv (8) holds q0 and a, lv (KB_SEGMENT_VECTORS) the logs
 * and squad_log_norms. */
KB_INLINE void KB_VFN(splat_segment)(const double *c, const double *lg, KB_V *cv, KB_V *lv)
{
    double norms[4];
    squad_log_norms(lg, norms);
    for (int j = 0; j < 8; j++)
        cv[j] = KB_VFN(splat)(c[j]);
    for (int j = 0; j < 6; j++)
        lv[j] = KB_VFN(splat)(lg[j]);
    for (int j = 0; j < 4; j++)
        lv[6 + j] = KB_VFN(splat)(norms[j]);
}

/* The records (rec, `stride` doubles apart, their logs from `logs`) of
 * segments seg[0 .. KB_LANES), lane by lane (splat_segment's cv and lv).
 * One segment in every lane, where the caller knows it (sorted queries,
 * mostly), is one broadcast; two runs of lanes (a group straddling a knot)
 * are two blended; otherwise (random queries) the lanes are gathered and
 * the norms taken in the vector lanes, the same correctly rounded square
 * roots and quotients. */
KB_INLINE void KB_VFN(load_segments)(const double *rec, ptrdiff_t stride, ptrdiff_t logs,
                                      const ptrdiff_t *seg, int one_segment, KB_V *cv,
                                      KB_V *lv)
{
    if (one_segment) {
        KB_VFN(splat_segment)(rec + seg[0] * stride, rec + seg[0] * stride + logs, cv, lv);
        return;
    }
    int second = 0, runs = 1;  /* where the second run starts; how many */
    for (int l = 1; l < KB_LANES; l++)
        if (seg[l] != seg[l - 1]) {
            second = runs == 1 ? l : second;
            runs++;
        }
    if (runs == 2) {
        const double *r0 = rec + seg[0] * stride, *r1 = rec + seg[second] * stride;
        KB_V cr[8], lr[KB_SEGMENT_VECTORS];
        KB_VFN(splat_segment)(r0, r0 + logs, cv, lv);
        KB_VFN(splat_segment)(r1, r1 + logs, cr, lr);
        KB_M lane = {0};
        for (int l = 0; l < KB_LANES; l++)
            lane[l] = l;
        const KB_M from_second = lane >= second;
        for (int j = 0; j < 8; j++)
            cv[j] = KB_VFN(select)(from_second, cr[j], cv[j]);
        for (int j = 0; j < KB_SEGMENT_VECTORS; j++)
            lv[j] = KB_VFN(select)(from_second, lr[j], lv[j]);
        return;
    }
    for (int l = 0; l < KB_LANES; l++) {
        const double *r = rec + seg[l] * stride;
        for (int j = 0; j < 8; j++)
            cv[j][l] = r[j];
        for (int j = 0; j < 6; j++)
            lv[j][l] = r[logs + j];
    }
    for (int i = 0; i < 2; i++) {  /* squad_log_norms, lane by lane */
        const KB_V *L = lv + 3 * i;
        lv[6 + 2 * i] = KB_VFN(sqrt)(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
        lv[7 + 2 * i] = 1.0 / lv[6 + 2 * i];
    }
}

/* exp(e L) for pure L of norm `norm` (its reciprocal `inv`): (cos a,
 * sin a / norm L), a = e norm; sin a / norm tends to e as norm -> 0.  The
 * caller keeps |a| within KB_VMATH_MAX_ARG. */
KB_INLINE void KB_VFN(exp_log)(KB_V e, const KB_V *L, KB_V norm, KB_V inv, KB_V *x)
{
    KB_V s, c;
    KB_VFN(sincos)(e * norm, &s, &c);
    const KB_V k = KB_VFN(select)(norm > 0.0, s * inv, e);
    x[0] = c;
    x[1] = k * L[0];
    x[2] = k * L[1];
    x[3] = k * L[2];
}

/* p exp(e L), exp_log's factor applied to p. */
KB_INLINE void KB_VFN(slerp_log)(KB_V e, const KB_V *p, const KB_V *L, KB_V norm, KB_V inv,
                                KB_V *out)
{
    KB_V x[4];
    KB_VFN(exp_log)(e, L, norm, inv, x);
    KB_VFN(qmul)(p, x, out);
}

/*
 * KB_LANES squad values at once, lane by lane: control points c (8 vectors:
 * q0, a), logs lg (KB_SEGMENT_VECTORS: log(q0* q1), log(a* b), their norms
 * and reciprocals), parameters *ep.
 * squad(q0, a, b, q1; e) = slerp(2e(1-e), slerp(e, q0, q1), slerp(e, a, b)):
 * the inner slerps from their logs; the outer one is P exp(h log(P* Q)), and
 * with P* Q = (w, v), theta = atan2(|v|, w): exp(h log) = (cos h theta,
 * sin(h theta) / |v| v).  Arguments stay within [0, pi] (e in [0, 1], log
 * norms at most pi), where the vector sine and cosine are exact to an ulp.
 */
KB_INLINE void KB_VFN(squad_value)(const KB_V *c, const KB_V *lg, const KB_V *ep, KB_V *out)
{
    const KB_V e = *ep;
    KB_V p[4], q[4], r[4];
    KB_VFN(slerp_log)(e, c, lg, lg[6], lg[7], p);
    KB_VFN(slerp_log)(e, c + 4, lg + 3, lg[8], lg[9], q);
    const KB_V pc[4] = {p[0], -p[1], -p[2], -p[3]};
    KB_VFN(qmul)(pc, q, r);
    const KB_V n = KB_VFN(sqrt)(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    const KB_M apart = n > 0.0;  /* else p = +-q: log is 0 (kb_qlog takes 0 for -1 too) */
    KB_V sn, cs;
    KB_VFN(sincos)(2.0 * e * (1.0 - e) * KB_VFN(atan2_upper)(n, r[0]), &sn, &cs);
    const KB_V k = sn / n;
    const KB_V x[4] = {cs, k * r[1], k * r[2], k * r[3]};
    KB_V s[4];
    KB_VFN(qmul)(p, x, s);
    for (int j = 0; j < 4; j++)
        out[j] = KB_VFN(select)(apart, s[j], p[j]);
}

/* ---- jets, KB_LANES at a time: the scalar jets of kb_quat.h, lane by lane */
/* `order` is 2, or 1 where only first derivatives are wanted (angular
 * velocity): a constant, so the second derivatives' code folds away; the
 * first derivatives are the same either way, bit for bit. */

/* Jet of p exp(e L) along e: (P, P L, -|L|^2 P). */
KB_INLINE void KB_VFN(slerp_jet)(KB_V e, const KB_V *p, const KB_V *L, KB_V norm, KB_V inv,
                                 int order, KB_V out[3][4])
{
    const KB_V L2 = L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
    const KB_V Lq[4] = {KB_VFN(splat)(0.0), L[0], L[1], L[2]};
    KB_VFN(slerp_log)(e, p, L, norm, inv, out[0]);
    KB_VFN(qmul)(out[0], Lq, out[1]);
    for (int j = 0; order > 1 && j < 4; j++)
        out[2][j] = -L2 * out[0][j];
}

/* (ab)' = a'b + ab', (ab)'' = a''b + 2a'b' + ab'' */
KB_INLINE void KB_VFN(qjet_mul)(KB_V a[3][4], KB_V b[3][4], int order, KB_V out[3][4])
{
    KB_V t1[4], t2[4], t3[4];
    KB_VFN(qmul)(a[0], b[0], out[0]);
    KB_VFN(qmul)(a[1], b[0], t1);
    KB_VFN(qmul)(a[0], b[1], t2);
    for (int i = 0; i < 4; i++)
        out[1][i] = t1[i] + t2[i];
    if (order < 2)
        return;
    KB_VFN(qmul)(a[2], b[0], t1);
    KB_VFN(qmul)(a[1], b[1], t2);
    KB_VFN(qmul)(a[0], b[2], t3);
    for (int i = 0; i < 4; i++)
        out[2][i] = t1[i] + 2.0 * t2[i] + t3[i];
}

/* kb_qjet_log: both the series (theta < 0.1) and the closed forms are
 * computed, and each lane takes its own. */
KB_INLINE void KB_VFN(qjet_log)(KB_V q[3][4], int order, KB_V out[3][3])
{
    const KB_V n = KB_VFN(sqrt)(q[0][1] * q[0][1] + q[0][2] * q[0][2] + q[0][3] * q[0][3]);
    const KB_V th = KB_VFN(atan2_upper)(n, q[0][0]);
    const KB_V t2 = th * th, c = q[0][0];
    const KB_M near = th < 0.1;
    const KB_V g = KB_VFN(select)(near, KB_LOG_G_NEAR(t2), KB_LOG_G_FAR(th, n));
    const KB_V gw = KB_VFN(select)(near, KB_LOG_GW_NEAR(t2), KB_LOG_GW_FAR(th, c, n));
    const KB_V w1 = q[1][0], g1 = gw * w1;
    if (order < 2) {
        for (int i = 0; i < 3; i++)
            KB_JET_TIMES1(g, g1, q, i + 1, out, i);
        return;
    }
    const KB_V gww = KB_VFN(select)(near, KB_LOG_GWW_NEAR(t2), KB_LOG_GWW_FAR(th, c, n));
    const KB_V w2 = q[2][0], g2 = gww * w1 * w1 + gw * w2;
    for (int i = 0; i < 3; i++)
        KB_JET_TIMES(g, g1, g2, q, i + 1, out, i);
}

/* kb_qjet_exp: the series of Sn (s < 0.25) or the closed forms, per lane.
 * |v| <= pi/2 here (h <= 1/2, |log| <= pi), inside the vector sine's range. */
KB_INLINE void KB_VFN(qjet_exp)(KB_V v[3][3], int order, KB_V out[3][4])
{
    const KB_V s = v[0][0] * v[0][0] + v[0][1] * v[0][1] + v[0][2] * v[0][2];
    const KB_V s1 = 2.0 * (v[0][0] * v[1][0] + v[0][1] * v[1][1] + v[0][2] * v[1][2]);
    const KB_V a = KB_VFN(sqrt)(s);
    KB_V sin_a, C;
    KB_VFN(sincos)(a, &sin_a, &C);
    const double *c = kb_sinc_series;
    KB_V Sn0 = KB_VFN(splat)(0.0), Sn_s0 = Sn0, Sn_ss0 = Sn0;
    for (int k = 8; k >= 0; k--)
        Sn0 = Sn0 * s + c[k];
    for (int k = 8; k >= 1; k--)
        Sn_s0 = Sn_s0 * s + k * c[k];
    const KB_V Sn1 = sin_a / a, Sn_s1 = KB_SINC_S(C, Sn1, s);
    const KB_M small = s < 0.25;
    const KB_V Sn = KB_VFN(select)(small, Sn0, Sn1), Sn_s = KB_VFN(select)(small, Sn_s0, Sn_s1);
    const KB_V C_s = -0.5 * Sn, d1 = Sn_s * s1;
    out[0][0] = C;
    out[1][0] = C_s * s1;
    if (order < 2) {
        for (int i = 0; i < 3; i++)
            KB_JET_TIMES1(Sn, d1, v, i, out, i + 1);
        return;
    }
    for (int k = 8; k >= 2; k--)
        Sn_ss0 = Sn_ss0 * s + k * (k - 1) * c[k];
    const KB_V Sn_ss = KB_VFN(select)(small, Sn_ss0, KB_SINC_SS(Sn1, Sn_s1, s));
    const KB_V s2 = 2.0 * (v[1][0] * v[1][0] + v[1][1] * v[1][1] + v[1][2] * v[1][2] +
                            v[0][0] * v[2][0] + v[0][1] * v[2][1] + v[0][2] * v[2][2]);
    const KB_V C_ss = -0.5 * Sn_s;
    out[2][0] = C_ss * s1 * s1 + C_s * s2;
    const KB_V d2 = Sn_ss * s1 * s1 + Sn_s * s2;
    for (int i = 0; i < 3; i++)
        KB_JET_TIMES(Sn, d1, d2, v, i, out, i + 1);
}

/* KB_LANES squad jets along e at once (see squad_jet), to the given order. */
KB_INLINE void KB_VFN(squad_jet)(const KB_V *c, const KB_V *lg, const KB_V *ep, int order,
                          KB_V S[3][4])
{
    const KB_V e = *ep;
    KB_V P[3][4], Q[3][4], Pc[3][4], R[3][4], M[3][3], hM[3][3], X[3][4];
    KB_VFN(slerp_jet)(e, c, lg, lg[6], lg[7], order, P);
    KB_VFN(slerp_jet)(e, c + 4, lg + 3, lg[8], lg[9], order, Q);
    for (int k = 0; k < order + 1; k++) {
        Pc[k][0] = P[k][0];
        for (int j = 1; j < 4; j++)
            Pc[k][j] = -P[k][j];
    }
    KB_VFN(qjet_mul)(Pc, Q, order, R);
    KB_VFN(qjet_log)(R, order, M);
    const KB_V h = 2.0 * e * (1.0 - e), h1 = 2.0 - 4.0 * e;
    const double h2 = -4.0;
    for (int j = 0; j < 3; j++) {
        if (order > 1)
            KB_JET_TIMES(h, h1, h2, M, j, hM, j);
        else
            KB_JET_TIMES1(h, h1, M, j, hM, j);
    }
    KB_VFN(qjet_exp)(hM, order, X);
    KB_VFN(qjet_mul)(P, X, order, S);
}

/* Angular velocity (nu 1) or acceleration (nu 2), world or body frame, from
 * squad jets S along e and the parameter's time derivatives s1 = de/dt,
 * s2 = d2e/dt2 (S's second derivatives read for nu 2 only): velocity
 * 2 q' q* (body: 2 q* q'), acceleration 2 (q'' q* + q' q'*) (body:
 * 2 (q'* q' + q* q'')), vector parts. */
KB_INLINE void KB_VFN(rates)(KB_V S[3][4], KB_V s1, KB_V s2, int nu, int body, KB_V v[3])
{
    KB_V qd[4], qc[4], a[4];
    for (int j = 0; j < 4; j++) {
        qd[j] = S[1][j] * s1;
        qc[j] = j ? -S[0][j] : S[0][j];
    }
    if (nu == 1) {
        if (body)
            KB_VFN(qmul)(qc, qd, a);
        else
            KB_VFN(qmul)(qd, qc, a);
        for (int j = 0; j < 3; j++)
            v[j] = 2.0 * a[j + 1];
        return;
    }
    KB_V qdd[4], qdc[4], b[4];
    for (int j = 0; j < 4; j++) {
        qdd[j] = S[2][j] * s1 * s1 + S[1][j] * s2;
        qdc[j] = j ? -qd[j] : qd[j];
    }
    if (body) {
        KB_VFN(qmul)(qdc, qd, a);
        KB_VFN(qmul)(qc, qdd, b);
    } else {
        KB_VFN(qmul)(qdd, qc, a);
        KB_VFN(qmul)(qd, qdc, b);
    }
    for (int j = 0; j < 3; j++)
        v[j] = 2.0 * a[j + 1] + 2.0 * b[j + 1];
}

/* Angular velocity (nu 1) or acceleration (nu 2) of KB_LANES squad queries,
 * world or body frame: squad_jet to the order needed (a constant in each
 * call, so velocity's code has no second derivatives), then rates. */
KB_INLINE void KB_VFN(squad_rates)(const KB_V *c, const KB_V *lg, const KB_V *ep, KB_V s1,
                                   KB_V s2, int nu, int body, KB_V w[3])
{
    KB_V S[3][4];
    if (nu == 1)
        KB_VFN(squad_jet)(c, lg, ep, 1, S);
    else
        KB_VFN(squad_jet)(c, lg, ep, 2, S);
    KB_VFN(rates)(S, s1, s2, nu, body, w);
}
