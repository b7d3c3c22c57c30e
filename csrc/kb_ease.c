/* kb_ease.c -- 3D Studio's ease curve (seed 002) and its derivatives. */
#include "kbspline.h"

/*
 * Ease(u, a, b): a quadratic ease-in over [0, a), constant speed, then a
 * quadratic ease-out over [1 - b, 1].  Where a + b > 1 both are scaled to
 * sum to 1.  The seed evaluates (k / b) * 0 at u == 1 when b == 0; the
 * linear piece is taken there instead (it equals 1 at u == 1).
 */
void kb_ease(double u, double a, double b, double *e, double *de, double *dde)
{
    double s = a + b;
    if (s == 0.0) {
        *e = u;
        *de = 1.0;
        *dde = 0.0;
        return;
    }
    if (s > 1.0) {
        a /= s;
        b /= s;
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
