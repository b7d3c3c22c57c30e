/* kb_sweep.c -- evaluation with knots and query times shared by every
 * track: each block of queries is located once, then every track is swept
 * over it, four values at a time; outputs larger than half the last-level
 * cache bypass it. */
#define _POSIX_C_SOURCE 200809L  /* sysconf */
#include "spline/kb_cubic.h"
#include "simd/kb_vmath.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

/* Queries located per block when every track shares knots and times.  Large
 * enough that a track's results for a block are one long run of memory
 * (W1's 1000 queries are one block), small enough that the repeated
 * parameters (24 KB for D = 3) stay in the first-level cache. */
#define KB_CHUNK 1024

/* Widest D the vector sweep handles; wider tracks take the scalar loop. */
#define KB_TILE_DIM 4

#if defined(KB_HAVE_VMATH)
/* Four doubles at a time (kb_v4): the same products and sums, in the same
 * order, as the scalar code, so the results are bit-identical. */
typedef float kb_f4 __attribute__((vector_size(16)));
#define KB_HAVE_V4 1
#endif

/* Results of queries [i, end) on one segment (its coefficients in seg) for
 * one track, written from out[i * dim].  With dim 3 each vector store also
 * writes the next query's first value, which is then overwritten, so the
 * last query of the block takes the scalar path. */
KB_INLINE ptrdiff_t run_results(const double *seg, ptrdiff_t dim, const double (*w)[4],
                                ptrdiff_t i, ptrdiff_t end, ptrdiff_t n, double *out)
{
#if defined(KB_HAVE_V4)
    if (dim == 3 || dim == 4) {
#define KB_COEF(k) \
    (kb_v4){seg[k * dim], seg[k * dim + 1], seg[k * dim + 2], dim == 4 ? seg[k * dim + 3] : 0.0}
        const kb_v4 c0 = KB_COEF(0), c1 = KB_COEF(1), c2 = KB_COEF(2), c3 = KB_COEF(3);
#undef KB_COEF
        const ptrdiff_t vec_end = dim == 4 || end < n ? end : end - 1;
        for (; i < vec_end; i++) {
            const kb_v4 v = w[i][0] * c0 + w[i][1] * c1 + w[i][2] * c2 + w[i][3] * c3;
            memcpy(out + i * dim, &v, sizeof v);
        }
    }
#else
    (void)n;
#endif
    for (; i < end; i++)
        combine(seg, dim, w[i], out, NULL, i * dim);
    return i;
}

#if defined(KB_HAVE_V4)
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define KB_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#endif
#endif

/* tile[k][p] holds lanes 4p .. 4p+3 of coefficient k repeated, (c_0 ..
 * c_{dim-1}, c_0 ..), for every p (those past the period repeat the first
 * ones).  For dim 3 (the common case) from three loads and shuffles rather
 * than twelve gathers: a run may be a few queries long. */
KB_INLINE void coefficient_tiles(const double *seg, ptrdiff_t dim, kb_v4 tile[4][KB_TILE_DIM])
{
#if defined(KB_SHUFFLE)
    if (dim == 3) {
        kb_v4 a, b, c;  /* x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3 */
        memcpy(&a, seg, sizeof a);
        memcpy(&b, seg + 4, sizeof b);
        memcpy(&c, seg + 8, sizeof c);
        const kb_v4 ck[4] = {a, KB_SHUFFLE(a, b, 3, 4, 5, 3), KB_SHUFFLE(b, c, 2, 3, 4, 2),
                             KB_SHUFFLE(c, c, 1, 2, 3, 1)};
        for (int k = 0; k < 4; k++) {
            tile[k][0] = KB_SHUFFLE(ck[k], ck[k], 0, 1, 2, 0);
            tile[k][1] = KB_SHUFFLE(ck[k], ck[k], 1, 2, 0, 1);
            tile[k][2] = KB_SHUFFLE(ck[k], ck[k], 2, 0, 1, 2);
            for (int p = 3; p < KB_TILE_DIM; p++)
                tile[k][p] = tile[k][p - 3];
        }
        return;
    }
#endif
    for (int k = 0; k < 4; k++)
        for (ptrdiff_t p = 0; p < KB_TILE_DIM; p++) {
            const double *ck = seg + k * dim;
            tile[k][p] = (kb_v4){ck[(4 * p) % dim], ck[(4 * p + 1) % dim],
                                 ck[(4 * p + 2) % dim], ck[(4 * p + 3) % dim]};
        }
}

/* Four values into out64 or out32 from f. */
KB_INLINE void store4(kb_v4 v, double *out64, float *out32, ptrdiff_t f)
{
    if (out64) {
        memcpy(out64 + f, &v, sizeof v);
    } else {
        const kb_f4 v32 = __builtin_convertvector(v, kb_f4);
        memcpy(out32 + f, &v32, sizeof v32);
    }
}
#endif

/*
 * Positions of one track on one segment, elements [f, f_end) of the track's
 * output viewed flat (element f is component f % dim of query f / dim;
 * f starts on a query), from u_rep, where every query's parameter is
 * repeated dim times.  Four elements at a time: the coefficients are laid
 * out as tiles repeating (c_0 .. c_{dim-1}) across lcm(dim, 4) lanes, so
 * every vector is one Horner evaluation with no shuffles in the loop.
 *
 * Runs are short (W1: 16 queries), so a run's end costs as much as its
 * middle: when the track's block (up to f_limit) has three more elements,
 * the last vector is stored whole, writing up to three elements of the
 * runs after this one, which they then overwrite.  Otherwise the last
 * partial vector is finished by the scalar code, whose rounding is the same.
 */
KB_INLINE void horner_run(const double *seg, ptrdiff_t dim, const double *u_rep,
                          ptrdiff_t f, ptrdiff_t f_end, ptrdiff_t f_limit, double *out64,
                          float *out32)
{
    const ptrdiff_t f_run = f;
#if defined(KB_HAVE_V4)
    if (dim <= KB_TILE_DIM) {
        const ptrdiff_t period = dim % 2 ? dim : dim % 4 ? dim / 2 : dim / 4;  /* lcm / 4 */
        /* whole vectors start below stop */
        const ptrdiff_t stop = f_end + 3 <= f_limit ? f_end : f_end - 3;
        kb_v4 tile[4][KB_TILE_DIM];
        coefficient_tiles(seg, dim, tile);
        while (f < stop) {
            /* p is a constant in each unrolled step: the tiles stay in registers */
            for (ptrdiff_t p = 0; p < period && f < stop; p++, f += 4) {
                kb_v4 u;
                memcpy(&u, u_rep + f, sizeof u);
                store4(((tile[3][p] * u + tile[2][p]) * u + tile[1][p]) * u + tile[0][p],
                       out64, out32, f);
            }
        }
        if (f >= f_end)
            return;
    }
#else
    (void)f_limit;
#endif
    /* element by element from f, which need not start a query */
    for (; f < f_end; f++)
        put_value(out64, out32, f, horner(seg, dim, (f - f_run) % dim, u_rep[f]));
}

/* One block of located queries, shared by every track. */
typedef struct {
    ptrdiff_t n;                     /* queries in the block */
    ptrdiff_t seg[KB_CHUNK];         /* each query's segment */
    ptrdiff_t run_end[KB_CHUNK];     /* where its run (one segment, one form) ends */
    int all_horner;                  /* every query is one (the stream's case) */
    int ascending;                   /* queries never descend */
    unsigned char horner[KB_CHUNK];  /* a position inside the domain: Horner in u */
    double u[KB_CHUNK];              /* its parameter, for Horner */
    /* u repeated dim times, for the vector sweep, and a vector's worth of
     * padding read (not stored) by a run's last partial vector */
    double u_rep[KB_CHUNK * KB_TILE_DIM + 4];
    double w[KB_CHUNK][4];           /* otherwise: weights of the coefficients */
} kb_block;

#if defined(KB_HAVE_V4) && defined(__SSE2__)
#include <emmintrin.h>
#define KB_HAVE_STREAM 1

/*
 * Outputs from half the last-level cache on (float64; float32 from the
 * whole of it) go past the caches, with non-temporal stores.  Below that
 * the output stays in the cache, for the caller to read, and cached stores
 * win; above it a cached store first reads its line from memory.  Half the
 * cache is where the two drew (docs/benchmarks.md, Tuning notes).
 */
static double last_level_cache_bytes(void)
{
    static _Atomic long known;  /* 0: not asked yet */
    long bytes = known;
    if (bytes == 0) {
        /* KBSPLINE_CACHE_BYTES overrides what the system says (a VM may
         * report the host's whole cache); 32 MB when neither says */
        const char *env = getenv("KBSPLINE_CACHE_BYTES");
        char *end = NULL;
        const long given = env ? strtol(env, &end, 10) : 0;
        bytes = 32L << 20;
        if (given > 0 && end && *end == '\0') {
            bytes = given;
        } else {
#if defined(_SC_LEVEL3_CACHE_SIZE)
            const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
            if (l3 > 0)
                bytes = l3;
#endif
        }
        known = bytes;
    }
    return (double)bytes;
}

/* Four values to out64 or out32 from f (16-byte aligned), past the caches.
 * SSE2's stores: every x86-64 target_clones copy has them. */
KB_INLINE void stream4(kb_v4 v, double *out64, float *out32, ptrdiff_t f)
{
    if (out64) {
        _mm_stream_pd(out64 + f, (__m128d){v[0], v[1]});
        _mm_stream_pd(out64 + f + 2, (__m128d){v[2], v[3]});
    } else {
        const kb_f4 v32 = __builtin_convertvector(v, kb_f4);
        _mm_stream_ps(out32 + f, (__m128)v32);
    }
}

/* Streaming stores are weakly ordered: fenced before the results are
 * handed over (to the caller or the thread that waits on this one). */
static void stream_fence(void)
{
    _mm_sfence();
}

/* Output element f (component f % dim of query f / dim) of one track's
 * block, the scalar way: for the ends of a streamed block. */
KB_INLINE double block_element(const double *cf, const kb_block *b, ptrdiff_t dim, ptrdiff_t f)
{
    const ptrdiff_t q = f / dim;
    return horner(cf + b->seg[q] * 4 * dim, dim, f - q * dim, b->u[q]);
}

/* The tiles of one segment for a unit of three vectors whose first element
 * is component r of a query: unit[k][v] serves vector v.  Only dim 3
 * changes tile from vector to vector (r + v); for dim 1, 2 and 4 the caller
 * ensures r == 0. */
KB_INLINE void unit_tiles(const double *seg, ptrdiff_t dim, ptrdiff_t r, kb_v4 unit[4][3])
{
    kb_v4 tile[4][KB_TILE_DIM];
    coefficient_tiles(seg, dim, tile);
    for (int k = 0; k < 4; k++)
        for (int v = 0; v < 3; v++)  /* r is fixed for a track's block: predicted */
            unit[k][v] = dim != 3 ? tile[k][0]
                         : r == 0 ? tile[k][v % 3]
                         : r == 1 ? tile[k][(v + 1) % 3]
                                  : tile[k][(v + 2) % 3];
}

/*
 * One track's results for a block whose queries are all positions inside
 * the domain, elements [0, n dim) of its output, with streaming stores.
 * Those need whole, aligned vectors, so the stream is cut into units of 12
 * elements (three vectors) from the first aligned element g0, regardless
 * of where runs begin; a unit that reaches into the next runs takes those
 * lanes from their segments' tiles.  Elements before g0 and after the last
 * unit are computed one at a time.  Every value is the same Horner
 * expression as on the other paths.
 */
KB_INLINE void stream_track(const double *cf, const kb_block *b, ptrdiff_t dim, ptrdiff_t g0,
                            double *out64, float *out32)
{
    const ptrdiff_t n_el = b->n * dim, r = g0 % dim;
    const kb_m4 lane = {0, 1, 2, 3};
    ptrdiff_t g = 0;
    for (; g < g0 && g < n_el; g++)
        put_value(out64, out32, g, block_element(cf, b, dim, g));
    if (g + 12 <= n_el) {
        ptrdiff_t q = g / dim, run_end = b->run_end[q] * dim;
        kb_v4 t[4][3];
        unit_tiles(cf + b->seg[q] * 4 * dim, dim, r, t);
#define KB_UNIT_HORNER(j) (((t[3][j] * u + t[2][j]) * u + t[1][j]) * u + t[0][j])
#define KB_LOAD_U(j) memcpy(&u, b->u_rep + g + 4 * (j), sizeof u)
        for (; g + 12 <= n_el; g += 12) {
            /* the unit's own pointers, so stores take constant offsets from
             * them even where signed overflow wraps (Python's -fwrapv) */
            double *const o64 = out64 ? out64 + g : NULL;
            float *const o32 = out32 ? out32 + g : NULL;
            kb_v4 u;
            if (run_end >= g + 12) {  /* most units: one vector at a time */
                for (int j = 0; j < 3; j++) {
                    KB_LOAD_U(j);
                    stream4(KB_UNIT_HORNER(j), o64, o32, 4 * j);
                }
                continue;
            }
            /* the unit reaches into the next runs: once per run */
            kb_v4 v[3];
            for (int j = 0; j < 3; j++) {
                KB_LOAD_U(j);
                v[j] = KB_UNIT_HORNER(j);
            }
            while (run_end < g + 12) {
                const ptrdiff_t start = run_end;
                q = start / dim;
                run_end = b->run_end[q] * dim;
                unit_tiles(cf + b->seg[q] * 4 * dim, dim, r, t);
                for (int j = 0; j < 3; j++) {
                    const kb_m4 from_here = lane + (g + 4 * j) >= start;
                    KB_LOAD_U(j);
                    v[j] = kb_v4_select(from_here, KB_UNIT_HORNER(j), v[j]);
                }
            }
            for (int j = 0; j < 3; j++)
                stream4(v[j], o64, o32, 4 * j);
        }
#undef KB_LOAD_U
#undef KB_UNIT_HORNER
    }
    for (; g < n_el; g++)
        put_value(out64, out32, g, block_element(cf, b, dim, g));
}

/* Elements before the first 16-byte boundary at or after p (of element
 * size size); -1 if p is not aligned to its element size. */
static ptrdiff_t stream_head(const void *p, size_t size)
{
    const uintptr_t a = (uintptr_t)p;
    return a % size ? -1 : (ptrdiff_t)(((16 - a % 16) % 16) / size);
}
#endif

/* Shared knots, times and no ease: block b swept over tracks [tb, te).
 * Sorted queries come in runs on one segment; a run's coefficients are
 * loaded once into vectors kept in registers. */
KB_INLINE void sweep_block(const kb_curve *c, const kb_block *b, ptrdiff_t q0,
                           ptrdiff_t n_eval, ptrdiff_t tb, ptrdiff_t te, ptrdiff_t dim,
                           int stream, double *out64, float *out32)
{
    const ptrdiff_t seg_size = 4 * dim, n = b->n;
    for (ptrdiff_t tr = tb; tr < te; tr++) {
        const double *cf = c->coef + tr * c->n_seg * seg_size;
        const ptrdiff_t base = (tr * n_eval + q0) * dim;
        double *o64 = out64 ? out64 + base : NULL;
        float *o32 = out32 ? out32 + base : NULL;
#if defined(KB_HAVE_STREAM)
        if (stream && b->all_horner && dim <= KB_TILE_DIM) {
            const ptrdiff_t g0 = o64 ? stream_head(o64, sizeof *o64)
                                     : stream_head(o32, sizeof *o32);
            if (g0 >= 0 && (dim == 3 || g0 % dim == 0)) {
                stream_track(cf, b, dim, g0, o64, o32);
                continue;
            }
        }
#else
        (void)stream;
#endif
        /* Unsorted queries jump between segments, which the hardware does
         * not see coming: once the tracks' tables have left the caches each
         * would wait on memory.  So the same segments two tracks on are
         * fetched while this one computes (docs/benchmarks.md, Tuning notes). */
        const double *ahead = tr + 2 < te ? cf + 2 * c->n_seg * seg_size : NULL;
        for (ptrdiff_t i = 0; i < n;) {
            const ptrdiff_t end = b->run_end[i];
            const double *seg = cf + b->seg[i] * seg_size;
            if (ahead && !b->ascending)
                kb_prefetch(ahead + b->seg[i] * seg_size, seg_size * sizeof *ahead);
            if (b->horner[i] && dim <= KB_TILE_DIM) {
                horner_run(seg, dim, b->u_rep, i * dim, end * dim, n * dim, o64, o32);
                i = end;
            } else if (b->horner[i]) {
                for (; i < end; i++)
                    horner_store(seg, dim, b->u[i], o64, o32, i * dim);
            } else if (o64) {
                i = run_results(seg, dim, (const double (*)[4])b->w, i, end, n, o64);
            } else {
                for (; i < end; i++)
                    combine(seg, dim, b->w[i], NULL, o32, i * dim);
            }
        }
    }
}

/* Compiled twice on x86-64 Linux with GCC, for the baseline and for AVX2,
 * and chosen at load time (ifunc): wheels stay portable.  FMA is not used:
 * ISO C mode does not contract a * b + c, so both copies round alike. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
__attribute__((target_clones("default", "avx2")))
#endif
static void sweep_dispatch(const kb_curve *c, const kb_block *b, ptrdiff_t q0,
                           ptrdiff_t n_eval, ptrdiff_t tb, ptrdiff_t te, int stream,
                           double *out64, float *out32)
{
#define KB_SWEEP(D)                                                                       \
    (out64 ? sweep_block(c, b, q0, n_eval, tb, te, D, stream, out64, NULL)                \
           : sweep_block(c, b, q0, n_eval, tb, te, D, stream, NULL, out32))
    switch (c->dim) {
    case 1: KB_SWEEP(1); break;
    case 2: KB_SWEEP(2); break;
    case 3: KB_SWEEP(3); break;
    case 4: KB_SWEEP(4); break;
    default: KB_SWEEP(c->dim); break;
    }
#undef KB_SWEEP
}

/* Locates queries t[0 .. n) into b for a curve of dimension dim. */
static void locate_block(const kb_curve *c, int nu, const double *t, ptrdiff_t n,
                         const seg_grid *grid, ptrdiff_t *hint, kb_block *b)
{
    const ptrdiff_t dim = c->dim;
    b->n = n;
    for (ptrdiff_t i = 0; i < n; i++) {
        kb_loc L;
        *hint = grid_hint(grid, c->knots, c->n_seg, t[i], *hint);
        locate(c->knots, c->n_seg, c->extrap, t[i], hint, &L);
        b->seg[i] = L.seg;
        b->horner[i] = nu == 0 && !L.outside;
        b->u[i] = L.u;
        if (dim <= KB_TILE_DIM)
            for (ptrdiff_t j = 0; j < dim; j++)
                b->u_rep[i * dim + j] = L.u;
        if (!b->horner[i])
            segment_weights(&L, NULL, nu, b->w[i]);
    }
    if (dim <= KB_TILE_DIM)
        for (ptrdiff_t j = 0; j < 4; j++)
            b->u_rep[n * dim + j] = 0.0;
    b->all_horner = 1;
    for (ptrdiff_t i = 0; i < n; i++)
        b->all_horner &= b->horner[i];
    b->ascending = queries_ascend(t, n);
    for (ptrdiff_t i = n - 1; i >= 0; i--)
        b->run_end[i] = i + 1 < n && b->seg[i + 1] == b->seg[i] &&
                                b->horner[i + 1] == b->horner[i]
                            ? b->run_end[i + 1]
                            : i + 1;
}

int kb_sweep_shared(const kb_curve *c, int nu, const double *t, ptrdiff_t n_eval,
                    ptrdiff_t track_begin, ptrdiff_t track_end, double *out64, float *out32)
{
    kb_block *block = malloc(sizeof *block);
    if (!block)
        return 0;
    ptrdiff_t hint = 0;
    seg_grid grid;  /* sized by one track's values: queries are located once */
    grid_alloc(&grid, c->n_seg, t, n_eval, n_eval * c->dim);
    grid_build(&grid, c->knots, c->n_seg);
#if defined(KB_HAVE_STREAM)
    const double values = (double)c->n_tracks * (double)n_eval * (double)c->dim;
    const int stream = out64 ? values * sizeof *out64 >= 0.5 * last_level_cache_bytes()
                             : values * sizeof *out32 >= last_level_cache_bytes();
#else
    const int stream = 0;
#endif
    for (ptrdiff_t q0 = 0; q0 < n_eval; q0 += KB_CHUNK) {
        const ptrdiff_t n = n_eval - q0 < KB_CHUNK ? n_eval - q0 : KB_CHUNK;
        locate_block(c, nu, t + q0, n, &grid, &hint, block);
        sweep_dispatch(c, block, q0, n_eval, track_begin, track_end, stream, out64, out32);
    }
#if defined(KB_HAVE_STREAM)
    if (stream)
        stream_fence();
#endif
    free(grid.first);
    free(block);
    return 1;
}
