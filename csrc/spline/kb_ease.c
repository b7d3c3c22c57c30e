/* kb_ease.c -- 3D Studio's ease curve (seed 002) and its derivatives. */
#include "kb_internal.h"

/*
 * Ease(u, a, b): a quadratic ease-in over [0, a), constant speed, then a
 * quadratic ease-out over [1 - b, 1].  Where a + b > 1 both are scaled to
 * sum to 1; an ease below 1e-9 counts as none (its piece would be too
 * narrow to divide by).  The seed evaluates (k / b) * 0 at u == 1 when b == 0; the
 * linear piece is taken there instead (it equals 1 at u == 1).
 */
void kb_ease_pieces(double *a, double *b)
{
    /* a piece narrower than this is a kink, not an ease: k / a would overflow */
    const double narrowest = 1e-9;
    if (*a < narrowest)
        *a = 0.0;
    if (*b < narrowest)
        *b = 0.0;
    const double s = *a + *b;
    if (s > 1.0) {
        *a /= s;
        *b /= s;
    }
}

void kb_ease(double u, double a, double b, double *e, double *de, double *dde)
{
    kb_ease_pieces(&a, &b);
    if (a + b == 0.0) {
        *e = u;
        *de = 1.0;
        *dde = 0.0;
        return;
    }
    double k = 1.0 / (2.0 - a - b);
    if (u < a) {
        *e = (k / a) * u * u;
        *de = 2.0 * (k / a) * u;
        *dde = 2.0 * (k / a);
    } else if (u < 1.0 - b || b == 0.0) {
        *e = k * (2.0 * u - a);
        *de = 2.0 * k;
        *dde = 0.0;
    } else {
        double w = 1.0 - u;
        *e = 1.0 - (k / b) * w * w;
        *de = 2.0 * (k / b) * w;
        *dde = -2.0 * (k / b);
    }
}
