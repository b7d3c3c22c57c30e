/* kb_reduce_greedy.c -- greedy keys: KB tangents from the neighbours, so a key shapes
 * the segments from two keys before it to two after; a tree of segments' worst frames. */
#include <float.h>
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

/* The key frames (marks), each segment's worst frame and score at its first key's
 * frame (-inf at others), and a tournament tree over the scores whose root is the
 * segment to split next: the highest score, the earliest segment on a tie. */
typedef struct {
    unsigned char *key;              /* (F) */
    ptrdiff_t *worst;                /* (F) */
    double *score;                   /* (leaves) */
    ptrdiff_t *tree, leaves;         /* (2 leaves): tree[1] the root, leaves at [leaves + f] */
} greedy_state;

/* The segment from key a scored (its worst frame `worst`), and the tree above it. */
static void set_segment(greedy_state *g, ptrdiff_t a, double score, ptrdiff_t worst)
{
    g->score[a] = score;
    g->worst[a] = worst;
    for (ptrdiff_t i = (g->leaves + a) / 2; i >= 1; i /= 2) {
        ptrdiff_t left = g->tree[2 * i], right = g->tree[2 * i + 1];
        ptrdiff_t best = g->score[right] > g->score[left] ? right : left;
        if (best == g->tree[i] && best != a)
            break;  /* the same winner, its score unchanged: so are those above */
        g->tree[i] = best;
    }
}

/* The key after frame f (step 1, f < F - 1) or before it (step -1, f > 0). */
static ptrdiff_t key_beside(const greedy_state *g, ptrdiff_t f, int step)
{
    do
        f += step;
    while (!g->key[f]);
    return f;
}

/* The keys ascending into out; their count. */
static ptrdiff_t list_keys(const greedy_state *g, ptrdiff_t F, ptrdiff_t *out)
{
    ptrdiff_t n = 0;
    for (ptrdiff_t f = 0; f < F; f++)
        if (g->key[f])
            out[n++] = f;
    return n;
}

/* Scores each segment between keys a and b by its worst frame (the first
 * of its highest score). */
static void score_segments(greedy_state *g, const space *s, ptrdiff_t a, ptrdiff_t b)
{
    while (a != b) {
        ptrdiff_t worst = a, f = a + 1;
        for (; !g->key[f]; f++)
            if (s->score[f] > s->score[worst])
                worst = f;
        set_segment(g, a, s->score[worst], worst);
        a = f;
    }
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
    greedy_state g = {.leaves = 1};
    while (g.leaves < F)
        g.leaves *= 2;
    size_t extra = (size_t)(2 * F + 2 * g.leaves) * sizeof(ptrdiff_t)
                   + (size_t)g.leaves * sizeof(double) + (size_t)F;
    void *block = kb_rd_space_alloc(&s, F, extra);
    if (!block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    g.worst = (ptrdiff_t *)(s.kind + F + (8 - (size_t)F % 8) % 8);
    ptrdiff_t *sorted = g.worst + F;
    g.score = (double *)(sorted + F);
    g.tree = (ptrdiff_t *)(g.score + g.leaves);
    g.key = (unsigned char *)(g.tree + 2 * g.leaves);
    for (ptrdiff_t f = 0; f < g.leaves; f++) {
        g.score[f] = -INFINITY;
        g.tree[g.leaves + f] = f;
    }
    for (ptrdiff_t i = g.leaves - 1; i >= 1; i--)
        g.tree[i] = g.tree[2 * i];
    memset(g.key, 0, (size_t)F);
    g.key[0] = g.key[F - 1] = 1;
    for (ptrdiff_t i = 0; i < n_keyed; i++) {  /* the order so far: interior frames, once each */
        if (order[i] <= 0 || order[i] >= F - 1 || g.key[order[i]]) {
            free(block);
            return kb_fail(err, KB_EBADSHAPE, KB_ARG_TIMES, 0, -1);
        }
        g.key[order[i]] = 1;
    }
    ptrdiff_t window[7];
    status = kb_rd_joint_errors(jt, sorted, list_keys(&g, F, sorted), NULL, NULL, 0, F - 1, NULL,
                                &s, err);
    /* from the first pair of orthogonal neighbouring keys on, a window is no
     * longer the whole spline: every key added evaluates it whole */
    int whole = !s.signs_follow;
    if (status == KB_OK)
        score_segments(&g, &s, 0, F - 1);
    while (status == KB_OK) {
        ptrdiff_t a = g.tree[1], w = g.worst[a];
        if (!(g.score[a] > floor) || w == a)
            break;
        if (order) {
            order[n_keyed] = w;
            order_score[n_keyed] = g.score[a];
        }
        n_keyed++;
        g.key[w] = 1;
        /* the keys that shape the changed frames: three on each side */
        ptrdiff_t lo = w, hi = w, before = 0, after = 0, n = 0;
        for (; before < 3 && lo != 0; before++)
            lo = key_beside(&g, lo, -1);
        for (; after < 3 && hi != F - 1; after++)
            hi = key_beside(&g, hi, 1);
        for (window[n++] = lo; window[n - 1] != hi; n++)
            window[n] = key_beside(&g, window[n - 1], 1);
        ptrdiff_t first = window[before >= 2 ? before - 2 : 0];
        ptrdiff_t last = window[after >= 2 ? before + 2 : n - 1];
        if (!whole) {
            s.signs_follow = 1;
            status = kb_rd_joint_errors(jt, window, n, NULL, NULL, first, last, NULL, &s, err);
            whole = status == KB_OK && !s.signs_follow;
        }
        if (whole && status == KB_OK) {
            first = 0;
            last = F - 1;
            status = kb_rd_joint_errors(jt, sorted, list_keys(&g, F, sorted), NULL, NULL, first,
                                        last, NULL, &s, err);
        }
        if (status == KB_OK)
            score_segments(&g, &s, first, last);
    }
    ptrdiff_t n = list_keys(&g, F, sorted);
    if (status == KB_OK && (angle || distance))
        status = kb_rd_final_errors(jt, sorted, n, NULL, NULL, angle, distance, &s, err);
    if (status == KB_OK) {
        if (keys) {
            memcpy(keys, sorted, (size_t)n * sizeof(ptrdiff_t));
            *n_keys = n;
        }
        if (order)
            *n_order = n_keyed;
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
