/* kb_rot_segment.h -- private: choosing and building a rotation segment's
 * construction (kb_rot_segment.c). */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_ROT_SEGMENT_H
#define KB_ROT_SEGMENT_H

/* 1 if squad with chord L = log(q0* q1), per-u log tangents T0 (at q0) and
 * T1 (at q1), and Lab = log(a* b) provably keeps the angular speed bound. */
int kb_squad_is_certified(const double *L, const double *T0, const double *T1,
                          const double *Lab);

/* The cumulative cubic from q0 to q1 (segment log L) with per-u log
 * tangents T0, T1, on the uniform spin L if `spin` (multi-turn segments),
 * else on none: ctrl (16): its Bezier control points; logs (12): the spin,
 * w1, w2, w3. */
void kb_cumulative_segment(const double *q0, const double *q1, const double *L, int spin,
                           const double *T0, const double *T1, double *ctrl, double *logs);

/* The chord 3D Studio's CompAB takes for tangents from a segment's log L:
 * pi/2 along the axis for a turn of 2 pi - 1e-5 or more (its spin branch),
 * else the log of the shorter arc. */
void kb_compab_chord(const double *L, double *out);

#endif
