/* kb_integrate.h -- private: integrals of a speed over a segment's local
 * parameter u in [0, 1], and their inversion. */
#ifndef KB_INTEGRATE_H
#define KB_INTEGRATE_H

#include "kb_internal.h"

/* Error target of every integral, relative to its segment's total. */
#define KB_INTEGRAL_RTOL 1e-13

/* A nonnegative speed d(quantity)/du on segment `seg` of track `track`,
 * smooth but for at most two known breaks in (0, 1) (ease's pieces), where
 * integrals are split: a quadrature node may never land near a narrow piece. */
typedef struct {
    double (*fn)(const void *ctx, ptrdiff_t track, ptrdiff_t seg, double u);
    const void *ctx;
    ptrdiff_t track, seg;
    double breaks[2];  /* ascending; entries outside (0, 1) are ignored */
} kb_speed;

/* The breaks of an eased segment: Ease(u, a, b) changes piece at a and 1 - b. */
void kb_speed_set_ease(kb_speed *sp, const double *ease);

/* integral of the speed over [a, b], adaptive to absolute error `tol`. */
double kb_integrate(const kb_speed *sp, double a, double b, double tol);

/* integral over the whole segment, [0, 1]. */
double kb_segment_total(const kb_speed *sp);

/* integral over [0, u], given the segment's total. */
double kb_segment_partial(const kb_speed *sp, double u, double seg_total);

/* u with integral over [0, u] == target; never diverges. */
double kb_segment_inverse(const kb_speed *sp, double target, double seg_total);

/* The segment of a cumulative table cum (n_seg + 1,) that holds s. */
ptrdiff_t kb_table_segment(const double *cum, ptrdiff_t n_seg, double s);

#endif /* KB_INTEGRATE_H */
