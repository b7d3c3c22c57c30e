/* kb_internal.h -- private helpers of the kbspline core; never installed. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_INTERNAL_H
#define KB_INTERNAL_H

#include "kbspline/kbspline.h"
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

/*
 * Tangents at one key from the chords on its two sides (the building block
 * shared by positions and, on the logs, rotations).
 *   @param[in] d_im1, d_i  (dim,) chord into the key and chord out of it
 *   @param[in] dt_im1, dt_i  durations of those two segments (> 0)
 *   @param[out] tan_in, tan_out  (dim,) per-time tangents
 */
void kb_key_tangents(kb_timing timing, double tension, double continuity,
                     double bias, const double *d_im1, double dt_im1,
                     const double *d_i, double dt_i, ptrdiff_t dim,
                     double *tan_in, double *tan_out);

/* Seed 002's Ease(u, a, b) with its first and second derivatives in u.
 * Robust where the seed divides by zero (b == 0 at u == 1). */
void kb_ease(double u, double a, double b, double *e, double *de, double *dde);

/* The pieces Ease(u, a, b) really uses: a + b scaled down to 1 when
 * larger, and an ease below 1e-9 taken as 0.  Ease changes piece at a and
 * at 1 - b. */
void kb_ease_pieces(double *a, double *b);

/*
 * Checks every input of kb_tcb_build once: counts (KB_EBADSHAPE where the
 * arrays' sizes would overflow ptrdiff_t), option codes, finite and
 * strictly increasing times spaced at least DBL_MIN apart, finite values
 * and parameters, ease in [0, 1],
 * and for closed splines that key K-1 repeats key 0 (value within 1e-9 of
 * the track's largest magnitude; parameters within 1e-9); given tangents
 * both or neither (KB_EBADSHAPE), with natural ends (KB_EBADOPTION), and
 * finite (KB_ENONFINITE, KB_ARG_TANGENTS, index the key).
 */
kb_status kb_tcb_validate(const kb_tcb_keys *keys, kb_error *err);

/* Checks the curve and the queries: finite t, and under KB_EXTRAP_ERROR
 * every t within the domain (a t beyond it by at most 1e-12 of its span
 * counts as inside).  t is (n_tracks | 1, n_eval) with t_stride 0 or n_eval. */
kb_status kb_curve_validate(const kb_curve *curve, int nu, const double *t,
                            ptrdiff_t n_eval, ptrdiff_t t_stride, kb_error *err);

/* Checks the keys of kb_rot_build: as kb_tcb_validate, with quaternions
 * finite and of nonzero norm, and for closed splines key K-1 the same
 * rotation as key 0 (|dot| of the unit keys >= 1 - 1e-9). */
kb_status kb_rot_validate(const kb_rot_keys *keys, kb_error *err);

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

/* Forward kinematics measured against the truth, for key reduction:
 * kb_joint_world plus, with truth (n_frames, 1 + n_sites, 3; NULL to skip),
 * *max_error the points' largest distance from it, stopping early (outputs
 * unfinished) at the first point farther than limit (none for an infinite
 * or NaN limit); frame_worst (n_frames; NULL to skip) takes each frame's
 * largest squared distance where larger (or NaN), so that calls for the
 * joints below one fold in. */
kb_status kb_joint_world_error(ptrdiff_t n_frames, const double *parent_rot,
                               const double *parent_origin, const double *rotations,
                               const double *offsets, ptrdiff_t offset_stride,
                               ptrdiff_t n_sites, const double *sites, const double *truth,
                               double limit, double *world_rot, double *origin,
                               double *points, double *max_error, double *frame_worst,
                               kb_error *err);

/* Forward kinematics' companion for key reduction's tolerances. */
/* reach[j]: the farthest any point joint j carries (its own and those of
 * the joints below it) gets from its origin in any frame (NaN where a point
 * is); points as kb_joint_world writes them, joint after joint; parents[j]
 * in [-1, j). */
kb_status kb_joint_reach(ptrdiff_t n_joints, ptrdiff_t n_frames, const ptrdiff_t *parents,
                         const ptrdiff_t *n_sites, const double *points, double *reach,
                         kb_error *err);

#endif /* KB_INTERNAL_H */
