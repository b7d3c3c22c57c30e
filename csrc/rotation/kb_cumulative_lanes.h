/*
 * kb_cumulative_lanes.h -- private: the cumulative cubic's values and jets
 * KB_LANES at a time, the formulas of kb_cumulative.h's cumulative_value
 * and cumulative_jet lane by lane, with kb_squad_lanes.h's products, exps
 * and rates.  Included by kb_cumulative.h once per vector width through
 * kb_lanes.h (which defines KB_V, KB_M, KB_LANES and KB_VFN).
 * No include guard: meant to be included twice.
 *
 * A segment's vectors cv (KB_CUMULATIVE_VECTORS): q0 in cv[0 .. 4), the
 * logs (spin, w1, w2, w3) in cv[4 .. 16), as in its record, then the
 * logs' norms in cv[16 .. 20) and their reciprocals in cv[20 .. 24), so
 * that each factor exp(b w) is exp_log's (cos(b |w|), sin(b |w|) / |w| w):
 * no square root or division per query.
 */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif

/* The records (rec, `stride` doubles apart) of cumulative segments
 * seg[0 .. KB_LANES), lane by lane, into cv.  One segment in every lane is
 * broadcast with its norms taken once (cumulative_log_norms); otherwise the
 * lanes are gathered and the norms taken in the vector lanes: the same
 * correctly rounded square roots and quotients, so the same bits.
 * Returns the lanes (a bit each) whose logs are too long for the vector
 * sine: exp_log's arguments b |w| have b in [0, 1] inside the domain, so
 * they stay within KB_VMATH_MAX_ARG where every |w| does.  Those lanes'
 * results are not valid (multi-turn spins of more than 10^5 radians). */
KB_INLINE int KB_VFN(load_cumulative)(const double *rec, ptrdiff_t stride, const ptrdiff_t *seg,
                                      int one_segment, KB_V *cv)
{
    if (one_segment) {
        const double *r = rec + seg[0] * stride;
        double norms[8];
        cumulative_log_norms(r + KB_CUMULATIVE_LOGS, norms);
        for (int j = 0; j < 16; j++)
            cv[j] = KB_VFN(splat)(r[j]);
        for (int j = 0; j < 8; j++)
            cv[16 + j] = KB_VFN(splat)(norms[j]);
    } else {
        for (int l = 0; l < KB_LANES; l++) {
            const double *r = rec + seg[l] * stride;
            for (int j = 0; j < 16; j++)
                cv[j][l] = r[j];
        }
        for (int i = 0; i < 4; i++) {  /* cumulative_log_norms, lane by lane */
            const KB_V *w = cv + KB_CUMULATIVE_LOGS + 3 * i;
            cv[16 + i] = KB_VFN(sqrt)(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
            cv[20 + i] = 1.0 / cv[16 + i];
        }
    }
    KB_M near = cv[16] <= KB_VMATH_MAX_ARG;  /* (a NaN norm counts as too long) */
    for (int i = 1; i < 4; i++)
        near &= cv[16 + i] <= KB_VMATH_MAX_ARG;
    int far = 0;
    for (int l = 0; l < KB_LANES; l++)
        far |= !near[l] << l;
    return far;
}

/* cumulative_basis's functions of e, lane by lane: b[i] = (b_i, b_i',
 * b_i''), e for the spin, then B1, B2, B3. */
KB_INLINE void KB_VFN(cumulative_basis)(KB_V e, KB_V b[4][3])
{
    KB_CUMULATIVE_BASIS(KB_V, e, b, KB_VFN(splat)(1.0), KB_VFN(splat)(0.0));
}

/* KB_LANES values of cumulative segments: q0 times the four factors
 * exp(b_i(e) w_i), each applied by slerp_log. */
KB_INLINE void KB_VFN(cumulative_value)(const KB_V *cv, KB_V e, KB_V out[4])
{
    KB_V b[4][3], r[4];
    KB_VFN(cumulative_basis)(e, b);
    for (int j = 0; j < 4; j++)
        out[j] = cv[j];
    for (int i = 0; i < 4; i++) {
        KB_VFN(slerp_log)(b[i][0], out, cv + KB_CUMULATIVE_LOGS + 3 * i, cv[16 + i],
                          cv[20 + i], r);
        for (int j = 0; j < 4; j++)
            out[j] = r[j];
    }
}

/* KB_LANES jets of cumulative segments along e, to the given order (2, or 1
 * for angular velocity: a constant, so the second derivatives' code folds
 * away).  Each factor X = exp(b w) has X' = b' w X and
 * X'' = (b'' w - b'^2 |w|^2) X, as w commutes with X; with X = (c, k w),
 * w X = (-k |w|^2, c w) exactly (w x w = 0), which is (-(w . X_vec), c w).
 * The product q0 X_0 X_1 X_2 X_3 is taken by jet multiplication, the first
 * factor's directly (q0 is constant). */
KB_INLINE void KB_VFN(cumulative_jet)(const KB_V *cv, KB_V e, int order, KB_V S[3][4])
{
    KB_V b[4][3], X[3][4], T[3][4];
    KB_VFN(cumulative_basis)(e, b);
    for (int i = 0; i < 4; i++) {
        const KB_V *w = cv + KB_CUMULATIVE_LOGS + 3 * i, norm = cv[16 + i];
        KB_VFN(exp_log)(b[i][0], w, norm, cv[20 + i], X[0]);
        const KB_V wx[4] = {-(w[0] * X[0][1] + w[1] * X[0][2] + w[2] * X[0][3]),
                            X[0][0] * w[0], X[0][0] * w[1], X[0][0] * w[2]};
        const KB_V b1 = b[i][1], b2 = b[i][2], bw = b1 * b1 * (norm * norm);
        for (int j = 0; j < 4; j++) {
            X[1][j] = b1 * wx[j];
            if (order > 1)
                X[2][j] = b2 * wx[j] - bw * X[0][j];
        }
        if (i == 0) {
            for (int k = 0; k <= order; k++)
                KB_VFN(qmul)(cv, X[k], S[k]);
            continue;
        }
        KB_VFN(qjet_mul)(S, X, order, T);
        for (int k = 0; k <= order; k++)
            for (int j = 0; j < 4; j++)
                S[k][j] = T[k][j];
    }
}

/* Angular velocity (nu 1) or acceleration (nu 2), world or body frame, of
 * KB_LANES queries on cumulative segments: the jet to the order needed,
 * then the squad lanes' rates, with de/dt = s1 and d2e/dt2 = s2. */
KB_INLINE void KB_VFN(cumulative_rates)(const KB_V *cv, KB_V e, KB_V s1, KB_V s2, int nu,
                                        int body, KB_V w[3])
{
    KB_V S[3][4];
    if (nu == 1)
        KB_VFN(cumulative_jet)(cv, e, 1, S);
    else
        KB_VFN(cumulative_jet)(cv, e, 2, S);
    KB_VFN(rates)(S, s1, s2, nu, body, w);
}
