/*
 * kb_vmath.h -- private: sine, cosine and atan2 of four or eight doubles at
 * once, for squad's values, without branches (GCC / Clang vector extensions).
 *
 * The kernels are fdlibm's (k_sin.c, k_cos.c, s_atan.c: Sun Microsystems,
 * freely distributable), errors below one ulp on their intervals; the
 * argument reductions are exact enough for the arguments squad passes
 * (angles of at most a few pi) and the cumulative cubic's (up to
 * KB_VMATH_MAX_ARG: its callers keep longer logs to the C library).  Every
 * lane is computed independently, so a value never depends on which other
 * values share its vector.
 */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_VMATH_H
#define KB_VMATH_H

#include <math.h>
#include <string.h>

#include "kb_internal.h"

#if defined(__GNUC__)
#define KB_HAVE_VMATH 1

/* Vectors are passed and returned only between always-inlined functions,
 * so the ABI GCC warns about (32-byte vectors without AVX) never applies.
 * GCC reports it at the end of the translation unit, so the pragma cannot
 * be popped: it holds for the (private) files that include this one.  Its
 * companion note is not a warning and ignores pragmas: the builds pass
 * -Wno-psabi. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef double kb_v4 __attribute__((vector_size(32)));
typedef long long kb_m4 __attribute__((vector_size(32)));  /* lane masks: -1 or 0 */
/* eight lanes: AVX-512's width, for squad's values where the processor has it */
typedef double kb_v8 __attribute__((vector_size(64)));
typedef long long kb_m8 __attribute__((vector_size(64)));

/* Where the reduction by multiples of pi/2 stays exact (k * PIO2_1 exact). */
#define KB_VMATH_MAX_ARG 1e5

#define KB_LANES_FILE "simd/kb_vmath_lanes.h"
#include "simd/kb_lanes.h"
#undef KB_LANES_FILE

#endif /* __GNUC__ */

#endif /* KB_VMATH_H */
