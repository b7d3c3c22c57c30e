/*
 * kbspline/status.h -- errors, option codes, per-key parameters, threads.
 *
 *   kb_strerror                                         a status's message
 *   kb_min_keys, kb_num_segments, kb_first_segment_key  keys and segments
 *   kb_threads_shutdown                                 join the worker threads
 */
#ifndef KBSPLINE_STATUS_H
#define KBSPLINE_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
#define KB_BEGIN_DECLS extern "C" {
#define KB_END_DECLS }
#else
#define KB_BEGIN_DECLS
#define KB_END_DECLS
#endif

KB_BEGIN_DECLS

typedef enum {
    KB_OK = 0,
    KB_EBADSHAPE,   /* a count or size is out of range */
    KB_ENOTSORTED,  /* times not strictly increasing */
    KB_ENONFINITE,  /* NaN or infinity */
    KB_ENOMEM,
    KB_EBADOPTION,  /* unknown timing / ends / extrapolation code */
    KB_ETOOFEW,     /* too few keys for the end condition */
    KB_ENOTCLOSED,  /* ends=closed but the last key does not repeat the first */
    KB_EDOMAIN,     /* a query outside the domain under extrapolate=error */
    KB_ERANGE,      /* out of range (ease), too large to compute with (overflow),
                       or times closer than DBL_MIN */
    KB_EZERONORM,   /* a quaternion of zero norm */
    KB_ESTOPPED     /* stopped by its caller's progress function */
} kb_status;

/* Which argument an error is about (the Python names). */
typedef enum {
    KB_ARG_NONE = 0, KB_ARG_TIMES, KB_ARG_VALUES, KB_ARG_TENSION, KB_ARG_CONTINUITY,
    KB_ARG_BIAS, KB_ARG_EASE_FROM, KB_ARG_EASE_TO, KB_ARG_START_TANGENT, KB_ARG_END_TANGENT,
    KB_ARG_T, KB_ARG_QUATERNIONS, KB_ARG_TANGENTS
} kb_arg;

/* An error: status, argument, and the track and key or query index (or -1). */
typedef struct {
    kb_status status;
    kb_arg arg;
    ptrdiff_t track, index;
} kb_error;

typedef enum {
    KB_TIMING_KB = 0,     /* Kochanek-Bartels 1984, Eberly's code */
    KB_TIMING_3DS,        /* 3D Studio: multipliers corrected by |continuity| */
    KB_TIMING_PARABOLIC,  /* exact for parabolas (the splines package) */
    KB_TIMING_AVERAGE     /* mean of the slopes, KB-weighted */
} kb_timing;

typedef enum {
    KB_ENDS_NATURAL = 0,  /* zero second derivative at both ends */
    KB_ENDS_PHANTOM,      /* keys 0 and K-1 only shape tangents */
    KB_ENDS_REFLECT,      /* a virtual key mirrored through each end key */
    KB_ENDS_CLAMPED,      /* end tangents given */
    KB_ENDS_CLOSED        /* a loop: key K-1 repeats key 0 */
} kb_ends;

/* Beyond the keys: hold, go on at the end slope, repeat, or KB_EDOMAIN. */
typedef enum { KB_EXTRAP_CLAMP = 0, KB_EXTRAP_LINEAR, KB_EXTRAP_PERIODIC,
               KB_EXTRAP_ERROR } kb_extrap;

/* A per-key parameter: (track, key) is data[track * stride + key]; stride 0 shares a row. */
typedef struct { const double *data; ptrdiff_t stride; } kb_param;

const char *kb_strerror(kb_status status);

/* Fewest keys an end condition accepts (2; 4 phantom, 3 closed), segments
 * of n_keys keys, and the key starting segment 0 (1 for phantom, else 0). */
ptrdiff_t kb_min_keys(kb_ends ends);
ptrdiff_t kb_num_segments(kb_ends ends, ptrdiff_t n_keys);
ptrdiff_t kb_first_segment_key(kb_ends ends);

/* The most threads a *_threaded call uses; a larger n_threads counts as this. */
#define KB_MAX_THREADS 256

/* Joins the worker threads *_threaded calls start and keep (for leak
 * checkers and unloading); must not run beside a call. */
void kb_threads_shutdown(void);

KB_END_DECLS
#endif /* KBSPLINE_STATUS_H */
