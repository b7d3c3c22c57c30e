/* kb_rot_segment.c -- which construction a rotation segment takes: squad
 * where a bound on its angular speed proves it well-conditioned, else the
 * cumulative cubic of kb_cumulative.h with the same ends and end angular
 * velocities.
 *
 * Why: squad is slerp(h, P, Q) between its inner curves P = slerp(u, q0, q1)
 * and Q = slerp(u, a, b), h = 2u(1-u).  With large tangents P and Q come
 * near antipodal (theta, the angle between them in S^3, near pi), where the
 * axis of log(P* Q) swings and the rotation spikes.  Per unit u, with
 * S = P exp(h M), M = log(P* Q), R = P* Q:
 *   |S'| <= |P'| + |(h M)'| <= |L| + |h'| theta + h |M'|,
 *   |M'| <= theta / sin(theta) |R'|,   |R'| <= |L| + |Lab| = rho,
 * (exp is a contraction in its derivative; log stretches by at most
 * theta / sin theta), and theta is Lipschitz in u with constant rho.  Theta
 * is sampled at N + 1 points; between two, it is at most the tent over them.
 * Squad is kept where this bounds |S'| by 2 max(|T0|, |T1|) + pi, i.e. its
 * angular speed by the SPEC's 2 max(|w(t_n+)|, |w(t_(n+1)-)|) + 2 pi / dt.
 * The cumulative cubic without spin always meets that bound: its |S'| is at
 * most max(|T0|, |T1|) + 3/2 |w2| <= 2 max(|T0|, |T1|) + 3/4 pi, as |w2| is
 * the angle between exp(w1) and q0* q1 exp(-w3), at most |w1| + |L| + |w3|
 * (kb_cumulative.h).  On a spin L (multi-turn segments) it is at most
 * |L| + 3/2 max(|T0 - L|, |T1 - L|) + 3/2 pi, as |w2| <= |w1| + |w3| + pi.
 */
#include "kb_internal.h"
#include "quat/kb_quat.h"
#include "rotation/kb_rot_segment.h"

#define SAMPLES 8  /* intervals over which theta is bounded */

static double norm3(const double *v)
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* theta(u): the angle between P(u) = exp(u L) and Q(u) = A exp(u Lab) in S^3
 * (both taken relative to q0, which leaves it unchanged). */
static double inner_angle(const double *L, const double *A, const double *Lab, double u)
{
    const double mu[3] = {-u * L[0], -u * L[1], -u * L[2]};
    const double ub[3] = {u * Lab[0], u * Lab[1], u * Lab[2]};
    double p[4], q[4], t[4], r[4];
    kb_qexp(mu, p);
    kb_qexp(ub, q);
    kb_qmul(p, A, t);
    kb_qmul(t, q, r);
    return atan2(norm3(r + 1), r[0]);
}

int kb_squad_is_certified(const double *L, const double *T0, const double *T1,
                          const double *Lab)
{
    double ha[3], hb[3];
    for (int j = 0; j < 3; j++) {
        ha[j] = 0.5 * (T0[j] - L[j]);
        hb[j] = 0.5 * (L[j] - T1[j]);
    }
    /* squad's end velocities are its tangents only while exp does not wrap */
    if (!(norm3(ha) < KB_PI && norm3(hb) < KB_PI))
        return 0;
    const double limit = 2.0 * fmax(norm3(T0), norm3(T1)) + KB_PI;
    const double nL = norm3(L), rho = nL + norm3(Lab);
    /* At a glance, for most segments (short, with moderate tangents): theta
     * starts at |ha| and is rho-Lipschitz, so every sampled theta below is
     * at most |ha| + rho (with room to spare); the bound grows with theta, dh <= 2 and h <= 1/2,
     * so where it holds there it holds at every sample (the margins cover
     * the samples' rounding), and the sampling's 19 exps are not needed. */
    const double top = (norm3(ha) + rho * (1.0 + 0.5 / SAMPLES)) * (1.0 + 1e-12) + 1e-12;
    /* the same test without a sine where top <= 1, as top / sin(top) <=
     * 1.19 there (taken as 1.25, the sums rounding no lower): it holds
     * here only where it holds below */
    if (top <= 1.0 && (nL + 2.0 * top + 0.625 * rho) * (1.0 + 1e-12) <= limit)
        return 1;
    if (top < 0.95 * KB_PI &&
        (nL + 2.0 * top + 0.5 * (top > 1e-8 ? top / sin(top) : 1.0) * rho) * (1.0 + 1e-12)
            <= limit)
        return 1;
    double A[4], prev;
    kb_qexp(ha, A);
    prev = inner_angle(L, A, Lab, 0.0);
    for (int k = 0; k < SAMPLES; k++) {
        const double u0 = (double)k / SAMPLES, u1 = (double)(k + 1) / SAMPLES;
        const double next = inner_angle(L, A, Lab, u1);
        const double theta = fmin(0.5 * (prev + next + rho / SAMPLES), KB_PI);
        prev = next;
        if (!(theta < 0.95 * KB_PI))
            return 0;
        const double dh = fmax(fabs(2.0 - 4.0 * u0), fabs(2.0 - 4.0 * u1));
        const double mid = fmin(fmax(0.5, u0), u1), h = 2.0 * mid * (1.0 - mid);
        const double stretch = theta > 1e-8 ? theta / sin(theta) : 1.0;
        if (!(nL + dh * theta + h * stretch * rho <= limit))
            return 0;
    }
    return 1;
}

static void scaled_exp(double k, const double *v, double *q)
{
    const double kv[3] = {k * v[0], k * v[1], k * v[2]};
    kb_qexp(kv, q);
}

/* The log of unit q nearest to `target` among those no longer than `limit`
 * (the logs of q are (theta + 2 pi k) n for whole k; the shortest, k = 0,
 * is never longer than limit here, up to rounding). */
static void log_near(const double *q, const double *target, double limit, double *out)
{
    double v[3];
    kb_qlog(q, v);
    const double theta = norm3(v), tn = norm3(target);
    double n[3] = {1.0, 0.0, 0.0};
    if (theta > 0.0)
        for (int j = 0; j < 3; j++)
            n[j] = v[j] / theta;
    else if (tn > 0.0)   /* the identity: any axis; the target's */
        for (int j = 0; j < 3; j++)
            n[j] = target[j] / tn;
    const double along = target[0] * n[0] + target[1] * n[1] + target[2] * n[2];
    /* the limit is met with equality when every log is parallel: leave
     * rounding room */
    limit = limit * (1.0 + 1e-12) + 1e-12;
    double k = nearbyint((along - theta) / (2.0 * KB_PI));
    k = fmin(k, floor((limit - theta) / (2.0 * KB_PI)));
    k = fmax(k, ceil((-limit - theta) / (2.0 * KB_PI)));
    for (int j = 0; j < 3; j++)
        out[j] = (theta + 2.0 * KB_PI * k) * n[j];
}

void kb_cumulative_segment(const double *q0, const double *q1, const double *L, int spin,
                           const double *T0, const double *T1, double *ctrl, double *logs)
{
    double *s = logs, *w1 = logs + 3, *w2 = logs + 6, *w3 = logs + 9;
    double e1[4], e3[4], es[4], t[4], r[4], target[3];
    for (int j = 0; j < 3; j++) {
        s[j] = spin ? L[j] : 0.0;
        w1[j] = (T0[j] - s[j]) / 3.0;
        w3[j] = (T1[j] - s[j]) / 3.0;
        target[j] = L[j] - s[j] - w1[j] - w3[j];
    }
    /* w2: a log of exp(-w1) exp(-s) q0* q1 exp(-w3), the rotation left
     * between the end pieces, towards q1 itself (not -q1) so the segment
     * ends on it; of those, the one nearest what the logs leave when they
     * commute, so the segment turns as its keys say (a spin's turns are not
     * unwound).  Without a spin, no longer than |w1| + |L| + |w3| (the
     * shortest always is), which keeps the angular speed bound; on a spin
     * the nearest is within pi of that anyway */
    scaled_exp(-1.0, w1, e1);
    scaled_exp(-1.0, w3, e3);
    scaled_exp(-1.0, s, es);
    kb_qmul_conj_left(q0, q1, r);
    kb_qmul(es, r, t);
    kb_qmul(e1, t, r);
    kb_qmul(r, e3, t);
    log_near(t, target, spin ? HUGE_VAL : norm3(w1) + norm3(L) + norm3(w3), w2);
    /* the control points of its Bezier form: q0, q0 exp(w1), q1 exp(-w3), q1 */
    scaled_exp(1.0, w1, e1);
    for (int j = 0; j < 4; j++) {
        ctrl[j] = q0[j];
        ctrl[12 + j] = q1[j];
    }
    kb_qmul(q0, e1, ctrl + 4);
    kb_qmul(q1, e3, ctrl + 8);
}

void kb_compab_chord(const double *L, double *out)
{
    const double half_angle = norm3(L);
    if (2.0 * half_angle > 2.0 * KB_PI - 1e-5) {
        /* a spin key: the log of the half turn about its axis, (axis, 0) */
        for (int j = 0; j < 3; j++)
            out[j] = 0.5 * KB_PI * L[j] / half_angle;
        return;
    }
    double q[4];
    kb_qexp(L, q);
    if (q[0] < 0.0)  /* the shorter arc: qlndif of sign-aligned keys */
        for (int j = 0; j < 4; j++)
            q[j] = -q[j];
    kb_qlog(q, out);
}
