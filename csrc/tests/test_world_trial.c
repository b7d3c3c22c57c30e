/* test_world_trial.c -- kb_world_trial and kb_world_accept on a tree of
 * five joints over 13 frames (blocks of four and a frame after): a
 * trial of one joint's new curves, placed again only where they differ,
 * leaves the same bits as placing every joint at every frame again (its
 * errors, worst, frame_worst, and once accepted every held array); a
 * trial past its limit stops without touching the held state; identical
 * curves give no runs; bad input refused. */
#include <math.h>
#include <string.h>

#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"

#define TJ 5
#define TF 13

/* root 0; 1 below it, 2 below 1; 3 below the root; 4 below 2 */
static const ptrdiff_t tree_parents[TJ] = {-1, 0, 1, 0, 2};
static const ptrdiff_t tree_sites[TJ] = {0, 1, 0, 2, 1};
#define TS 4                                      /* sites in all */
#define TT (3 * TF * (TJ + TS))                   /* truth's doubles */

typedef struct {
    double rotations[TJ * TF * 4], offsets[TJ * TF * 3], world_rot[TJ * TF * 9];
    double origin[TJ * TF * 3], frame_error[TJ * TF], error[TJ];
} tree_state;

static kb_world_placed placed_of(tree_state *s)
{
    kb_world_placed p = {s->rotations, s->offsets, s->world_rot, s->origin, s->frame_error,
                         s->error};
    return p;
}

static double next_value(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return *state / 4294967296.0 * 2.0 - 1.0;
}

/* Random curves (quaternions not unit), sites, and a truth near zero. */
static void random_clip(tree_state *s, double *sites, double *truth)
{
    unsigned state = 777u;
    for (int k = 0; k < TJ * TF * 4; k++)
        s->rotations[k] = next_value(&state);
    for (int k = 0; k < TJ * TF * 3; k++)
        s->offsets[k] = next_value(&state);
    for (int k = 0; k < 3 * TS; k++)
        sites[k] = next_value(&state);
    for (int k = 0; k < TT; k++)
        truth[k] = 0.1 * next_value(&state);
}

/* Every joint placed at every frame by kb_joint_world, as WorldError
 * builds its held state. */
static int place_all(const kb_world_points *points, tree_state *s)
{
    const double *sites = points->sites, *truth = points->truth;
    kb_error err;
    for (ptrdiff_t m = 0; m < TJ; m++) {
        const ptrdiff_t p = tree_parents[m];
        memset(s->frame_error + TF * m, 0, TF * sizeof(double));
        if (kb_joint_world_error(TF, p < 0 ? NULL : s->world_rot + 9 * TF * p,
                                 p < 0 ? NULL : s->origin + 3 * TF * p, s->rotations + 4 * TF * m,
                                 s->offsets + 3 * TF * m, 3, tree_sites[m], sites, truth, INFINITY,
                                 s->world_rot + 9 * TF * m, s->origin + 3 * TF * m, NULL,
                                 &s->error[m], s->frame_error + TF * m, &err) != KB_OK)
            return 0;
        sites += 3 * tree_sites[m];
        truth += 3 * TF * (1 + tree_sites[m]);
    }
    return 1;
}

static int same_state(const tree_state *a, const tree_state *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

KB_TEST(test_world_trial_equals_placing_every_frame)
{
    static tree_state held, trial, full, before;
    double sites[3 * TS], truth[TT], rotations[TF * 4], offsets[TF * 3];
    ptrdiff_t runs[TF + 1], n_runs = -1;
    kb_error err;
    const kb_world_points points = {TJ, TF, tree_parents, tree_sites, sites, truth};
    random_clip(&held, sites, truth);
    KB_ASSERT(place_all(&points, &held));
    kb_world_placed h = placed_of(&held), t = placed_of(&trial);
    unsigned state = 99u;
    for (ptrdiff_t j = 0; j < TJ; j++) {
        /* new rows at frames 0, 2-6 and 12 (rotation or offset alone) */
        memcpy(rotations, held.rotations + 4 * TF * j, sizeof rotations);
        memcpy(offsets, held.offsets + 3 * TF * j, sizeof offsets);
        rotations[4 * 0 + 1] += 0.25;
        for (int f = 2; f <= 6; f++)
            rotations[4 * f + 2] = next_value(&state);
        offsets[3 * 12] += 0.5;
        memcpy(&full, &held, sizeof full);
        memcpy(full.rotations + 4 * TF * j, rotations, sizeof rotations);
        memcpy(full.offsets + 3 * TF * j, offsets, sizeof offsets);
        KB_ASSERT(place_all(&points, &full));
        double want = 0.0, got = -1.0, frame_worst[2][TF] = {{0}};
        for (ptrdiff_t m = 0; m < TJ; m++)
            want = fmax(want, full.error[m]);
        /* each frame's worst over the joints moved, as kb_joint_world folds it */
        for (ptrdiff_t m = j; m < TJ; m++) {
            ptrdiff_t a = m;
            while (a > j)
                a = tree_parents[a];
            for (int f = 0; a == j && f < TF; f++)
                if (!(full.frame_error[TF * m + f] <= frame_worst[0][f]))
                    frame_worst[0][f] = full.frame_error[TF * m + f];
        }
        memcpy(&before, &held, sizeof before);
        KB_ASSERT(kb_world_trial(&points, &h, j, rotations, offsets, INFINITY, &t, runs,
                                 &n_runs, &got, frame_worst[1], &err) == KB_OK);
        /* whole blocks of four frames: 0-7 and the last */
        KB_ASSERT(n_runs == 2 && runs[0] == 0 && runs[1] == 8 && runs[2] == 12 &&
                  runs[3] == 13);
        KB_ASSERT(memcmp(&got, &want, sizeof got) == 0);
        KB_ASSERT(memcmp(frame_worst[0], frame_worst[1], sizeof frame_worst[0]) == 0);
        KB_ASSERT(same_state(&held, &before));  /* a trial leaves held alone */
        /* without frame_worst, below the worst: the same */
        KB_ASSERT(kb_world_trial(&points, &h, j, rotations, offsets, want * 1.01, &t, runs,
                                 &n_runs, &got, NULL, &err) == KB_OK);
        KB_ASSERT(memcmp(&got, &want, sizeof got) == 0);
        KB_ASSERT(kb_world_accept(&points, j, &t, runs, n_runs, &h, &err) == KB_OK);
        KB_ASSERT(same_state(&held, &full));
        /* the same curves again: no runs, the held worst */
        KB_ASSERT(kb_world_trial(&points, &h, j, rotations, offsets, INFINITY, &t, runs,
                                 &n_runs, &got, NULL, &err) == KB_OK);
        KB_ASSERT(n_runs == 0 && memcmp(&got, &want, sizeof got) == 0);
    }
}

KB_TEST(test_world_trial_stops_past_its_limit)
{
    static tree_state held, trial, before;
    double sites[3 * TS], truth[TT], rotations[TF * 4], offsets[TF * 3];
    ptrdiff_t runs[TF + 1], n_runs = -1;
    kb_error err;
    const kb_world_points points = {TJ, TF, tree_parents, tree_sites, sites, truth};
    random_clip(&held, sites, truth);
    KB_ASSERT(place_all(&points, &held));
    memcpy(&before, &held, sizeof before);
    kb_world_placed h = placed_of(&held), t = placed_of(&trial);
    /* joint 1 moved far at frame 9 */
    memcpy(rotations, held.rotations + 4 * TF, sizeof rotations);
    memcpy(offsets, held.offsets + 3 * TF, sizeof offsets);
    offsets[3 * 9] += 100.0;
    double limit = 0.0, got = -1.0;
    for (ptrdiff_t m = 0; m < TJ; m++)
        limit = fmax(limit, held.error[m]);
    KB_ASSERT(kb_world_trial(&points, &h, 1, rotations, offsets, limit, &t, runs, &n_runs,
                             &got, NULL, &err) == KB_OK);
    KB_ASSERT(n_runs == 1 && runs[0] == 8 && runs[1] == 12);
    KB_ASSERT(got > limit);
    KB_ASSERT(same_state(&held, &before));
    /* the held curves past a limit below their error: no runs, stopped at joint 1 */
    KB_ASSERT(kb_world_trial(&points, &h, 1, held.rotations + 4 * TF, NULL, held.error[1] / 2,
                             &t, runs, &n_runs, &got, NULL, &err) == KB_OK);
    KB_ASSERT(n_runs == 0 && got == held.error[1]);
}

KB_TEST(test_world_trial_bad_input)
{
    static tree_state held, trial;
    double sites[3 * TS], truth[TT], got;
    ptrdiff_t runs[TF + 1], n_runs, parents[TJ];
    kb_error err;
    kb_world_points points = {TJ, TF, tree_parents, tree_sites, sites, truth};
    random_clip(&held, sites, truth);
    KB_ASSERT(place_all(&points, &held));
    kb_world_placed h = placed_of(&held), t = placed_of(&trial), missing = t;
    const double *q = held.rotations;
    KB_ASSERT(kb_world_trial(&points, &h, TJ, q, NULL, INFINITY, &t, runs, &n_runs, &got, NULL,
                             &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_world_trial(&points, &h, -1, q, NULL, INFINITY, &t, runs, &n_runs, &got, NULL,
                             &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_world_trial(&points, &h, 0, NULL, NULL, INFINITY, &t, runs, &n_runs, &got,
                             NULL, &err) == KB_EBADSHAPE);
    missing.frame_error = NULL;
    KB_ASSERT(kb_world_trial(&points, &h, 0, q, NULL, INFINITY, &missing, runs, &n_runs, &got,
                             NULL, &err) == KB_EBADSHAPE);
    memcpy(parents, tree_parents, sizeof parents);
    parents[3] = 3;  /* not before its child */
    points.parents = parents;
    KB_ASSERT(kb_world_trial(&points, &h, 0, q, NULL, INFINITY, &t, runs, &n_runs, &got, NULL,
                             &err) == KB_EBADSHAPE && err.track == 3);
    KB_ASSERT(kb_world_accept(&points, 0, &t, runs, 0, &h, &err) == KB_EBADSHAPE);
    points.parents = tree_parents;
    points.sites = NULL;
    KB_ASSERT(kb_world_trial(&points, &h, 0, q, NULL, INFINITY, &t, runs, &n_runs, &got, NULL,
                             &err) == KB_EBADSHAPE);
    points.sites = sites;
    const ptrdiff_t backwards[4] = {4, 6, 2, 3}, empty[2] = {5, 5}, past_end[2] = {10, TF + 1};
    KB_ASSERT(kb_world_accept(&points, 0, &t, backwards, 2, &h, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_world_accept(&points, 0, &t, empty, 1, &h, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_world_accept(&points, 0, &t, past_end, 1, &h, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_world_accept(&points, 0, &t, runs, -1, &h, &err) == KB_EBADSHAPE);
}
