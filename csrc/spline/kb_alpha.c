/* kb_alpha.c -- key times from the keys themselves (centripetal, chordal). */
#include "kb_internal.h"

#include <float.h>

/* |b - a|, scaled so that neither tiny nor huge differences under- or
 * overflow on the way (the result itself can overflow: 1e308 - -1e308). */
static double distance(const double *a, const double *b, ptrdiff_t dim)
{
    double scale = 0.0, sq = 0.0;
    for (ptrdiff_t j = 0; j < dim; j++)
        scale = fmax(scale, fabs(b[j] - a[j]));
    if (scale == 0.0 || !isfinite(scale))
        return scale;
    for (ptrdiff_t j = 0; j < dim; j++) {
        const double d = (b[j] - a[j]) / scale;
        sq += d * d;
    }
    return scale * sqrt(sq);
}

kb_status kb_alpha_times(ptrdiff_t n_tracks, ptrdiff_t n_keys, ptrdiff_t dim,
                         const double *values, double alpha, double *times_out,
                         kb_error *err)
{
    if (n_tracks < 0 || n_keys < 1 || dim < 1 || !values || !times_out ||
        !kb_doubles_fit(n_tracks, n_keys, dim, 1))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_VALUES, -1, -1);
    if (!isfinite(alpha) || alpha < 0.0)
        return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t i = 0; i < n_tracks * n_keys * dim; i++)
        if (!isfinite(values[i]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, i / (n_keys * dim),
                           (i / dim) % n_keys);
    for (ptrdiff_t tr = 0; tr < n_tracks; tr++) {
        const double *x = values + tr * n_keys * dim;
        double *t = times_out + tr * n_keys;
        t[0] = 0.0;
        for (ptrdiff_t n = 1; n < n_keys; n++) {
            const double dist = distance(x + (n - 1) * dim, x + n * dim, dim);
            /* a repeated key has no distance to time it by */
            if (alpha > 0.0 && dist == 0.0)
                return kb_fail(err, KB_ENOTSORTED, KB_ARG_VALUES, tr, n);
            t[n] = t[n - 1] + pow(dist, alpha);
            /* times must stay finite and spaced as kb_tcb_validate requires */
            if (!isfinite(t[n]) || !(t[n] - t[n - 1] >= DBL_MIN))
                return kb_fail(err, KB_ERANGE, KB_ARG_VALUES, tr, n);
        }
    }
    return kb_ok(err);
}
