/* kb_cubic.h -- private: one value of a built cubic segment (positions in
 * Horner form, derivatives and extrapolation as weights of the
 * coefficients), shared by the per-track loop and the shared-query sweep. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_CUBIC_H
#define KB_CUBIC_H

#include "kb_internal.h"
#include "spline/kb_locate.h"

/*
 * A position inside the domain is the cubic in Horner form,
 * ((c3 e + c2) e + c1) e + c0: three products and three sums per value.
 * Every path (vector sweep, scalar loop, any thread) uses this expression,
 * so all of them round alike.
 */
static inline double horner(const double *cf, ptrdiff_t dim, ptrdiff_t j, double e)
{
    return ((cf[3 * dim + j] * e + cf[2 * dim + j]) * e + cf[dim + j]) * e + cf[j];
}

/* v into whichever of out64 / out32 is given, at off. */
static inline void put_value(double *out64, float *out32, ptrdiff_t off, double v)
{
    if (out64)
        out64[off] = v;
    else
        out32[off] = (float)v;
}

/* The position of one query (parameter e) into out64 or out32 from off. */
static inline void horner_store(const double *cf, ptrdiff_t dim, double e, double *out64,
                                float *out32, ptrdiff_t off)
{
    for (ptrdiff_t j = 0; j < dim; j++)
        put_value(out64, out32, off + j, horner(cf, dim, j, e));
}

/*
 * Derivatives, and positions extrapolated linearly, are linear in the
 * segment's coefficients: out = sum_k w[k] c_k.  The weights depend only on
 * where the query falls (and the track's ease), so with shared knots and
 * times they are computed once per query for all tracks.  With e = Ease(u):
 * velocity de/dt (0, 1, 2e, 3e^2); acceleration (de/dt)^2 (0, 0, 2, 6e) +
 * d2e/dt2 (0, 1, 2e, 3e^2); a position beyond the end (1, e, e^2, e^3) plus
 * excess * velocity.
 */
static inline void segment_weights(const kb_loc *loc, const double *ease, int nu,
                                   double w[4])
{
    double e = loc->u, de = 1.0, dde = 0.0;
    if (ease)
        kb_ease(loc->u, ease[0], ease[1], &e, &de, &dde);
    const double s1 = de * loc->inv_dt;  /* de/dt */
    const double s2 = dde * loc->inv_dt * loc->inv_dt;
    const double d1[4] = {0.0, 1.0, 2.0 * e, 3.0 * e * e};
    if (nu == 0) {
        const double x = loc->outside ? loc->excess * s1 : 0.0;
        w[0] = 1.0;
        w[1] = e + x * d1[1];
        w[2] = e * e + x * d1[2];
        w[3] = e * e * e + x * d1[3];
    } else if (nu == 1) {
        for (int k = 0; k < 4; k++)
            w[k] = s1 * d1[k];
    } else {
        const double d2[4] = {0.0, 0.0, 2.0, 6.0 * e};
        for (int k = 0; k < 4; k++)
            w[k] = loc->outside ? 0.0 : s1 * s1 * d2[k] + s2 * d1[k];
    }
}

/* out[off + j] = sum_k w[k] cf[k * dim + j] for j < dim, into whichever of
 * out64 / out32 is given.  Called with constant dim and output type so that
 * each instance compiles to straight-line code. */
KB_INLINE void combine(const double *cf, ptrdiff_t dim, const double w[4],
                       double *out64, float *out32, ptrdiff_t off)
{
    for (ptrdiff_t j = 0; j < dim; j++)
        put_value(out64, out32, off + j,
                  w[0] * cf[j] + w[1] * cf[dim + j] + w[2] * cf[2 * dim + j] +
                      w[3] * cf[3 * dim + j]);
}

#endif /* KB_CUBIC_H */
