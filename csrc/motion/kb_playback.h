/* kb_playback.h -- private: the exporters' check of linear playback
 * (kbspline.formats.adaptive), kb_playback.c. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_PLAYBACK_H
#define KB_PLAYBACK_H

#include "kb_internal.h"

/* ------------------------------------------------------------------ */
/* Linear playback check (the exporters' adaptive keys).  samples is    */
/* (n, m, width): each of n intervals sampled at fractions u (m >= 3,   */
/* u[0] = 0, u[m-1] = 1); its first and last samples, rounded to        */
/* float32 as glTF and USD store them, are the keys that playback joins */
/* by slerp on the shorter arc (rotation != 0: width 4, (w, x, y, z),   */
/* normalised) or by lerp (any width).  The error at a sample is a      */
/* vector e_j: the rotation vector of conj(playback) * sample, or       */
/* playback - sample.  Writes per interval the largest |e_j|, the       */
/* largest |e_(j-1) - 2 e_j + e_(j+1)|, and for rotations the sum of    */
/* the angles between neighbouring samples (swept; 0 for vectors).  A  */
/* non-finite sample gives NaN there.                                   */
/* ------------------------------------------------------------------ */

kb_status kb_playback_check(ptrdiff_t n, ptrdiff_t m, ptrdiff_t width, int rotation,
                            const double *samples, const double *u, double *err_max,
                            double *bend_max, double *swept, kb_error *err);

#endif /* KB_PLAYBACK_H */
