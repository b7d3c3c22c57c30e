/*
 * kb_cumulative.h -- private: the cumulative cubic on SO(3) (Kim, Kim & Shin
 * 1995) that stands in for squad on segments where squad is ill-conditioned
 * and on multi-turn segments (see kb_rot_segment.c), and the dispatch.
 *
 *   S(e) = q0 exp(e s) exp(B1(e) w1) exp(B2(e) w2) exp(B3(e) w3)
 *
 * with the cumulative Bernstein basis B1 = 1 - (1 - e)^3, B2 = 3e^2 - 2e^3,
 * B3 = e^3, a uniform spin s (0, or the whole log of a multi-turn segment)
 * and logs w1 = (T0 - s) / 3, w3 = (T1 - s) / 3 (from the segment's per-u
 * log tangents, in the frames of q0 and q1) and w2 = log(exp(-w1) exp(-s)
 * q0* q1 exp(-w3)).  So S(0) = q0, S(1) = q1, S'(0) = q0 T0, S'(1) = q1 T1:
 * the same ends and end angular velocities as squad.  Each factor
 * X = exp(b w) has X' = b' w X, so the angular speed per unit e is at most
 * 2 (|s| + 3(1-e)^2 |w1| + 6e(1-e) |w2| + 3e^2 |w3|).
 *
 * cumulative_value and cumulative_jet use the C library's sine and cosine;
 * evaluation runs the same formulas four or eight queries at a time
 * (kb_cumulative_lanes.h) and keeps these for logs too long for the
 * vector sine, for queries outside the domain and for the angle tables.
 */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_CUMULATIVE_H
#define KB_CUMULATIVE_H

#include <string.h>

#include "rotation/kb_squad.h"

/* The four factors' functions of e with their first and second
 * derivatives, b[i] = (b_i, b_i', b_i''): e for the spin, then B1, B2, B3;
 * for T double or a vector type (kb_cumulative_lanes.h), one and zero
 * being 1 and 0 of type T: the same expressions, so the same bits. */
#define KB_CUMULATIVE_BASIS(T, e, b, one, zero)                                   \
    do {                                                                          \
        const T f = 1.0 - (e);                                                    \
        b[0][0] = (e);                                                            \
        b[0][1] = (one);                                                          \
        b[0][2] = (zero);                                                         \
        b[1][0] = 1.0 - f * f * f;                                                \
        b[1][1] = 3.0 * f * f;                                                    \
        b[1][2] = -6.0 * f;                                                       \
        b[2][0] = (e) * (e) * (3.0 - 2.0 * (e));                                  \
        b[2][1] = 6.0 * (e) * f;                                                  \
        b[2][2] = 6.0 - 12.0 * (e);                                               \
        b[3][0] = (e) * (e) * (e);                                                \
        b[3][1] = 3.0 * (e) * (e);                                                \
        b[3][2] = 6.0 * (e);                                                      \
    } while (0)

static inline void cumulative_basis(double e, double b[4][3])
{
    KB_CUMULATIVE_BASIS(double, e, b, 1.0, 0.0);
}

/* Value of a cumulative segment: q0 and w = (s, w1, w2, w3). */
static inline void cumulative_value(const double *q0, const double *w, double e, double *out)
{
    double b[4][3], x[4], r[4], p[4] = {q0[0], q0[1], q0[2], q0[3]};
    cumulative_basis(e, b);
    for (int i = 0; i < 4; i++) {
        const double v[3] = {b[i][0] * w[3 * i], b[i][0] * w[3 * i + 1], b[i][0] * w[3 * i + 2]};
        kb_qexp(v, x);
        kb_qmul(p, x, r);
        for (int j = 0; j < 4; j++)
            p[j] = r[j];
    }
    for (int j = 0; j < 4; j++)
        out[j] = p[j];
}

/* Jet of a cumulative segment along e.  Each factor X = exp(B w) has
 * X' = B' w X and X'' = (B'' w - B'^2 |w|^2) X, as w commutes with X. */
static inline void cumulative_jet(const double *q0, const double *w, double e, double S[3][4])
{
    double b[4][3], X[3][4], P[3][4], T[3][4];
    cumulative_basis(e, b);
    for (int k = 0; k < 4; k++) {
        P[0][k] = q0[k];
        P[1][k] = P[2][k] = 0.0;
    }
    for (int i = 0; i < 4; i++) {
        const double *wi = w + 3 * i;
        const double wq[4] = {0.0, wi[0], wi[1], wi[2]};
        const double v[3] = {b[i][0] * wi[0], b[i][0] * wi[1], b[i][0] * wi[2]};
        const double w2 = wi[0] * wi[0] + wi[1] * wi[1] + wi[2] * wi[2];
        double wx[4];
        kb_qexp(v, X[0]);
        kb_qmul(wq, X[0], wx);
        for (int k = 0; k < 4; k++) {
            X[1][k] = b[i][1] * wx[k];
            X[2][k] = b[i][2] * wx[k] - b[i][1] * b[i][1] * w2 * X[0][k];
        }
        kb_qjet_mul(P, X, T);
        memcpy(P, T, sizeof P);
    }
    memcpy(S, P, sizeof P);
}

/* A segment record (kb_rot_build's seg, KB_ROT_SEG doubles): squad reads
 * its control points q0 and a, then its logs from KB_SQUAD_LOGS; the
 * cumulative cubic reads q0, then its logs (spin, w1, w2, w3) from
 * KB_CUMULATIVE_LOGS.  Evaluation never reads b and q1 (kb_rot_build's ctrl
 * has them), so records leave them out. */
enum { KB_SQUAD_LOGS = 8, KB_CUMULATIVE_LOGS = 4 };

#if defined(KB_HAVE_VMATH)

/* Per segment in the vector lanes: q0 and the four logs (its record's 16
 * doubles), each log's norm and the norm's reciprocal. */
enum { KB_CUMULATIVE_VECTORS = 24 };

/* The norms of the logs w (spin, w1, w2, w3), then their reciprocals (inf
 * for a zero log: exp_log selects). */
static inline void cumulative_log_norms(const double *w, double out[8])
{
    for (int i = 0; i < 4; i++) {
        const double *v = w + 3 * i;
        out[i] = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        out[4 + i] = 1.0 / out[i];
    }
}

#define KB_LANES_FILE "rotation/kb_cumulative_lanes.h"
#include "simd/kb_lanes.h"
#undef KB_LANES_FILE

#endif

/* The record of a segment from its control points c (16) and logs lg (12). */
static inline void rot_segment_pack(unsigned char kind, const double *c, const double *lg,
                                    double *rec)
{
    const int cumulative = kind == KB_SEG_CUMULATIVE;
    const int n_ctrl = cumulative ? KB_CUMULATIVE_LOGS : KB_SQUAD_LOGS;
    const int n_logs = cumulative ? 12 : 6;
    memset(rec, 0, KB_ROT_SEG * sizeof *rec);
    memcpy(rec, c, (size_t)n_ctrl * sizeof *rec);
    memcpy(rec + n_ctrl, lg, (size_t)n_logs * sizeof *rec);
}

/* One rotation segment's jet, squad or cumulative by its kind, from its
 * record. */
static inline void rot_segment_jet(unsigned char kind, const double *rec, double e,
                                   double S[3][4])
{
    if (kind == KB_SEG_CUMULATIVE)
        cumulative_jet(rec, rec + KB_CUMULATIVE_LOGS, e, S);
    else
        squad_jet(rec, rec + KB_SQUAD_LOGS, e, S);
}

#endif /* KB_CUMULATIVE_H */
