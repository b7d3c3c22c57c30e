/* kb_rot_segment.h -- private: choosing and building a rotation segment's
 * construction (kb_rot_segment.c). */
#ifndef KB_ROT_SEGMENT_H
#define KB_ROT_SEGMENT_H

/* 1 if squad with chord L = log(q0* q1), per-u log tangents T0 (at q0) and
 * T1 (at q1), and Lab = log(a* b) provably keeps the angular speed bound. */
int kb_squad_is_certified(const double *L, const double *T0, const double *T1,
                          const double *Lab);

/* The cumulative cubic from q0 to q1 with per-u log tangents T0, T1:
 * ctrl (16): its Bezier control points; logs (9): w1, w2, w3. */
void kb_cumulative_segment(const double *q0, const double *q1, const double *T0,
                           const double *T1, double *ctrl, double *logs);

#endif
