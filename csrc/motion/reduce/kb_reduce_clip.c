/* kb_reduce_clip.c -- the public entry point of key reduction: the clip's points and
 * per-joint tolerances, then the searches in the order kbspline.motion.reduce_keys
 * runs them (tests/test_c_example.py checks that both keep the same keys). */
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

/* The searches' constants (docs/benchmarks.md, "Tuning notes", says what
 * was tried for each). */
static const double TANGENT_LOOSEN_FACTORS[] = {2.0, 1.68, 1.0};  /* fitted: per joint, in turn */
static const double LOOSEN_FACTORS[] = {2.0, 1.41, 1.19, 1.09};  /* greedy: per joint */
#define FIRST_SCALE 2.8284271247461903  /* greedy: 2^1.5 first-order tolerances first */
enum {
    FIT_PASSES = 4, TANGENT_ROUNDS = 3, SEARCH_PASSES = 8, GREEDY_ROUNDS = 4,
    GREEDY_THREADS_FROM = 100, FIT_THREADS_FROM = 50  /* frames from which threads pay */
};

/* The options' progress(done, total) for one search: its passes counted
 * on from `skipped`, its loosening rounds at the end of the count. */
typedef struct {
    const kb_reduce_options *options;
    const kb_world_plan *plan;
    int skipped, total;
} counting;

static int count_pass(void *ctx, int passes)
{
    const counting *c = ctx;
    const kb_world_plan *plan = c->plan;
    int done = passes <= plan->passes ? c->skipped + passes
                                      : c->total - plan->passes - plan->n_factors + passes;
    return c->options->progress(c->options->progress_data, done, c->total);
}

/* The clip as the searches take it, and the block it points into. */
typedef struct {
    kb_world_clip clip;
    double *block, *times, *sites, *truth, *world_rot, *origin, *reach, *tolerances, *caps;
    ptrdiff_t *n_sites, *chain;
} prepared;

/* A cap given (> 0) or none (0: infinite); -1 where it is neither. */
static double cap_of(double cap)
{
    return cap == 0.0 ? INFINITY : (cap > 0.0 && cap < INFINITY ? cap : -1.0);
}

static kb_status check(const kb_motion_clip *c, const kb_reduce_options *o, kb_error *err)
{
    if (!c || !o || c->n_joints < 1 || c->n_frames < 2 || !c->parents || !c->rotations ||
        !c->translations || !c->moves || !c->offsets || (c->n_sites && !c->sites) ||
        !kb_doubles_fit(c->n_joints, c->n_frames, 12, 1))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    if (!(c->frame_time > 0.0 && c->frame_time < INFINITY) ||
        !(o->position_tolerance > 0.0 && o->position_tolerance < INFINITY) ||
        cap_of(o->angle_cap) < 0 || cap_of(o->distance_cap) < 0 ||
        !(o->virtual_distance >= 0.0 && o->virtual_distance < INFINITY))
        return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    const ptrdiff_t F = c->n_frames;
    ptrdiff_t points = 8 * c->n_joints;  /* 6 F (8 J + sites) doubles bound prepare's block */
    for (ptrdiff_t j = 0; j < c->n_joints; j++) {
        const ptrdiff_t n = c->n_sites ? c->n_sites[j] : 0;
        if (c->parents[j] < -1 || c->parents[j] >= j || n < 0 ||
            n > PTRDIFF_MAX / 2 - points || !kb_doubles_fit(F, points + n, 6, 1))
            return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, j, -1);
        points += n;
        for (ptrdiff_t f = 0; f < F; f++)
            for (int i = 0; i < 7; i++)
                if (!isfinite(i < 4 ? c->rotations[(j * F + f) * 4 + i]
                                    : c->translations[(j * F + f) * 3 + i - 4]))
                    return kb_fail(err, KB_ENONFINITE, KB_ARG_NONE, j, f);
    }
    return kb_ok(err);
}

/* Each joint's points (its sites, then the virtual vertices) placed by the
 * clip's own frames, as reduce_keys' WorldError places them. */
static kb_status place_points(const kb_motion_clip *c, double virtual_distance, prepared *p,
                              kb_error *err)
{
    const ptrdiff_t J = c->n_joints, F = c->n_frames, extra = virtual_distance > 0.0 ? 3 : 0;
    const double *given = c->sites;
    double *site = p->sites, *truth = p->truth;
    for (ptrdiff_t j = 0; j < J; j++) {
        const ptrdiff_t own = p->n_sites[j] - extra, q = c->parents[j];
        memcpy(site, given, (size_t)(3 * own) * sizeof(double));
        given += 3 * own;
        for (ptrdiff_t v = 0; v < extra; v++)  /* virtual_distance times the identity */
            for (int i = 0; i < 3; i++)
                site[3 * (own + v) + i] = v == i ? virtual_distance : 0.0;
        const double *placing = c->moves[j] ? c->translations + 3 * F * j : c->offsets + 3 * j;
        kb_status status = kb_joint_world_error(
            F, q >= 0 ? p->world_rot + 9 * F * q : NULL, q >= 0 ? p->origin + 3 * F * q : NULL,
            c->rotations + 4 * F * j, placing, c->moves[j] ? 3 : 0, p->n_sites[j], site, NULL,
            INFINITY, p->world_rot + 9 * F * j, p->origin + 3 * F * j, truth, NULL, NULL, err);
        if (status != KB_OK) {
            err->track = j;
            return status;
        }
        site += 3 * p->n_sites[j];
        truth += 3 * F * (1 + p->n_sites[j]);
    }
    return kb_ok(err);
}

/* The largest range of a coordinate of joint j's translations over frames. */
static double spread(const kb_motion_clip *c, ptrdiff_t j)
{
    const double *t = c->translations + 3 * c->n_frames * j;
    double most = -INFINITY;
    for (int i = 0; i < 3; i++) {
        double lo = t[i], hi = t[i];
        for (ptrdiff_t f = 1; f < c->n_frames; f++) {
            lo = fmin(lo, t[3 * f + i]);
            hi = fmax(hi, t[3 * f + i]);
        }
        most = fmax(most, hi - lo);
    }
    return most;
}

/* Per joint angle and distance tolerances that bound the world error to first order,
 * and caps: each joint an equal share of the position tolerance along the longest
 * chain through it, its angle's over its reach, halved with its distance's if it moves. */
static kb_status split_tolerance(const kb_motion_clip *c, const kb_reduce_options *o,
                                 prepared *p, kb_error *err)
{
    const ptrdiff_t J = c->n_joints;
    ptrdiff_t *chain = p->chain, *longest = chain + J;
    kb_status status = kb_joint_reach(J, c->n_frames, c->parents, p->n_sites, p->truth,
                                      p->reach, err);
    for (ptrdiff_t j = 0; j < J; j++)
        longest[j] = chain[j] = c->parents[j] >= 0 ? chain[c->parents[j]] + 1 : 1;
    for (ptrdiff_t j = J - 1; j >= 0; j--)
        if (c->parents[j] >= 0 && longest[j] > longest[c->parents[j]])
            longest[c->parents[j]] = longest[j];
    for (ptrdiff_t j = 0; status == KB_OK && j < J; j++) {
        const double share = o->position_tolerance / (double)longest[j];
        const int moving = c->moves[j] && !(spread(c, j) <= 1e-6 * share);
        p->tolerances[2 * j] = p->reach[j] > 0 ? (moving ? share / 2 : share) / p->reach[j]
                                               : INFINITY;
        p->tolerances[2 * j + 1] = moving ? share / 2 : INFINITY;
        p->caps[2 * j] = cap_of(o->angle_cap);
        p->caps[2 * j + 1] = cap_of(o->distance_cap);
    }
    return status;
}

/* The clip's times, points and tolerances, in one block (check bounds its size). */
static kb_status prepare(const kb_motion_clip *c, const kb_reduce_options *o, prepared *p,
                         kb_error *err)
{
    const ptrdiff_t J = c->n_joints, F = c->n_frames, extra = o->virtual_distance > 0.0 ? 3 : 0;
    ptrdiff_t n_all = extra * J;
    for (ptrdiff_t j = 0; c->n_sites && j < J; j++)
        n_all += c->n_sites[j];
    const ptrdiff_t doubles = F + 3 * n_all + 3 * F * (J + n_all) + 12 * F * J + 5 * J;
    p->block = malloc((size_t)doubles * sizeof(double) + (size_t)(3 * J) * sizeof(ptrdiff_t));
    if (!p->block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    p->times = p->block;
    p->sites = p->times + F;
    p->truth = p->sites + 3 * n_all;
    p->world_rot = p->truth + 3 * F * (J + n_all);
    p->origin = p->world_rot + 9 * F * J;
    p->reach = p->origin + 3 * F * J;
    p->tolerances = p->reach + J;
    p->caps = p->tolerances + 2 * J;
    p->n_sites = (ptrdiff_t *)(p->caps + 2 * J);
    p->chain = p->n_sites + J;  /* (2 J): split_tolerance's */
    for (ptrdiff_t j = 0; j < J; j++)
        p->n_sites[j] = (c->n_sites ? c->n_sites[j] : 0) + extra;
    for (ptrdiff_t f = 0; f < F; f++)
        p->times[f] = (double)f * c->frame_time;
    kb_status status = place_points(c, o->virtual_distance, p, err);
    if (status == KB_OK)
        status = split_tolerance(c, o, p, err);
    kb_world_clip clip = {c->n_joints, F, p->times, c->rotations, c->translations, c->parents,
                          c->moves, c->offsets, p->n_sites, p->sites, p->truth, p->tolerances,
                          p->caps};
    p->clip = clip;
    return status;
}

/* The threads a search runs on: at most one a joint, one on short clips. */
static int threads_for(const kb_motion_clip *c, const kb_reduce_options *o, ptrdiff_t from)
{
    if (o->n_threads <= 1 || c->n_frames < from)
        return 1;
    return c->n_joints < o->n_threads ? (int)c->n_joints : o->n_threads;
}

/* The fitted search, then where none of its passes held the greedy one,
 * into out (allocated).  No greedy pass holding (down to 1/45 of first-order
 * tolerances) means rounding's floor, where every frame a key fails too. */
static kb_status search(const kb_motion_clip *c, const kb_reduce_options *o, const prepared *p,
                        kb_reduction *out, kb_error *err)
{
    const kb_world_plan fitted = {1, 2.0, FIT_PASSES, 0, TANGENT_LOOSEN_FACTORS, TANGENT_ROUNDS,
                                  NULL};
    const kb_world_plan greedy = {0, FIRST_SCALE, SEARCH_PASSES, 1, LOOSEN_FACTORS, GREEDY_ROUNDS,
                                  NULL};
    const int total = SEARCH_PASSES + GREEDY_ROUNDS
                      + (o->greedy ? 0 : FIT_PASSES + TANGENT_ROUNDS);
    counting count = {o, &fitted, 0, total};
    int (*report)(void *, int) = o->progress ? count_pass : NULL, found = 0;
    kb_status status = KB_OK;
    if (!o->greedy) {
        status = kb_reduce_world(&p->clip, o->position_tolerance, &fitted, report, &count,
                                 threads_for(c, o, FIT_THREADS_FROM), out, &found, err);
        if (status != KB_OK || found)
            return status;
        count.skipped = FIT_PASSES;
    }
    free(out->rotation_tangents);  /* greedy keys carry none */
    free(out->translation_tangents);
    out->rotation_tangents = out->translation_tangents = NULL;
    count.plan = &greedy;
    status = kb_reduce_world(&p->clip, o->position_tolerance, &greedy, report, &count,
                             threads_for(c, o, GREEDY_THREADS_FROM), out, &found, err);
    if (status != KB_OK || found)
        return status;
    if (o->progress && o->progress(o->progress_data, total, total))
        return kb_fail(err, KB_ESTOPPED, KB_ARG_NONE, -1, -1);
    return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, 0);
}

/* KB_ERANGE where a joint's worst error is past what bounds it. */
static kb_status check_reached(const kb_reduction *r, const kb_reduce_options *o,
                               kb_error *err)
{
    for (ptrdiff_t j = 0; j < r->n_joints; j++) {
        const double worst[3] = {r->max_position[j], r->max_angle[j], r->max_distance[j]},
                     bound[3] = {o->position_tolerance, cap_of(o->angle_cap),
                                 cap_of(o->distance_cap)};
        for (int i = 0; i < 3; i++)
            if (!(worst[i] <= bound[i]))
                return kb_fail(err, KB_ERANGE, KB_ARG_NONE, j, i);
    }
    return kb_ok(err);
}

void kb_reduction_free(kb_reduction *r)
{
    if (!r)
        return;
    free(r->keys);
    free(r->n_keys);
    free(r->rotation_tangents);
    free(r->translation_tangents);
    free(r->max_position);
    free(r->max_angle);
    free(r->max_distance);
    memset(r, 0, sizeof *r);
}

kb_status kb_reduce_clip(const kb_motion_clip *clip, const kb_reduce_options *options,
                         kb_reduction *out, kb_error *err)
{
    if (!out)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    memset(out, 0, sizeof *out);
    kb_status status = check(clip, options, err);
    if (status != KB_OK)
        return status;
    const ptrdiff_t J = clip->n_joints, F = clip->n_frames;
    out->n_joints = J;
    out->n_frames = F;
    out->keys = malloc((size_t)(J * F) * sizeof(ptrdiff_t));
    out->n_keys = malloc((size_t)J * sizeof(ptrdiff_t));
    out->rotation_tangents = calloc((size_t)(3 * J * F), sizeof(double));
    out->translation_tangents = calloc((size_t)(3 * J * F), sizeof(double));
    out->max_position = malloc((size_t)J * sizeof(double));
    out->max_angle = malloc((size_t)J * sizeof(double));
    out->max_distance = malloc((size_t)J * sizeof(double));
    prepared p = {0};
    if (!out->keys || !out->n_keys || !out->rotation_tangents || !out->translation_tangents ||
        !out->max_position || !out->max_angle || !out->max_distance)
        status = kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    else
        status = prepare(clip, options, &p, err);
    if (status == KB_OK)
        status = search(clip, options, &p, out, err);
    if (status == KB_OK)
        status = check_reached(out, options, err);
    free(p.block);
    if (status != KB_OK)
        kb_reduction_free(out);
    return status;
}
