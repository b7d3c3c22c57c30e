/* kb_internal.h -- private helpers of the kbspline core; never installed. */
#ifndef KB_INTERNAL_H
#define KB_INTERNAL_H

#include "kbspline.h"
#include <math.h>
#include <stdint.h>

#define KB_PI 3.14159265358979323846

/* Inlined even into target_clones copies, so that a helper runs the copy's
 * instruction set, and with constant arguments (dim) folded. */
#if defined(__GNUC__)
#define KB_INLINE static inline __attribute__((always_inline))
#else
#define KB_INLINE static inline
#endif

/* Asks for the cache lines of the `bytes` bytes at p before they are
 * read: for loads the hardware cannot see coming (random queries). */
static inline void kb_prefetch(const void *p, size_t bytes)
{
#if defined(__GNUC__)
    for (size_t at = 0; at < bytes; at += 64)
        __builtin_prefetch((const char *)p + at);
    __builtin_prefetch((const char *)p + bytes - 1);  /* where p is not line-aligned */
#else
    (void)p;
    (void)bytes;
#endif
}

static inline kb_status kb_fail(kb_error *err, kb_status status, kb_arg arg,
                                ptrdiff_t track, ptrdiff_t index)
{
    if (err) {
        err->status = status;
        err->arg = arg;
        err->track = track;
        err->index = index;
    }
    return status;
}

static inline kb_status kb_ok(kb_error *err)
{
    return kb_fail(err, KB_OK, KB_ARG_NONE, -1, -1);
}

/* Whether a * b * c * d doubles (each count >= 0) can be addressed: the
 * arrays and workspaces sized by such products, their sizes in bytes and
 * every offset into them fit in ptrdiff_t. */
static inline int kb_doubles_fit(ptrdiff_t a, ptrdiff_t b, ptrdiff_t c, ptrdiff_t d)
{
    const ptrdiff_t factors[4] = {a, b, c, d};
    ptrdiff_t n = 1;
    for (int i = 0; i < 4; i++) {
        if (factors[i] < 0 ||
            (factors[i] > 0 && n > PTRDIFF_MAX / (ptrdiff_t)sizeof(double) / factors[i]))
            return 0;
        n *= factors[i];
    }
    return 1;
}

static inline double kb_param_at(kb_param p, ptrdiff_t track, ptrdiff_t key)
{
    return p.data[track * p.stride + key];
}

int kb_timing_ok(kb_timing timing);
int kb_ends_ok(kb_ends ends);

/* Checks a track's times, per-key parameters and clamped end tangents
 * (k->dim each); for closed splines, that key K-1's parameters repeat key 0's.
 * Values are the caller's to check. */
kb_status kb_validate_common(const kb_tcb_keys *k, ptrdiff_t tr, kb_error *err);
/* Given tangents: both or neither, and only with natural ends. */
kb_status kb_validate_given(const kb_tcb_keys *k, kb_error *err);

/* The four weights of a key's tangents in its two chords, per unit time:
 * out = w[0] d_im1 + w[1] d_i, in = w[2] d_im1 + w[3] d_i (see kb_key_tangents). */
void kb_key_weights(kb_timing timing, double tension, double continuity, double bias,
                    double dt_im1, double dt_i, double w[4]);

/* Per-time tangents of track tr under k's timing and end condition, from
 * its chords (n_keys - 1, dim) and segment durations dt (n_keys - 1,):
 * tin, tout (n_keys, dim).  Chords are value differences for positions and
 * logs of relative rotations for quaternions. */
void kb_track_tangents(const kb_tcb_keys *k, ptrdiff_t tr, const double *chord,
                       const double *dt, double *tin, double *tout);

/* The part of kb_track_tangents that sets the two end keys, for callers
 * that computed the inner keys' tangents themselves. */
void kb_end_tangents(const kb_tcb_keys *k, ptrdiff_t tr, const double *chord,
                     const double *dt, double *tin, double *tout);

/* Tracks [track_begin, track_end) of a validated evaluation whose knots and
 * query times are shared by every track and which has no ease (kb_sweep.c).
 * 0 if its workspace could not be allocated (nothing written). */
int kb_sweep_shared(const kb_curve *c, int nu, const double *t, ptrdiff_t n_eval,
                    ptrdiff_t track_begin, ptrdiff_t track_end, double *out64, float *out32);

/* Joint j of a world search's clip under these tolerances. */
static inline kb_reduce_joint kb_clip_joint(const kb_world_clip *c, ptrdiff_t j, double angle,
                                            double distance, int tangent_keys)
{
    kb_reduce_joint jt = {c->n_frames, c->times, c->rotations + 4 * c->n_frames * j,
                          c->translations + 3 * c->n_frames * j, angle, distance,
                          tangent_keys};
    return jt;
}

/* The largest of v (n >= 1), or NaN where one is, as NumPy's max. */
static inline double kb_nan_max(const double *v, ptrdiff_t n)
{
    double m = v[0];
    for (ptrdiff_t i = 1; i < n && !isnan(m); i++)
        if (v[i] > m || isnan(v[i]))
            m = v[i];
    return m;
}

/* Joint j's worst local errors under curves, rotations (n_frames, 4) and
 * translations (n_frames, 3; NULL: none, *max_distance 0), as
 * kb_reduce_errors measures them into angle and distance (n_frames each),
 * NaN where one is (kb_reduce_world.c). */
kb_status kb_clip_worst_errors(const kb_world_clip *clip, ptrdiff_t j, const double *rotations,
                               const double *translations, double *angle, double *distance,
                               double *max_angle, double *max_distance, kb_error *err);

/* Runs fn(ctx, begin, end) over [0, n) cut into ranges, a few per thread
 * but none under min_chunk items unless there are fewer than n_threads,
 * which up to n_threads threads (the calling one among them) take in turn;
 * returns when all are done. */
typedef void (*kb_range_fn)(void *ctx, ptrdiff_t begin, ptrdiff_t end);
void kb_parallel_for(ptrdiff_t n, int n_threads, ptrdiff_t min_chunk, kb_range_fn fn,
                     void *ctx);

/* The shared-query sweep locates its queries once per range of tracks, at
 * about the cost of sweeping 8 values per query: a range sweeps at least
 * this many values per query (tracks times D), so that it stays near 2%. */
#define KB_SWEEP_MIN_VALUES 384

/* Functions compiled for AVX-512 besides their baseline or AVX2 copies
 * (x86-64 Linux with GCC, as for the target_clones copies), called only
 * where kb_cpu_avx512() is 1: the processor and the system run AVX-512
 * (F, DQ, VL). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define KB_HAVE_AVX512 1
#define KB_TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl")))
#endif
int kb_cpu_avx512(void);

/* How many of n_threads to use for n_items tracks carrying `work` outputs. */
int kb_threads_for(ptrdiff_t n_items, double work, int n_threads);

/* Builds items [begin, end) or stops at the first error, reported in err. */
typedef kb_status (*kb_build_fn)(void *ctx, ptrdiff_t begin, ptrdiff_t end, kb_error *err);

/* fn over [0, n) split over threads as kb_threads_for decides, with the
 * result (and error) of one call fn(ctx, 0, n, err). */
kb_status kb_build_parallel(ptrdiff_t n, double work, int n_threads, kb_build_fn fn,
                            void *ctx, kb_error *err);

/* One rotation track's keys as kb_rot_build prepares them (track_chords):
 * unit keys q (K, 4), chords (K - 1, 3), the chords its tangents are taken
 * from (tchord, K - 1, 3) and durations dt (K - 1), in the caller's
 * memory: a track built again and again with other TCB prepares once. */
typedef struct {
    double *q, *chord, *tchord, *dt;
} kb_rot_chords;

/* Track 0 of validated keys k (kb_rot_validate) into c. */
void kb_rot_chords_of(const kb_rot_keys *k, const kb_rot_chords *c);

/* kb_reduce_errors of a joint whose frames a validated joint holds (as
 * kb_reduce_sweep's checks take its frames between two keys, again and
 * again): the same errors without validate's pass over the frames; any
 * n_frames >= 0. */
void kb_reduce_errors_unchecked(const kb_reduce_joint *jt, const double *rotations,
                                const double *translations, double *angle, double *distance);

#endif /* KB_INTERNAL_H */
