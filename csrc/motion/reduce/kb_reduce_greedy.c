/*
 * kb_reduce_greedy.c -- greedy keys (kb_reduce_greedy, kb_reduce_greedy_order):
 * KB tangents from the neighbours, so a key shapes the segments from two
 * keys before it to two after it; a heap of each segment's worst frame.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "motion/reduce/kb_reduce_stages.h"

/* ---------------------------------------------------------------- */
/* Greedy selection                                                  */
/* ---------------------------------------------------------------- */

/* A segment's worst frame; the heap pops the worst score first, then the
 * earliest frame.  `entry` tells a segment's latest record from stale ones. */
typedef struct {
    double score;
    ptrdiff_t worst, start;
    ptrdiff_t entry;
} candidate;

static int pops_first(const candidate *a, const candidate *b)
{
    if (a->score != b->score)
        return a->score > b->score;
    return a->worst != b->worst ? a->worst < b->worst : a->entry < b->entry;
}

static void heap_push(candidate *heap, ptrdiff_t *size, candidate c)
{
    ptrdiff_t i = (*size)++;
    while (i > 0 && pops_first(&c, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = c;
}

static candidate heap_pop(candidate *heap, ptrdiff_t *size)
{
    candidate top = heap[0], last = heap[--*size];
    ptrdiff_t i = 0, n = *size;
    for (;;) {
        ptrdiff_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && pops_first(&heap[child + 1], &heap[child]))
            child++;
        if (!pops_first(&heap[child], &last))
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (n)
        heap[i] = last;
    return top;
}

typedef struct {
    ptrdiff_t *prev, *next, *latest;
    candidate *heap;
    ptrdiff_t heap_size, entries;
} greedy_state;

/* The first frame of the highest score in [a, end). */
static ptrdiff_t segment_worst(const space *s, ptrdiff_t a, ptrdiff_t end)
{
    ptrdiff_t worst = a;
    for (ptrdiff_t f = a + 1; f < end; f++)
        if (s->score[f] > s->score[worst])
            worst = f;
    return worst;
}

/* Pushes the worst frame of each segment between keys a and b. */
static void push_segments(greedy_state *g, const space *s, ptrdiff_t a, ptrdiff_t b)
{
    for (; a != b; a = g->next[a]) {
        ptrdiff_t worst = segment_worst(s, a, g->next[a]);
        g->latest[a] = ++g->entries;
        heap_push(g->heap, &g->heap_size, (candidate){s->score[worst], worst, a, g->entries});
    }
}

/* Links the keys of the first and last frames and of order[0..n) (interior
 * frames, each once: else 0) and writes them ascending into sorted;
 * their count. */
static ptrdiff_t link_keys(greedy_state *g, ptrdiff_t F, const ptrdiff_t *order, ptrdiff_t n,
                           ptrdiff_t *sorted)
{
    memset(sorted, 0, (size_t)F * sizeof(ptrdiff_t));  /* marks, then the keys */
    sorted[0] = sorted[F - 1] = 1;
    for (ptrdiff_t i = 0; i < n; i++) {
        if (order[i] <= 0 || order[i] >= F - 1 || sorted[order[i]])
            return 0;
        sorted[order[i]] = 1;
    }
    ptrdiff_t K = 0;
    for (ptrdiff_t f = 0; f < F; f++)
        if (sorted[f])
            sorted[K++] = f;
    for (ptrdiff_t k = 0; k + 1 < K; k++) {
        g->next[sorted[k]] = sorted[k + 1];
        g->prev[sorted[k + 1]] = sorted[k];
    }
    return K;
}

/* The greedy selection until no score is above `floor`: keys, the order
 * keyed with scores (carried on from *n_order), final errors (NULL: skip). */
static kb_status greedy(const kb_reduce_joint *jt, double floor, ptrdiff_t *keys,
                        ptrdiff_t *n_keys, ptrdiff_t *order, double *order_score,
                        ptrdiff_t *n_order, double *angle, double *distance, kb_error *err)
{
    kb_status status = kb_rd_validate(jt, err);
    if (status != KB_OK)
        return status;
    if (!(floor > 0))
        return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    ptrdiff_t F = jt->n_frames, n_keyed = order ? *n_order : 0;
    if (n_keyed < 0 || n_keyed > F - 2)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_TIMES, 0, -1);
    space s;
    size_t extra = (size_t)F * (4 * sizeof(ptrdiff_t) + 5 * sizeof(candidate));
    void *block = kb_rd_space_alloc(&s, F, extra);
    if (!block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    greedy_state g = {.heap_size = 0, .entries = 0};
    g.prev = (ptrdiff_t *)(s.kind + F + (8 - (size_t)F % 8) % 8);
    g.next = g.prev + F;
    g.latest = g.next + F;
    ptrdiff_t *sorted = g.latest + F;
    g.heap = (candidate *)(sorted + F);
    ptrdiff_t window[7], K = link_keys(&g, F, order, n_keyed, sorted);
    if (!K) {
        free(block);
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_TIMES, 0, -1);
    }
    status = kb_rd_joint_errors(jt, sorted, K, NULL, NULL, 0, F - 1, &s, err);
    /* from the first pair of orthogonal neighbouring keys on, a window is no
     * longer the whole spline: every key added evaluates it whole */
    int whole = !s.signs_follow;
    if (status == KB_OK)
        push_segments(&g, &s, 0, F - 1);
    while (status == KB_OK && g.heap_size) {
        candidate c = heap_pop(g.heap, &g.heap_size);
        if (g.latest[c.start] != c.entry)
            continue;  /* the segment was split or scored again since */
        if (!(c.score > floor) || c.worst == c.start)
            break;
        ptrdiff_t w = c.worst, b = g.next[c.start];
        if (order) {
            order[n_keyed] = w;
            order_score[n_keyed] = c.score;
        }
        n_keyed++;
        g.next[c.start] = w;
        g.prev[w] = c.start;
        g.next[w] = b;
        g.prev[b] = w;
        /* the keys that shape the changed frames: three on each side */
        ptrdiff_t lo = w, hi = w, before = 0, after = 0, n = 0;
        while (before < 3 && lo != 0) {
            lo = g.prev[lo];
            before++;
        }
        while (after < 3 && hi != F - 1) {
            hi = g.next[hi];
            after++;
        }
        for (ptrdiff_t k = lo;; k = g.next[k]) {
            window[n++] = k;
            if (k == hi)
                break;
        }
        ptrdiff_t first = window[before >= 2 ? before - 2 : 0];
        ptrdiff_t last = window[after >= 2 ? before + 2 : n - 1];
        if (!whole) {
            s.signs_follow = 1;
            status = kb_rd_joint_errors(jt, window, n, NULL, NULL, first, last, &s, err);
            whole = status == KB_OK && !s.signs_follow;
        }
        if (whole && status == KB_OK) {
            ptrdiff_t all = 0;
            for (ptrdiff_t k = 0;; k = g.next[k]) {
                sorted[all++] = k;
                if (k == F - 1)
                    break;
            }
            first = 0;
            last = F - 1;
            status = kb_rd_joint_errors(jt, sorted, all, NULL, NULL, first, last, &s, err);
            g.heap_size = 0;  /* every segment is pushed again: the heap's records are stale */
        }
        if (status == KB_OK)
            push_segments(&g, &s, first, last);
    }
    ptrdiff_t n = 0, *found = g.latest;  /* the heap's records are no longer needed */
    for (ptrdiff_t k = 0; status == KB_OK; k = g.next[k]) {
        found[n++] = k;
        if (k == F - 1)
            break;
    }
    if (status == KB_OK && (angle || distance))
        status = kb_rd_skipped_errors(jt, found, n, NULL, NULL, &s, err);
    if (status == KB_OK && (angle || distance))
        status = kb_rd_key_errors(jt, found, n, NULL, NULL, &s, err);
    if (status == KB_OK) {
        if (keys) {
            memcpy(keys, found, (size_t)n * sizeof(ptrdiff_t));
            *n_keys = n;
        }
        if (order)
            *n_order = n_keyed;
        if (angle)
            memcpy(angle, s.angle, (size_t)F * sizeof(double));
        if (distance)
            memcpy(distance, s.distance, (size_t)F * sizeof(double));
    }
    free(block);
    return status == KB_OK ? kb_ok(err) : status;
}

kb_status kb_reduce_greedy(const kb_reduce_joint *jt, ptrdiff_t *keys, ptrdiff_t *n_keys,
                           double *angle, double *distance, kb_error *err)
{
    return greedy(jt, 1.0, keys, n_keys, NULL, NULL, NULL, angle, distance, err);
}

kb_status kb_reduce_greedy_order(const kb_reduce_joint *jt, double floor, ptrdiff_t *order,
                                 double *order_score, ptrdiff_t *n_order, kb_error *err)
{
    return greedy(jt, floor, NULL, NULL, order, order_score, n_order, NULL, NULL, err);
}
