/*
 * kbspline/length.h -- integrals of speed: arc length and swept angle.
 *
 *   kb_pos_length_table, kb_pos_length, kb_pos_time_at_length  arc length
 *   kb_rot_angle_table, kb_rot_angle, kb_rot_time_at_angle     swept angle
 *   kb_table_free                                             free a table
 */
#ifndef KBSPLINE_LENGTH_H
#define KBSPLINE_LENGTH_H

#include "position.h"
#include "rotation.h"

KB_BEGIN_DECLS

/*
 * A table of the integral of each track's speed: panels on which 10-point
 * Gauss-Legendre agrees with its two halves to 1e-13 of the segment's total
 * (at least four a segment; split at ease pieces and speed kinks).  A query
 * finds its panel by binary search and costs one 10-point rule.
 *   seg_start  (n_tracks * n_seg + 1): the first panel of each segment
 *   panels     (n_panels, 4): u0, u1 (segment parameter), s0, s1 (the
 *              integral from the domain start to u0 and to u1)
 * Free a table the core built with kb_table_free.
 */
typedef struct {
    ptrdiff_t n_tracks, n_seg, n_panels;
    ptrdiff_t *seg_start;
    double *panels;
} kb_table;

void kb_table_free(kb_table *table);

/*
 * Arc length: kb_pos_length the length from the domain start to each t
 * (out (n_tracks, n_eval)); kb_pos_time_at_length the earliest time it
 * reaches each s (bracketed Newton in one panel, never diverging).  Outside
 * the domain / [0, total], the curve's extrapolation (clamp holds, linear
 * grows at the end speed, periodic adds whole turns).
 */
kb_status kb_pos_length_table(const kb_curve *curve, kb_table *table, kb_error *err);
kb_status kb_pos_length(const kb_curve *curve, const kb_table *table, const double *t,
                        ptrdiff_t n_eval, ptrdiff_t t_stride, ptrdiff_t track_begin,
                        ptrdiff_t track_end, double *out, kb_error *err);
kb_status kb_pos_time_at_length(const kb_curve *curve, const kb_table *table,
                                const double *s, ptrdiff_t n_eval, ptrdiff_t s_stride,
                                ptrdiff_t track_begin, ptrdiff_t track_end, double *out,
                                kb_error *err);

/* Swept angle, the integral of |w| dt, as the arc length above. */
kb_status kb_rot_angle_table(const kb_rot_curve *curve, kb_table *table, kb_error *err);
kb_status kb_rot_angle(const kb_rot_curve *curve, const kb_table *table, const double *t,
                       ptrdiff_t n_eval, ptrdiff_t t_stride, ptrdiff_t track_begin,
                       ptrdiff_t track_end, double *out, kb_error *err);
kb_status kb_rot_time_at_angle(const kb_rot_curve *curve, const kb_table *table,
                               const double *s, ptrdiff_t n_eval, ptrdiff_t s_stride,
                               ptrdiff_t track_begin, ptrdiff_t track_end, double *out,
                               kb_error *err);

KB_END_DECLS
#endif /* KBSPLINE_LENGTH_H */
