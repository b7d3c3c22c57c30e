/* test_reduce_world.c -- the world-space search (kb_reduce_world) on a
 * chain of three joints (a moving root, two turning joints, an End Site),
 * with greedy and with fitted keys: its keys keep every point within the
 * tolerance, as the curves through them built whole and placed joint by
 * joint confirm, to the error it reports; loosening keeps fewer; threads
 * change nothing; progress counts the passes and rounds and can stop them;
 * a tolerance no pass holds leaves the keys to the caller; greedy keys read
 * off the cached greedy order are those of a selection run afresh. */
#include <math.h>
#include <string.h>

#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"

#define F 90
#define J 3

static double times[F], rot[J * F * 4], tr[J * F * 3], truth[3 * F * (J + 1)];
static const ptrdiff_t parents[J] = {-1, 0, 1}, n_sites[J] = {0, 0, 1};
static const unsigned char moves[J] = {1, 0, 0};
static const double offsets[J * 3] = {0, 0, 0, 0, 10, 0, 0, 8, 0}, sites[3] = {0, 6, 0};
static double tolerances[J * 2], caps[J * 2];

/* A walk-like chain: the root bobs along x and sways, the others swing. */
static int chain(void)
{
    for (int f = 0; f < F; f++) {
        double t = f / 30.0;
        times[f] = t;
        for (int j = 0; j < J; j++) {
            double half = 0.5 * (0.6 * sin((2.0 + j) * t + j) + 0.2 * sin(9.0 * t));
            double axis[3] = {1.0, 0.3 * sin(t + j), 0.2 * j}, *q = rot + 4 * (j * F + f);
            double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
            q[0] = cos(half);
            for (int k = 0; k < 3; k++)
                q[1 + k] = sin(half) * axis[k] / n;
            double *x = tr + 3 * (j * F + f);
            x[0] = j ? 0.0 : 40.0 * t;
            x[1] = j ? 0.0 : 90.0 + 2.0 * sin(6.0 * t);
            x[2] = 0.0;
        }
    }
    for (int j = 0; j < J; j++) {  /* a share of 1 cm per joint, as local_tolerances */
        tolerances[2 * j] = 1.0 / 24.0;
        tolerances[2 * j + 1] = moves[j] ? 0.5 : INFINITY;
        caps[2 * j] = caps[2 * j + 1] = INFINITY;
    }
    /* the clip's own points */
    double world_rot[J][F * 9], origin[J][F * 3];
    double *points = truth;
    kb_error err;
    for (int j = 0; j < J; j++) {
        if (kb_joint_world_error(F, j ? world_rot[j - 1] : NULL, j ? origin[j - 1] : NULL,
                                 rot + 4 * j * F, moves[j] ? tr + 3 * j * F : offsets + 3 * j,
                                 moves[j] ? 3 : 0, n_sites[j], n_sites[j] ? sites : NULL, NULL,
                                 INFINITY, world_rot[j], origin[j], points, NULL, NULL, &err) != KB_OK)
            return 0;
        points += 3 * F * (1 + n_sites[j]);
    }
    return 1;
}

static const kb_world_clip clip = {J, F, times, rot, tr, parents, moves, offsets, n_sites,
                                   sites, truth, tolerances, caps};

/* Outputs of one search. */
typedef struct {
    ptrdiff_t keys[J * F], n_keys[J];
    double rows[2][J * F * 3], position[J], angle[J], distance[J], scales[J];
    kb_reduction out;
} result;

static void wire(result *r)
{
    r->out = (kb_reduction){J, F, r->keys, r->n_keys, r->rows[0], r->rows[1], r->position,
                            r->angle, r->distance};
}

static int reported[32], n_reported, stop_at;

static int recording(void *ctx, int passes)
{
    (void)ctx;
    if (n_reported < 32)
        reported[n_reported++] = passes;
    return passes == stop_at;
}

static const double greedy_factors[4] = {2.0, 1.41, 1.19, 1.09}, fit_factors[3] = {2.0, 1.68, 1.0};

static kb_world_plan plan_of(int fitted, int n_factors, double *scales)
{
    kb_world_plan p = {fitted, 2.0, fitted ? 4 : 8, !fitted,
                       fitted ? fit_factors : greedy_factors, n_factors, scales};
    return p;
}

static kb_status run(const kb_world_clip *c, double tolerance, const kb_world_plan *plan,
                     int threads, result *r, int *found)
{
    kb_error err;
    wire(r);
    n_reported = 0;
    return kb_reduce_world(c, tolerance, plan, recording, NULL, threads, &r->out, found, &err);
}

/* The worst distance of each joint's points from the truth under the
 * curves through these keys (joint j's n_keys[j] from j * F), with each
 * key's tangent rows (rows[c] + 3 * F * j; NULL: KB keys), each built
 * whole (not from other keys). */
static int placed_whole(const ptrdiff_t *keys, const ptrdiff_t *n_keys,
                        const double *const rows[2], double *worst)
{
    static double q[J][F * 4], x[J][F * 3], world_rot[J][F * 9], origin[J][F * 3];
    const double *t = truth;
    kb_error err;
    for (int j = 0; j < J; j++) {
        kb_reduce_joint jt = {F, times, rot + 4 * j * F, tr + 3 * j * F, 1.0, 1.0, rows != NULL};
        if (kb_reduce_rebuild(&jt, keys + j * F, n_keys[j], rows ? rows[0] + 3 * F * j : NULL,
                              rows ? rows[1] + 3 * F * j : NULL, q[j], x[j], NULL, NULL,
                              &err) != KB_OK ||
            kb_joint_world_error(F, j ? world_rot[j - 1] : NULL, j ? origin[j - 1] : NULL, q[j],
                                 moves[j] ? x[j] : offsets + 3 * j, moves[j] ? 3 : 0, n_sites[j],
                                 n_sites[j] ? sites : NULL, t, INFINITY, world_rot[j], origin[j],
                                 NULL, &worst[j], NULL, &err) != KB_OK)
            return 0;
        t += 3 * F * (1 + n_sites[j]);
    }
    return 1;
}

KB_TEST(test_reduce_world_keeps_every_point_within_the_tolerance)
{
    KB_ASSERT(chain());
    stop_at = -1;
    for (int fitted = 0; fitted < 2; fitted++) {
        static result loosened, searched, threaded;
        int found = 0, factors = fitted ? 3 : 4;
        kb_world_plan plan = plan_of(fitted, factors, NULL), bare = plan_of(fitted, 0, NULL);
        KB_ASSERT(run(&clip, 1.0, &plan, 1, &loosened, &found) == KB_OK && found);
        KB_ASSERT(run(&clip, 1.0, &bare, 1, &searched, &found) == KB_OK && found);
        ptrdiff_t total[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            const result *r = k ? &searched : &loosened;
            const double *rows[2] = {r->rows[0], r->rows[1]};
            double worst[J];
            KB_ASSERT(placed_whole(r->keys, r->n_keys, fitted ? rows : NULL, worst));
            for (int j = 0; j < J; j++) {
                const ptrdiff_t *keys = r->keys + j * F;
                KB_ASSERT(r->n_keys[j] >= 2 && keys[0] == 0 && keys[r->n_keys[j] - 1] == F - 1);
                for (ptrdiff_t i = 1; i < r->n_keys[j]; i++)
                    KB_ASSERT(keys[i] > keys[i - 1]);
                KB_ASSERT(worst[j] <= 1.0);
                KB_ASSERT(r->position[j] == worst[j]);  /* the same curves, bit for bit */
                KB_ASSERT(r->angle[j] > 0.0 && (moves[j] ? r->distance[j] > 0.0
                                                          : r->distance[j] == 0.0));
                total[k] += r->n_keys[j];
            }
        }
        KB_ASSERT(total[0] < total[1] && total[1] < J * F / 2);
        /* threads key every joint ahead of the checks: the same result */
        KB_ASSERT(run(&clip, 1.0, &plan, 2, &threaded, &found) == KB_OK && found);
        KB_ASSERT(!memcmp(threaded.keys, loosened.keys, sizeof loosened.keys) &&
                  !memcmp(threaded.n_keys, loosened.n_keys, sizeof loosened.n_keys) &&
                  !memcmp(threaded.position, loosened.position, sizeof loosened.position) &&
                  !memcmp(threaded.angle, loosened.angle, sizeof loosened.angle));
        for (int j = 0; fitted && j < J; j++)
            for (int c = 0; c < 2; c++)
                KB_ASSERT(!memcmp(threaded.rows[c] + 3 * F * j, loosened.rows[c] + 3 * F * j,
                                  (size_t)(3 * loosened.n_keys[j]) * sizeof(double)));
    }
}

KB_TEST(test_reduce_world_progress_and_no_pass_held)
{
    KB_ASSERT(chain());
    static result r;
    int found = 0;
    stop_at = -1;
    kb_world_plan greedy = plan_of(0, 4, NULL), fitted = plan_of(1, 3, NULL);
    KB_ASSERT(run(&clip, 1.0, &greedy, 1, &r, &found) == KB_OK && found);
    const int every[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    KB_ASSERT(n_reported == 12 && !memcmp(reported, every, sizeof every));
    /* fitted: passes until one holds (from 4, the fourth at 0.5), then the rounds after all passes */
    fitted.first_scale = 4.0;
    fitted.passes = 8;
    KB_ASSERT(run(&clip, 1.0, &fitted, 1, &r, &found) == KB_OK && found);
    const int want[7] = {1, 2, 3, 4, 9, 10, 11};
    KB_ASSERT(n_reported == 7 && !memcmp(reported, want, sizeof want));
    stop_at = 3;
    KB_ASSERT(run(&clip, 1.0, &greedy, 1, &r, &found) == KB_ESTOPPED && n_reported == 3);
    /* a tolerance of zero: no pass holds, every pass tried, out untouched */
    stop_at = -1;
    for (int k = 0; k < 2; k++) {
        KB_ASSERT(run(&clip, 0.0, k ? &fitted : &greedy, 1, &r, &found) == KB_OK && !found);
        KB_ASSERT(n_reported == 8 && reported[7] == 8);
    }
}

/* Joint j's greedy keys at `scale` from a selection run afresh: its order
 * down to that floor, or kb_reduce_greedy under the capped tolerances. */
static ptrdiff_t greedy_at(const kb_world_clip *c, int j, double scale, ptrdiff_t *keys)
{
    const double *base = c->tolerances + 2 * j, *cap = c->caps + 2 * j;
    kb_reduce_joint jt = {F, times, rot + 4 * j * F, tr + 3 * j * F, base[0], base[1], 0};
    kb_error err;
    ptrdiff_t n = 0;
    if (scale * base[0] > cap[0] || scale * base[1] > cap[1]) {
        static double angle[F], distance[F];
        jt.angle_tolerance = fmin(scale * base[0], cap[0]);
        jt.distance_tolerance = fmin(scale * base[1], cap[1]);
        return kb_reduce_greedy(&jt, keys, &n, angle, distance, &err) == KB_OK ? n : -1;
    }
    ptrdiff_t order[F];
    double score[F];
    if (kb_reduce_greedy_order(&jt, scale, order, score, &n, &err) != KB_OK)
        return -1;
    ptrdiff_t count = 0;  /* before the first score at most the scale */
    while (count < n && score[count] > scale)
        count++;
    int in[F] = {0};
    for (ptrdiff_t i = 0; i < count; i++)
        in[order[i]] = 1;
    ptrdiff_t k = 0;
    keys[k++] = 0;
    for (int f = 1; f < F - 1; f++)
        if (in[f])
            keys[k++] = f;
    keys[k++] = F - 1;
    return k;
}

KB_TEST(test_reduce_world_keys_are_the_greedy_keys_at_each_joints_scale)
{
    /* the greedy order cached and carried on from pass to pass (the speed
     * device kept) switched off: each joint's keys from a fresh selection */
    KB_ASSERT(chain());
    static result r;
    double scales[J], bare_scales[J];
    int found = 0;
    stop_at = -1;
    /* the angles of the root and of joint 1 capped at or a little above their base */
    double capped[J * 2];
    memcpy(capped, caps, sizeof capped);
    capped[0] = tolerances[0];
    capped[2] = 1.5 * tolerances[2];
    kb_world_clip with_cap = clip;
    kb_world_plan plan = plan_of(0, 4, scales), bare = plan_of(0, 0, bare_scales);
    for (int k = 0; k < 2; k++) {
        with_cap.caps = k ? capped : caps;
        KB_ASSERT(run(&with_cap, 1.0, &bare, 1, &r, &found) == KB_OK && found);
        KB_ASSERT(run(&with_cap, 1.0, &plan, 1, &r, &found) == KB_OK && found);
        int loosened = 0;
        for (int j = 0; j < J; j++) {
            ptrdiff_t keys[F], n = greedy_at(&with_cap, j, scales[j], keys);
            KB_ASSERT(n == r.n_keys[j] && !memcmp(keys, r.keys + j * F, (size_t)n * sizeof *keys));
            loosened |= scales[j] > bare_scales[j];
        }
        KB_ASSERT(k || loosened);
        KB_ASSERT(!k || (scales[0] * tolerances[0] > capped[0] &&
                         scales[1] * tolerances[2] > capped[2]));  /* the caps bind */
    }
}
