/*
 * kb_squad_lanes.h -- private: squad values KB_LANES at a time, included by
 * kb_squad.h once per vector width (see kb_vmath_lanes.h for the macros).
 * No include guard: meant to be included twice.
 */

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

/* A squad segment's control points q0 and a (c, 8) and logs lg (6) in every
 * lane. */
KB_INLINE void KB_VFN(splat_segment)(const double *c, const double *lg, KB_V *cv, KB_V *lv)
{
    for (int j = 0; j < 8; j++)
        cv[j] = KB_VFN(splat)(c[j]);
    for (int j = 0; j < 6; j++)
        lv[j] = KB_VFN(splat)(lg[j]);
}

/* The records (rec, `stride` doubles apart, their logs from `logs`) of
 * segments seg[0 .. n) in lanes 0 .. n, the lanes past n repeating the
 * first: q0 and a (cv, 8) and the logs (lv, 6).  One segment in every lane
 * is broadcast (sorted queries, mostly), not gathered. */
KB_INLINE void KB_VFN(load_segments)(const double *rec, ptrdiff_t stride, ptrdiff_t logs,
                                      const ptrdiff_t *seg, int n, KB_V *cv, KB_V *lv)
{
    int one_segment = 1;
    for (int l = 1; l < n; l++)
        one_segment &= seg[l] == seg[0];
    if (one_segment) {
        const double *r = rec + seg[0] * stride;
        KB_VFN(splat_segment)(r, r + logs, cv, lv);
        return;
    }
    for (int l = 0; l < KB_LANES; l++) {
        const double *r = rec + seg[l < n ? l : 0] * stride;
        for (int j = 0; j < 8; j++)
            cv[j][l] = r[j];
        for (int j = 0; j < 6; j++)
            lv[j][l] = r[logs + j];
    }
}

/* p exp(e L) for pure L of norm `norm`: (cos a, sin a / norm L), a = e norm;
 * sin a / norm tends to e as norm -> 0. */
KB_INLINE void KB_VFN(slerp_log)(KB_V e, const KB_V *p, const KB_V *L, KB_V norm,
                                KB_V *out)
{
    KB_V s, c;
    KB_VFN(sincos)(e * norm, &s, &c);
    const KB_V k = KB_VFN(select)(norm > 0.0, s / norm, e);
    const KB_V x[4] = {c, k * L[0], k * L[1], k * L[2]};
    KB_VFN(qmul)(p, x, out);
}

/*
 * KB_LANES squad values at once, lane by lane: control points c (16 vectors:
 * q0, a, b, q1), logs lg (6 vectors: log(q0* q1), log(a* b)), parameters *ep.
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
    KB_VFN(slerp_log)(e, c, lg, KB_VFN(sqrt)(lg[0] * lg[0] + lg[1] * lg[1] + lg[2] * lg[2]), p);
    KB_VFN(slerp_log)(e, c + 4, lg + 3, KB_VFN(sqrt)(lg[3] * lg[3] + lg[4] * lg[4] + lg[5] * lg[5]),
                    q);
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

