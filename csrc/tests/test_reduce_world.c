/* test_reduce_world.c -- the world-space search with greedy keys on a chain
 * of three joints (a moving root, two turning joints, an End Site): its
 * keys keep every point within the tolerance, as the curves through them
 * built whole and placed joint by joint confirm, to the error it reports;
 * loosening keeps fewer; threads change nothing; progress counts the
 * passes and can stop them; a tolerance no pass holds leaves the keys to
 * the caller; bad input is refused. */
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
    ptrdiff_t keys[J * F], n_keys[J], order[J * (F - 2)], n_order[J];
    double scales[J], position[J], angle[J], distance[J], score[J * (F - 2)], floor[J];
    kb_world_keys out;
} result;

static void wire(result *r)
{
    r->out = (kb_world_keys){r->keys, r->n_keys, r->scales, r->position, r->angle,
                             r->distance, r->order, r->score, r->n_order, r->floor, 0.0, 0.0};
}

static int calls, stop_at;

static int counting(void *ctx, int passes)
{
    (void)ctx;
    calls++;
    return passes == stop_at;
}

static const double factors[4] = {2.0, 1.41, 1.19, 1.09};

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
    static result loosened, searched, threaded;
    kb_error err;
    wire(&loosened);
    wire(&searched);
    wire(&threaded);
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 8, factors, 4, NULL, NULL, 1,
                                     &loosened.out, &err) == KB_OK);
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 8, NULL, 0, NULL, NULL, 1,
                                     &searched.out, &err) == KB_OK);
    KB_ASSERT(searched.out.best_scale > 0.0 &&
              searched.out.best_scale <= searched.out.good_scale);
    ptrdiff_t total[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        const result *r = k ? &searched : &loosened;
        double worst[J];
        KB_ASSERT(placed_whole(r->keys, r->n_keys, NULL, worst));
        for (int j = 0; j < J; j++) {
            const ptrdiff_t *keys = r->keys + j * F;
            KB_ASSERT(r->n_keys[j] >= 2 && keys[0] == 0 && keys[r->n_keys[j] - 1] == F - 1);
            for (ptrdiff_t i = 1; i < r->n_keys[j]; i++)
                KB_ASSERT(keys[i] > keys[i - 1]);
            KB_ASSERT(worst[j] <= 1.0);
            KB_ASSERT_NEAR(r->position[j], worst[j], 1e-12);
            total[k] += r->n_keys[j];
        }
    }
    KB_ASSERT(total[0] < total[1] && total[1] < J * F / 2);
    /* loosening raised some joint's own scale */
    KB_ASSERT(loosened.scales[0] > searched.scales[0] || loosened.scales[1] > searched.scales[1] ||
              loosened.scales[2] > searched.scales[2]);
    /* threads carry the greedy orders on ahead: the same result */
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 8, factors, 4, NULL, NULL, 2,
                                     &threaded.out, &err) == KB_OK);
    KB_ASSERT(!memcmp(threaded.keys, loosened.keys, sizeof loosened.keys) &&
              !memcmp(threaded.n_keys, loosened.n_keys, sizeof loosened.n_keys) &&
              !memcmp(threaded.position, loosened.position, sizeof loosened.position) &&
              !memcmp(threaded.angle, loosened.angle, sizeof loosened.angle));
}

KB_TEST(test_reduce_world_progress_and_no_pass_held)
{
    KB_ASSERT(chain());
    static result r;
    kb_error err;
    wire(&r);
    calls = 0;
    stop_at = -1;
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 8, factors, 4, counting, NULL, 1, &r.out,
                                     &err) == KB_OK);
    KB_ASSERT(calls == 12);
    calls = 0;
    stop_at = 3;
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 8, factors, 4, counting, NULL, 1, &r.out,
                                     &err) == KB_ESTOPPED);
    KB_ASSERT(calls == 3);
    /* a tolerance of zero: no pass holds, and the orders ran down to the last scale */
    calls = 0;
    stop_at = -1;
    KB_ASSERT(kb_reduce_world_greedy(&clip, 0.0, 2.0, 4, factors, 4, counting, NULL, 1, &r.out,
                                     &err) == KB_OK);
    KB_ASSERT(r.out.best_scale == 0.0 && r.out.good_scale == 0.25 && calls == 4);
    KB_ASSERT(r.floor[0] == 0.25 && r.n_order[0] > 0);
    for (int j = 0; j < J; j++)
        KB_ASSERT(r.n_keys[j] == 0 && r.scales[j] == 0.0 && isnan(r.position[j]) && isnan(r.angle[j]));
}

KB_TEST(test_reduce_world_bad_input)
{
    KB_ASSERT(chain());
    static result r;
    kb_error err;
    wire(&r);
    kb_world_clip bad = clip;
    ptrdiff_t loop[J] = {-1, 1, 1};
    bad.parents = loop;  /* a joint its own parent */
    KB_ASSERT(kb_reduce_world_greedy(&bad, 1.0, 2.0, 8, NULL, 0, NULL, NULL, 1, &r.out, &err) ==
              KB_EBADSHAPE && err.track == 1);
    bad = clip;
    bad.n_frames = 1;
    KB_ASSERT(kb_reduce_world_greedy(&bad, 1.0, 2.0, 8, NULL, 0, NULL, NULL, 1, &r.out, &err) ==
              KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 8, NULL, 0, NULL, NULL, 0, &r.out, &err) ==
              KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 0, NULL, 0, NULL, NULL, 1, &r.out, &err) ==
              KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, NAN, 8, NULL, 0, NULL, NULL, 1, &r.out, &err) ==
              KB_ERANGE);
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, INFINITY, 8, NULL, 0, NULL, NULL, 1, &r.out,
                                     &err) == KB_ERANGE);
    KB_ASSERT(kb_reduce_world_greedy(&clip, NAN, 2.0, 8, NULL, 0, NULL, NULL, 1, &r.out, &err) ==
              KB_ERANGE);
    double bad_tolerances[J * 2], bad_caps[J * 2];
    memcpy(bad_tolerances, tolerances, sizeof bad_tolerances);
    memcpy(bad_caps, caps, sizeof bad_caps);
    bad_tolerances[3] = 0.0;  /* joint 1's distance tolerance */
    bad_caps[4] = NAN;        /* joint 2's angle cap */
    bad = clip;
    bad.tolerances = bad_tolerances;
    KB_ASSERT(kb_reduce_world_greedy(&bad, 1.0, 2.0, 8, NULL, 0, NULL, NULL, 1, &r.out, &err) ==
              KB_ERANGE && err.track == 1);
    bad = clip;
    bad.caps = bad_caps;
    KB_ASSERT(kb_reduce_world_greedy(&bad, 1.0, 2.0, 8, NULL, 0, NULL, NULL, 1, &r.out, &err) ==
              KB_ERANGE && err.track == 2);
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 8, NULL, 2, NULL, NULL, 1, &r.out, &err) ==
              KB_EBADSHAPE);
    double zero[F * 4 * J];  /* a zero rotation, refused by the greedy selection */
    memcpy(zero, rot, sizeof zero);
    memset(zero + 4 * F, 0, 4 * sizeof(double));
    bad = clip;
    bad.rotations = zero;
    KB_ASSERT(kb_reduce_world_greedy(&bad, 1.0, 2.0, 8, NULL, 0, NULL, NULL, 1, &r.out, &err) ==
              KB_EZERONORM && err.track == 1);
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
    KB_ASSERT(chain());
    static result r;
    kb_error err;
    wire(&r);
    /* the angles of the root (whose distance tolerance still scales, so
     * that the capped pair changes from pass to pass) and of joint 1
     * capped at or a little above their base */
    double capped[J * 2];
    memcpy(capped, caps, sizeof capped);
    capped[0] = tolerances[0];
    capped[2] = 1.5 * tolerances[2];
    kb_world_clip with_cap = clip;
    for (int k = 0; k < 2; k++) {
        with_cap.caps = k ? capped : caps;
        KB_ASSERT(kb_reduce_world_greedy(&with_cap, 1.0, 2.0, 8, factors, 4, NULL, NULL, 1,
                                         &r.out, &err) == KB_OK);
        int loosened = 0;
        for (int j = 0; j < J; j++) {
            ptrdiff_t keys[F], n = greedy_at(&with_cap, j, r.scales[j], keys);
            KB_ASSERT(n == r.n_keys[j] && !memcmp(keys, r.keys + j * F, (size_t)n * sizeof *keys));
            loosened |= r.scales[j] > r.out.best_scale;
        }
        KB_ASSERT(k || loosened);
        KB_ASSERT(!k || (r.scales[0] * tolerances[0] > capped[0] &&
                         r.scales[1] * tolerances[2] > capped[2]));  /* the caps bind */
    }
}

/* Outputs of one search with tangent keys. */
typedef struct {
    ptrdiff_t keys[J * F], n_keys[J];
    double rows[2][J * F * 3], position[J], angle[J], distance[J];
    kb_swept_keys out;
} swept;

static void wire_swept(swept *r)
{
    r->out = (kb_swept_keys){r->keys, r->n_keys, r->rows[0], r->rows[1], r->position, r->angle,
                             r->distance, 0.0};
}

static const double sweep_scales[4] = {2.0, 1.0, 0.5, 0.25}, tangent_factors[2] = {2.0, 1.68};

KB_TEST(test_reduce_world_swept_keeps_every_point_within_the_tolerance)
{
    KB_ASSERT(chain());
    static swept loosened, unloosened, threaded;
    static result greedy;
    kb_error err;
    wire_swept(&loosened);
    wire_swept(&unloosened);
    wire_swept(&threaded);
    wire(&greedy);
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, sweep_scales, 4, tangent_factors, 2, NULL, NULL,
                                    1, &loosened.out, &err) == KB_OK);
    KB_ASSERT(kb_reduce_world_greedy(&clip, 1.0, 2.0, 8, factors, 4, NULL, NULL, 1,
                                     &greedy.out, &err) == KB_OK);
    /* passes from higher scales, without the rounds */
    const double from_high[4] = {64.0, 32.0, 0.5, 0.25};
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, from_high, 4, NULL, 0, NULL, NULL, 1,
                                    &unloosened.out, &err) == KB_OK);
    KB_ASSERT(loosened.out.scale == 0.5 && unloosened.out.scale == 0.5);
    ptrdiff_t total[3] = {0, 0, 0};
    for (int k = 0; k < 2; k++) {
        swept *r = k ? &unloosened : &loosened;
        const double *rows[2] = {r->rows[0], r->rows[1]};
        double worst[J];
        KB_ASSERT(placed_whole(r->keys, r->n_keys, rows, worst));
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
    for (int j = 0; j < J; j++)
        total[2] += greedy.n_keys[j];
    /* the drops keep fewer than the sweep alone, which keeps fewer than greedy keys */
    KB_ASSERT(total[0] < total[1] && total[1] < total[2]);
    /* threads sweep and drop ahead of the checks: the same result */
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, sweep_scales, 4, tangent_factors, 2, NULL, NULL,
                                    2, &threaded.out, &err) == KB_OK);
    KB_ASSERT(!memcmp(threaded.keys, loosened.keys, sizeof loosened.keys) &&
              !memcmp(threaded.n_keys, loosened.n_keys, sizeof loosened.n_keys) &&
              !memcmp(threaded.position, loosened.position, sizeof loosened.position) &&
              !memcmp(threaded.angle, loosened.angle, sizeof loosened.angle));
    for (int j = 0; j < J; j++)
        for (int c = 0; c < 2; c++)
            KB_ASSERT(!memcmp(threaded.rows[c] + 3 * F * j, loosened.rows[c] + 3 * F * j,
                              (size_t)(3 * loosened.n_keys[j]) * sizeof(double)));
}

static int reported[16], n_reported;

static int recording(void *ctx, int passes)
{
    (void)ctx;
    if (n_reported < 16)
        reported[n_reported++] = passes;
    return passes == stop_at;
}

KB_TEST(test_reduce_world_swept_progress_and_no_pass_held)
{
    KB_ASSERT(chain());
    static swept r;
    kb_error err;
    wire_swept(&r);
    /* passes 1 and 2 fail, 3 holds: reported 1, 2, 3, then 5 on the way to the rounds */
    const double from_high[4] = {64.0, 32.0, 0.5, 0.25};
    n_reported = 0;
    stop_at = -1;
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, from_high, 4, tangent_factors, 2, recording,
                                    NULL, 1, &r.out, &err) == KB_OK);
    const int want[7] = {1, 2, 3, 5, 6, 7, 8};
    KB_ASSERT(n_reported == 7 && !memcmp(reported, want, sizeof want));
    n_reported = 0;
    stop_at = 6;
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, from_high, 4, tangent_factors, 2, recording,
                                    NULL, 1, &r.out, &err) == KB_ESTOPPED);
    KB_ASSERT(n_reported == 5);
    /* a tolerance of zero: no pass holds, every scale tried */
    n_reported = 0;
    stop_at = -1;
    KB_ASSERT(kb_reduce_world_swept(&clip, 0.0, sweep_scales, 4, tangent_factors, 2, recording,
                                    NULL, 1, &r.out, &err) == KB_OK);
    KB_ASSERT(r.out.scale == 0.0 && n_reported == 4 && reported[3] == 4);
}

/* A progress that overwrites the scales it was given (ctx) with NaN. */
static int spoiling(void *ctx, int passes)
{
    double *scales = ctx;
    (void)passes;
    scales[0] = scales[1] = NAN;
    return 0;
}

KB_TEST(test_reduce_world_swept_scales_changed_by_progress)
{
    /* the pass that held is the scale it ran at, whatever progress then
     * does to scales: before, its keys went unwritten (the search read
     * scales[k - 1] again, NaN, and took it for no pass held) while the
     * caller, seeing a scale that is not 0, read them */
    KB_ASSERT(chain());
    static swept plain, spoiled;
    kb_error err;
    wire_swept(&plain);
    wire_swept(&spoiled);
    double scales[2] = {0.5, 0.25};
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, scales, 2, tangent_factors, 2, NULL, NULL, 1,
                                    &plain.out, &err) == KB_OK);
    KB_ASSERT(plain.out.scale == 0.5);
    for (int j = 0; j < J; j++)
        spoiled.n_keys[j] = -1;
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, scales, 2, tangent_factors, 2, spoiling, scales,
                                    1, &spoiled.out, &err) == KB_OK);
    KB_ASSERT(isnan(scales[0]) && spoiled.out.scale == 0.5);
    KB_ASSERT(!memcmp(spoiled.n_keys, plain.n_keys, sizeof plain.n_keys) &&
              !memcmp(spoiled.position, plain.position, sizeof plain.position));
    for (int j = 0; j < J; j++)
        KB_ASSERT(!memcmp(spoiled.keys + j * F, plain.keys + j * F,
                          (size_t)plain.n_keys[j] * sizeof *plain.keys));
}

KB_TEST(test_reduce_world_swept_bad_input)
{
    KB_ASSERT(chain());
    static swept r;
    kb_error err;
    wire_swept(&r);
    kb_world_clip bad = clip;
    ptrdiff_t loop[J] = {-1, 1, 1};
    bad.parents = loop;  /* a joint its own parent */
    KB_ASSERT(kb_reduce_world_swept(&bad, 1.0, sweep_scales, 4, NULL, 0, NULL, NULL, 1, &r.out,
                                    &err) == KB_EBADSHAPE && err.track == 1);
    bad = clip;
    bad.n_frames = 1;
    KB_ASSERT(kb_reduce_world_swept(&bad, 1.0, sweep_scales, 4, NULL, 0, NULL, NULL, 1, &r.out,
                                    &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, sweep_scales, 4, NULL, 0, NULL, NULL, 0, &r.out,
                                    &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, sweep_scales, 0, NULL, 0, NULL, NULL, 1, &r.out,
                                    &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, sweep_scales, 4, NULL, 2, NULL, NULL, 1, &r.out,
                                    &err) == KB_EBADSHAPE);
    const double nan_scale[2] = {2.0, NAN}, zero_factor[1] = {0.0};
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, nan_scale, 2, NULL, 0, NULL, NULL, 1, &r.out,
                                    &err) == KB_ERANGE);
    KB_ASSERT(kb_reduce_world_swept(&clip, 1.0, sweep_scales, 4, zero_factor, 1, NULL, NULL, 1,
                                    &r.out, &err) == KB_ERANGE);
    KB_ASSERT(kb_reduce_world_swept(&clip, INFINITY, sweep_scales, 4, NULL, 0, NULL, NULL, 1,
                                    &r.out, &err) == KB_ERANGE);
    double bad_tolerances[J * 2];
    memcpy(bad_tolerances, tolerances, sizeof bad_tolerances);
    bad_tolerances[5] = -1.0;  /* joint 2's distance tolerance */
    bad = clip;
    bad.tolerances = bad_tolerances;
    KB_ASSERT(kb_reduce_world_swept(&bad, 1.0, sweep_scales, 4, NULL, 0, NULL, NULL, 1, &r.out,
                                    &err) == KB_ERANGE && err.track == 2);
    double zero[F * 4 * J];  /* a zero rotation, refused by the sweep */
    memcpy(zero, rot, sizeof zero);
    memset(zero + 4 * F, 0, 4 * sizeof(double));
    bad = clip;
    bad.rotations = zero;
    KB_ASSERT(kb_reduce_world_swept(&bad, 1.0, sweep_scales, 4, NULL, 0, NULL, NULL, 1, &r.out,
                                    &err) == KB_EZERONORM && err.track == 1);
    KB_ASSERT(kb_reduce_world_swept(&bad, 1.0, sweep_scales, 4, NULL, 0, NULL, NULL, 2, &r.out,
                                    &err) == KB_EZERONORM && err.track == 1);
}
