/* kb_reduce_sweep.h -- private: what the sweep of tangent keys
 * (kb_reduce_sweep.c) and its segment's fit and check (kb_reduce_sweep_fit.c)
 * share: constants, state, small helpers. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_REDUCE_SWEEP_H
#define KB_REDUCE_SWEEP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"
#include "spline/kb_locate.h"
#include "rotation/kb_rot_chords.h"
#include "quat/kb_quat.h"

#define SWEEP_ALPHA 0.006      /* the pull towards the frames' tangent, times dt^2 */
#define SWEEP_LOOK 3.0         /* the virtual next segment, in this one's frames, at most */
#define SWEEP_LOOK_LEAST 2     /* ... and at least this many */
#define SWEEP_FIRST_GUESS 4    /* the first segment's first candidate length */

typedef struct {
    const kb_reduce_joint *jt;
    ptrdiff_t F;
    double angle_tol, distance_tol;
    int rot_fit, tr_fit;       /* channels the fit shapes: finite tolerance, not constant */
    int rot_check, tr_check;   /* channels the real check measures: finite tolerance */
    double *q;                 /* (F, 4) unit frames */
    double *dq, *dx;           /* (F, 3) the frames' tangents (central differences) */
    double *logs;              /* (F, 3) log(q_s* q_f), short arc (value_at) */
    double *curve_q, *curve_x, *angle, *distance;  /* (F, 4), (F, 3), (F,), (F,) */
    kb_loc *loc;               /* (F,) */
    /* (F, 4) scratch, a model's residual before the fitted tangent's term
     * and that term's coefficient per frame, so that its check after the
     * fit takes no Hermite basis again: the segment's and the lookahead's */
    double *res_seg, *res_look;
    ptrdiff_t *run_q, *run_x;  /* (F,) the last frame g >= f with held the same over f..g */
    ptrdiff_t *hs_q, *hs_x;    /* (F,) the first frame of the run of frames equal to frame f */
    /* the last key: its frame, tangents and the sign kb_reduce_rebuild's
     * rotation spline gives its quaternion (each key on its predecessor's
     * side, from the first key as given) */
    ptrdiff_t s;
    double tq_s[3], tx_s[3], sign_s;
} sweep;

/* A candidate end's fit: its tangents, and what a Gauss-Newton step on
 * the rotation needs (the normal matrix, the inverse Jacobian at the
 * segment's log, the pull's weight). */
typedef struct {
    double tq[3], tx[3];
    double normal[9], jinv[9], lam;
} fit;

/* log(a* b) on the short arc (the scalar part made >= 0). */
static inline void short_log(const double *a, const double *b, double *v)
{
    double r[4];
    kb_qmul_conj_left(a, b, r);
    if (r[0] < 0.0)
        for (int c = 0; c < 4; c++)
            r[c] = -r[c];
    kb_qlog(r, v);
}

/* Unit quaternions without overflow or underflow (as kb_rot's keys). */
static inline void unit_quat(const double *src, double *q)
{
    double m = 0.0;
    for (int c = 0; c < 4; c++)  /* fmax's, not its library call */
        m = fabs(src[c]) > m ? fabs(src[c]) : m;
    double s[4] = {src[0] / m, src[1] / m, src[2] / m, src[3] / m};
    double n = sqrt(kb_qdot(s, s));
    for (int c = 0; c < 4; c++)
        q[c] = s[c] / n;
}

/* Whether n doubles are the same bit for bit (b negated where `negate`):
 * by their bits inline, as memcmp's library call cost prepare a tenth of
 * the sweep's time on 131_01. */
static inline int same_bits(const double *a, const double *b, int n, int negate)
{
    int same = 1;
    for (int c = 0; c < n; c++) {
        double v = negate ? -b[c] : b[c];
        uint64_t x, y;
        memcpy(&x, a + c, sizeof x);
        memcpy(&y, &v, sizeof y);
        same &= x == y;
    }
    return same;
}

/* Whether two frames' rotations are the same, bit for bit, up to sign. */
static inline int same_rotation(const double *a, const double *b)
{
    return same_bits(a, b, 4, 0) || same_bits(a, b, 4, 1);
}


/* kb_reduce_sweep_fit.c */
int kb_sw_fit_model(sweep *w, ptrdiff_t e, fit *r);
int kb_sw_check_real(sweep *w, ptrdiff_t e, fit *r, double *sign_e);

#endif /* KB_REDUCE_SWEEP_H */
