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
 * A table of the integral of a batch's speed along each track: every
 * segment is cut into panels on which 10-point Gauss-Legendre agrees with
 * its two halves to 1e-13 of the segment's total (at least four panels a
 * segment, split where ease changes piece, refined where the speed has a
 * kink).  Building is linear in the number of segments; a query finds its
 * panel by binary search and costs one 10-point rule per evaluation.
 *   seg_start  (n_tracks * n_seg + 1): the first panel of each segment
 *   panels     (n_panels, 4): u0, u1 (segment parameter), s0, s1 (the
 *              integral from the track's domain start to u0 and to u1)
 * Tables built by the core own their arrays: free them with kb_table_free.
 */
typedef struct {
    ptrdiff_t n_tracks, n_seg, n_panels;
    ptrdiff_t *seg_start;
    double *panels;
} kb_table;

void kb_table_free(kb_table *table);

/*
 * Arc length of a position curve.  kb_pos_length: out (n_tracks, n_eval),
 * the length from the domain start to each t.  kb_pos_time_at_length: the
 * time at which the length reaches each s: bracketed Newton inside one
 * panel, falling back to bisection, so it never diverges; the domain's ends
 * at s = 0 and s = total; where the curve rests, the earliest time.  t and
 * s outside the domain / [0, total] follow the curve's extrapolation
 * (clamp holds, linear grows at the end speed, periodic adds whole turns).
 */
kb_status kb_pos_length_table(const kb_curve *curve, kb_table *table, kb_error *err);
kb_status kb_pos_length(const kb_curve *curve, const kb_table *table, const double *t,
                        ptrdiff_t n_eval, ptrdiff_t t_stride, ptrdiff_t track_begin,
                        ptrdiff_t track_end, double *out, kb_error *err);
kb_status kb_pos_time_at_length(const kb_curve *curve, const kb_table *table,
                                const double *s, ptrdiff_t n_eval, ptrdiff_t s_stride,
                                ptrdiff_t track_begin, ptrdiff_t track_end, double *out,
                                kb_error *err);

/*
 * Constant angular speed: the angle swept from the domain start is the
 * integral of |w| dt, tabulated once (kb_rot_angle_table, see kb_table);
 * kb_rot_angle gives it at times t, kb_rot_time_at_angle the time at which
 * it reaches s.  Both as kb_pos_length / kb_pos_time_at_length above.
 */
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
