/*
 * kb_kinematics.c -- forward kinematics of one joint over a clip's frames,
 * and the largest distance of its points from where the clip puts them:
 * the check behind every world-space key reduction (kbspline.motion), run
 * for every joint of every trial, so a hot loop.  Also each joint's reach
 * over the clip's points, which splits the world tolerance among joints.
 *
 * The rotations are kb_quat_to_matrix's, bit for bit.  Where every
 * quaternion takes its direct path (kb_quat_direct: any clip's), four
 * frames go at once, in one pass, each lane doing the scalar code's
 * products and sums in the same order, so the results are the same bits;
 * otherwise kb_quat_to_matrix itself, its errors included, then the scalar
 * loop.  Either way an input refused leaves the outputs as
 * kb_quat_to_matrix left them; past a stop they are unfinished.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbspline/kbspline.h"
#include "kb_internal.h"
#include "quat/kb_quat.h"
#include "simd/kb_vmath.h"

/* The limit's test of worst, the largest squared distance so far: past it
 * where its root, as reported, is above limit, or it is NaN.  A square
 * above fl(limit^2) may still have limit for its root, so the square only
 * screens, against a bound a little below it (screen). */
static inline int past(double worst, double screen, double limit)
{
    return !(worst <= screen) && !(sqrt(worst) <= limit);
}

/* Frame f from its rotation (local, as kb_quat_to_matrix wrote it in
 * world_rot; made world here): its origin and points, and the square of
 * their largest distance from truth folded into *worst (a NaN stays, so
 * that the check fails). */
static void place_frame(ptrdiff_t f, const double *parent_rot, const double *parent_origin,
                        const double *offsets, ptrdiff_t offset_stride, ptrdiff_t n_sites,
                        const double *sites, const double *truth, double *world_rot,
                        double *origin, double *points, double *worst, double *frame_worst)
{
    double *m = world_rot + 9 * f, *o = origin + 3 * f;
    const double *v = offsets + offset_stride * f;
    if (parent_rot) {
        /* m = a t, o = b + a v */
        const double *a = parent_rot + 9 * f, *b = parent_origin + 3 * f;
        const double t[9] = {m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]};
        const double v0 = v[0], v1 = v[1], v2 = v[2];
        for (int i = 0; i < 3; i++) {
            const double a0 = a[3 * i], a1 = a[3 * i + 1], a2 = a[3 * i + 2];
            for (int j = 0; j < 3; j++)
                m[3 * i + j] = a0 * t[j] + a1 * t[3 + j] + a2 * t[6 + j];
            o[i] = b[i] + (a0 * v0 + a1 * v1 + a2 * v2);
        }
    } else {
        o[0] = v[0];
        o[1] = v[1];
        o[2] = v[2];
    }
    const ptrdiff_t per_frame = 3 * (1 + n_sites);
    for (ptrdiff_t p = 0; p <= n_sites; p++) {
        double at[3];
        for (int i = 0; i < 3; i++)
            at[i] = p == 0 ? o[i]
                           : o[i] + (m[3 * i] * sites[3 * p - 3] + m[3 * i + 1] * sites[3 * p - 2] +
                                     m[3 * i + 2] * sites[3 * p - 1]);
        if (points)
            memcpy(points + f * per_frame + 3 * p, at, sizeof at);
        if (truth) {
            const double *want = truth + f * per_frame + 3 * p;
            const double d0 = at[0] - want[0], d1 = at[1] - want[1], d2 = at[2] - want[2];
            const double e = d0 * d0 + d1 * d1 + d2 * d2;
            if (e > *worst || isnan(e))
                *worst = e;
            if (frame_worst && !isnan(frame_worst[f]) && !(e <= frame_worst[f]))
                frame_worst[f] = e;  /* larger, or NaN: a NaN stays */
        }
    }
}

#if defined(KB_HAVE_VMATH)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define KB_CLONES __attribute__((target_clones("default", "avx2")))
#else
#define KB_CLONES
#endif

#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define KB_SHUFFLE(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#endif
#endif
#if !defined(KB_SHUFFLE)  /* GCC before 12 */
#define KB_SHUFFLE(a, b, i, j, k, l) __builtin_shuffle(a, b, (kb_m4){i, j, k, l})
#endif

/* The rotation matrix m of q on the direct path: kb_quat_to_matrix's arithmetic. */
static void local_matrix(const double *q, double *m)
{
    const double n = sqrt(kb_qdot(q, q));
    const double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    KB_QUAT_MATRIX(w, x, y, z, m);
}

/* Four frames' values, one frame a lane, in and out of their arrays: the
 * stores as whole vectors where they can (the stores, one element a
 * cycle, were the slowest part). */

KB_INLINE kb_v4 load(const double *p)
{
    kb_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

KB_INLINE void store(double *p, kb_v4 v)
{
    memcpy(p, &v, sizeof v);
}

/* Element 0 of four records s doubles apart. */
KB_INLINE kb_v4 gather(const double *p, ptrdiff_t s)
{
    return (kb_v4){p[0], p[s], p[2 * s], p[3 * s]};
}

/* The first n lanes of v to element 0 of records s doubles apart. */
KB_INLINE void scatter(kb_v4 v, double *p, ptrdiff_t s, int n)
{
    for (int l = 0; l < n; l++)
        p[l * s] = v[l];
}

/* c = the 4x4 transpose of rows r0 .. r3. */
KB_INLINE void transpose(kb_v4 r0, kb_v4 r1, kb_v4 r2, kb_v4 r3, kb_v4 *c)
{
    const kb_v4 t0 = KB_SHUFFLE(r0, r1, 0, 4, 2, 6), t1 = KB_SHUFFLE(r0, r1, 1, 5, 3, 7),
                t2 = KB_SHUFFLE(r2, r3, 0, 4, 2, 6), t3 = KB_SHUFFLE(r2, r3, 1, 5, 3, 7);
    c[0] = KB_SHUFFLE(t0, t2, 0, 1, 4, 5);
    c[1] = KB_SHUFFLE(t1, t3, 0, 1, 4, 5);
    c[2] = KB_SHUFFLE(t0, t2, 2, 3, 6, 7);
    c[3] = KB_SHUFFLE(t1, t3, 2, 3, 6, 7);
}

/* c[j] = element j of four records s doubles apart (j < 4). */
KB_INLINE void load_columns(const double *p, ptrdiff_t s, kb_v4 *c)
{
    transpose(load(p), load(p + s), load(p + 2 * s), load(p + 3 * s), c);
}

/* The inverse, into the first n records. */
KB_INLINE void store_columns(const kb_v4 *c, double *p, ptrdiff_t s, int n)
{
    kb_v4 r[4];
    transpose(c[0], c[1], c[2], c[3], r);
    for (int l = 0; l < n; l++)
        store(p + l * s, r[l]);
}

/* Four frames' rotations m (element k in m[k]) into the first n of their
 * four matrices at p. */
KB_INLINE void store_matrices(const kb_v4 *m, double *p, int n)
{
    store_columns(m, p, 9, n);
    store_columns(m + 4, p + 4, 9, n);
    scatter(m[8], p + 8, 9, n);
}

/* x, y and z of four frames (c[0 .. 2]) into the first n of their triples at p. */
KB_INLINE void store_triples(const kb_v4 *c, double *p, int n)
{
    if (n < 4) {
        for (int i = 0; i < 3; i++)
            scatter(c[i], p + i, 3, n);
        return;
    }
    /* x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3 */
    store(p, KB_SHUFFLE(KB_SHUFFLE(c[0], c[1], 0, 4, 1, 5), c[2], 0, 1, 4, 2));
    store(p + 4, KB_SHUFFLE(KB_SHUFFLE(c[1], c[2], 1, 5, 2, 6), c[0], 0, 1, 6, 2));
    store(p + 8, KB_SHUFFLE(c[2], KB_SHUFFLE(c[0], c[1], 3, 7, 3, 7), 2, 4, 5, 3));
}

/* Four consecutive quaternions q, each divided by its norm as the direct
 * path divides it: w, x, y, z to u[0 .. 3]. */
KB_INLINE void unit4(const double *q, kb_v4 *u)
{
    kb_v4 c[4];
    load_columns(q, 4, c);
    const kb_v4 n = kb_v4_sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + c[3] * c[3]);
    for (int j = 0; j < 4; j++)
        u[j] = c[j] / n;
}

/* Their rotation matrices, as local_matrix. */
KB_INLINE void matrix4(const kb_v4 *u, kb_v4 *m)
{
    KB_QUAT_MATRIX(u[0], u[1], u[2], u[3], m);
}

/* Point p (0: the origin) of four frames, as place_frame. */
KB_INLINE void point4(const kb_v4 *m, const kb_v4 *o, const double *sites, ptrdiff_t p,
                      kb_v4 *at)
{
    for (int i = 0; i < 3; i++)
        at[i] = p == 0 ? o[i]
                       : o[i] + (m[3 * i] * sites[3 * p - 3] + m[3 * i + 1] * sites[3 * p - 2] +
                                 m[3 * i + 2] * sites[3 * p - 1]);
}

/* Whether all n quaternions q take the direct path: kb_quat_direct four at a time. */
KB_CLONES
static int all_direct(ptrdiff_t n, const double *q)
{
    kb_m4 ok = {-1, -1, -1, -1};
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        kb_v4 c[4];
        kb_m4 big = {0, 0, 0, 0};
        load_columns(q + 4 * i, 4, c);
        for (int j = 0; j < 4; j++) {
            const kb_v4 a = (kb_v4)((kb_m4)c[j] & 0x7fffffffffffffffLL);
            ok &= (a <= 0x1p200) & ((a >= 0x1p-822) | (a == 0.0));
            big |= a >= 0x1p-200;
        }
        ok &= big;
    }
    int all = (ok[0] & ok[1] & ok[2] & ok[3]) != 0;
    for (; i < n; i++)
        all &= kb_quat_direct(q + 4 * i);
    return all;
}

/*
 * The frames from their rotations, all on the direct path: local_matrix
 * and place_frame four frames at a time, the whole blocks of four up to
 * the first frame past limit (see past()); returns the frames done and
 * *worst, with *stopped set if it stopped.  Each block's stores wait for its check, so
 * a stop inside a block leaves the frames after it as they were.  The next
 * block's norms and divisions are issued first, to run under this block's
 * products.  The few frames left are the caller's: called from here, the
 * (SSE) scalar code would run with the upper halves of the AVX registers
 * dirty, which GCC does not clear before those calls, and every SSE
 * instruction after, in the whole library, would pay for it
 * (docs/benchmarks.md, Tuning notes).
 */
KB_CLONES
static ptrdiff_t place_blocks(ptrdiff_t n_frames, const double *parent_rot,
                              const double *parent_origin, const double *rotations,
                              const double *offsets, ptrdiff_t offset_stride, ptrdiff_t n_sites,
                              const double *sites, const double *truth, double screen,
                              double limit, double *world_rot, double *origin, double *points,
                              double *worst, double *frame_worst, int *stopped_out)
{
    const ptrdiff_t per_frame = 3 * (1 + n_sites);
    double w = 0.0;
    kb_v4 u_next[4];
    if (n_frames >= 4)
        unit4(rotations, u_next);
    ptrdiff_t f = 0;
    for (; f + 4 <= n_frames; f += 4) {
        kb_v4 m[9], o[3], v[3];
        {
            const kb_v4 u[4] = {u_next[0], u_next[1], u_next[2], u_next[3]};
            if (f + 8 <= n_frames)
                unit4(rotations + 4 * f + 16, u_next);
            matrix4(u, m);
        }
        for (int i = 0; i < 3; i++)
            v[i] = offset_stride ? gather(offsets + 3 * f + i, 3) : kb_v4_splat(offsets[i]);
        if (parent_rot) {
            const double *a = parent_rot + 9 * f, *b = parent_origin + 3 * f;
            const kb_v4 t[9] = {m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]};
            for (int i = 0; i < 3; i++) {
                const kb_v4 a0 = gather(a + 3 * i, 9), a1 = gather(a + 3 * i + 1, 9),
                            a2 = gather(a + 3 * i + 2, 9);
                for (int j = 0; j < 3; j++)
                    m[3 * i + j] = a0 * t[j] + a1 * t[3 + j] + a2 * t[6 + j];
                o[i] = gather(b + i, 3) + (a0 * v[0] + a1 * v[1] + a2 * v[2]);
            }
        } else {
            for (int i = 0; i < 3; i++)
                o[i] = v[i];
        }
        int done = 4, stopped = 0;
        if (truth) {
            const double *want = truth + f * per_frame;
            kb_v4 worst4 = {0.0, 0.0, 0.0, 0.0};  /* each frame's own */
            for (ptrdiff_t p = 0; p <= n_sites; p++) {
                kb_v4 at[3];
                point4(m, o, sites, p, at);
                const kb_v4 d0 = at[0] - gather(want + 3 * p, per_frame),
                            d1 = at[1] - gather(want + 3 * p + 1, per_frame),
                            d2 = at[2] - gather(want + 3 * p + 2, per_frame);
                const kb_v4 e = d0 * d0 + d1 * d1 + d2 * d2;
                worst4 = kb_v4_select((e > worst4) | (e != e), e, worst4);
            }
            /* frame by frame, as the scalar loop folds and stops */
            for (int l = 0; l < 4; l++) {
                if (worst4[l] > w || isnan(worst4[l]))
                    w = worst4[l];
                if (past(w, screen, limit)) {
                    done = l + 1;
                    stopped = 1;
                    break;
                }
            }
            for (int l = 0; frame_worst && l < done; l++)
                if (!isnan(frame_worst[f + l]) && !(worst4[l] <= frame_worst[f + l]))
                    frame_worst[f + l] = worst4[l];  /* larger, or NaN: a NaN stays */
        }
        store_matrices(m, world_rot + 9 * f, done);
        store_triples(o, origin + 3 * f, done);
        if (points)
            for (ptrdiff_t p = 0; p <= n_sites; p++) {
                kb_v4 at[3];
                point4(m, o, sites, p, at);
                for (int i = 0; i < 3; i++)
                    scatter(at[i], points + f * per_frame + 3 * p + i, per_frame, done);
            }
        if (stopped) {
            *worst = w;
            *stopped_out = 1;
            return f + done;
        }
    }
    *worst = w;
    return f;
}

#endif /* KB_HAVE_VMATH */

kb_status kb_joint_world(ptrdiff_t n_frames, const double *parent_rot,
                         const double *parent_origin, const double *rotations,
                         const double *offsets, ptrdiff_t offset_stride, ptrdiff_t n_sites,
                         const double *sites, double *world_rot, double *origin,
                         double *points, kb_error *err)
{
    return kb_joint_world_error(n_frames, parent_rot, parent_origin, rotations, offsets,
                                offset_stride, n_sites, sites, NULL, INFINITY, world_rot,
                                origin, points, NULL, NULL, err);
}

kb_status kb_joint_world_error(ptrdiff_t n_frames, const double *parent_rot,
                               const double *parent_origin, const double *rotations,
                               const double *offsets, ptrdiff_t offset_stride,
                               ptrdiff_t n_sites, const double *sites, const double *truth,
                               double limit, double *world_rot, double *origin,
                               double *points, double *max_error, double *frame_worst,
                               kb_error *err)
{
    if (n_frames < 1 || n_sites < 0 || (offset_stride != 0 && offset_stride != 3) ||
        !rotations || !offsets || (n_sites && !sites) || !world_rot || !origin ||
        (!parent_rot) != (!parent_origin) || (truth && !max_error) ||
        (frame_worst && !truth))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    double worst = 0.0;  /* squared: one square root at the end */
    /* no limit: only a NaN stops; a negative limit stops at the first point */
    if (!(limit < INFINITY))
        limit = INFINITY;
    const double screen = limit >= 0.0 ? limit * limit * (1.0 - 0x1p-50) : -1.0;
#if defined(KB_HAVE_VMATH)
    if (all_direct(n_frames, rotations)) {
        int stopped = 0;
        ptrdiff_t f = place_blocks(n_frames, parent_rot, parent_origin, rotations, offsets,
                                   offset_stride, n_sites, sites, truth, screen, limit,
                                   world_rot, origin, points, &worst, frame_worst, &stopped);
        for (; !stopped && f < n_frames; f++) {  /* the last few frames */
            local_matrix(rotations + 4 * f, world_rot + 9 * f);
            place_frame(f, parent_rot, parent_origin, offsets, offset_stride, n_sites, sites,
                        truth, world_rot, origin, points, &worst, frame_worst);
            stopped = past(worst, screen, limit);
        }
    } else
#endif
    {
        kb_status status = kb_quat_to_matrix(n_frames, rotations, world_rot, err);
        if (status != KB_OK)
            return status;
        for (ptrdiff_t f = 0; f < n_frames; f++) {
            place_frame(f, parent_rot, parent_origin, offsets, offset_stride, n_sites, sites,
                        truth, world_rot, origin, points, &worst, frame_worst);
            if (past(worst, screen, limit))
                break;
        }
    }
    if (max_error)
        *max_error = sqrt(worst);  /* rounded correctly, so the root of the largest square */
    return kb_ok(err);
}

kb_status kb_joint_reach(ptrdiff_t n_joints, ptrdiff_t n_frames, const ptrdiff_t *parents,
                         const ptrdiff_t *n_sites, const double *points, double *reach,
                         kb_error *err)
{
    if (n_joints < 1 || n_frames < 1 || !parents || !n_sites || !points || !reach)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    ptrdiff_t *start = malloc((size_t)n_joints * sizeof *start);  /* joint j's points */
    if (!start)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    ptrdiff_t at = 0;
    for (ptrdiff_t j = 0; j < n_joints; j++) {
        ptrdiff_t width = n_sites[j] >= 0 && n_sites[j] < PTRDIFF_MAX / 3 / n_frames - 1
                              ? 3 * (1 + n_sites[j]) * n_frames : -1;
        if (parents[j] < -1 || parents[j] >= j || width < 0 || at > PTRDIFF_MAX - width) {
            free(start);
            return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, j, -1);
        }
        start[j] = at;
        at += width;
        reach[j] = 0.0;  /* the largest square, until the end */
    }
    for (ptrdiff_t j = 0; j < n_joints; j++) {
        ptrdiff_t count = 1 + n_sites[j];
        for (ptrdiff_t f = 0; f < n_frames; f++)
            for (ptrdiff_t p = 0; p < count; p++) {
                const double *x = points + start[j] + 3 * (f * count + p);
                /* the point's distance from the origin of j and of each joint above it */
                for (ptrdiff_t a = j; a >= 0; a = parents[a]) {
                    const double *o = points + start[a] + 3 * f * (1 + n_sites[a]);
                    double dx = x[0] - o[0], dy = x[1] - o[1], dz = x[2] - o[2];
                    double square = dx * dx + dy * dy;
                    square += dz * dz;
                    if (square > reach[a] || square != square)  /* larger, or NaN: kept */
                        reach[a] = square;
                }
            }
    }
    for (ptrdiff_t j = 0; j < n_joints; j++)
        reach[j] = sqrt(reach[j]);  /* rounded correctly, so the root of the largest square */
    free(start);
    return kb_ok(err);
}
