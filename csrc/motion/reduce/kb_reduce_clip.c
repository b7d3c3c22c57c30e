/* kb_reduce_clip.c -- the public entry point of key reduction: the clip's
 * points and per-joint tolerances, then the searches in the order
 * kbspline.motion.reduce_keys runs them (tests/test_c_example.py checks
 * that both keep the same keys). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    int done = passes <= c->plan->passes ? c->skipped + passes
                                         : c->total - c->plan->passes - c->plan->n_factors + passes;
    return c->options->progress(c->options->progress_data, done, c->total);
}

/* The clip as the searches take it, and what it points to. */
typedef struct {
    kb_world_clip clip;
    double *times, *sites, *truth, *world_rot, *origin, *reach, *tolerances, *caps;
    ptrdiff_t *n_sites;
} prepared;

static void prepared_free(prepared *p)
{
    free(p->times);
    free(p->sites);
    free(p->truth);
    free(p->world_rot);
    free(p->origin);
    free(p->reach);
    free(p->tolerances);
    free(p->caps);
    free(p->n_sites);
}

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
    ptrdiff_t points = 4 * c->n_joints;  /* origins and virtual vertices, then the sites */
    for (ptrdiff_t j = 0; j < c->n_joints; j++) {
        const ptrdiff_t n = c->n_sites ? c->n_sites[j] : 0;
        if (c->parents[j] < -1 || c->parents[j] >= j || n < 0 ||
            n > PTRDIFF_MAX / 2 - points || !kb_doubles_fit(F, points + n, 3, 1))
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
    ptrdiff_t n_all = 0;
    if (!(p->n_sites = malloc((size_t)J * sizeof *p->n_sites)))
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t j = 0; j < J; j++)
        n_all += p->n_sites[j] = (c->n_sites ? c->n_sites[j] : 0) + extra;
    p->sites = malloc((size_t)(3 * n_all + 1) * sizeof(double));
    p->truth = malloc((size_t)(3 * F * (J + n_all)) * sizeof(double));
    p->world_rot = malloc((size_t)(9 * F * J) * sizeof(double));
    p->origin = malloc((size_t)(3 * F * J) * sizeof(double));
    if (!p->sites || !p->truth || !p->world_rot || !p->origin)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    const double *given = c->sites;
    double *site = p->sites, *truth = p->truth;
    for (ptrdiff_t j = 0; j < J; j++) {
        const ptrdiff_t own = p->n_sites[j] - extra, q = c->parents[j];
        memcpy(site, given, (size_t)(3 * own) * sizeof(double));
        given += 3 * own;
        for (ptrdiff_t v = 0; v < extra; v++)  /* virtual_distance times the identity */
            for (int i = 0; i < 3; i++)
                site[3 * (own + v) + i] = v == i ? virtual_distance : 0.0;
        kb_status status = kb_joint_world_error(
            F, q >= 0 ? p->world_rot + 9 * F * q : NULL, q >= 0 ? p->origin + 3 * F * q : NULL,
            c->rotations + 4 * F * j, c->moves[j] ? c->translations + 3 * F * j : c->offsets + 3 * j,
            c->moves[j] ? 3 : 0, p->n_sites[j], site, NULL, INFINITY, p->world_rot + 9 * F * j,
            p->origin + 3 * F * j, truth, NULL, NULL, err);
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

/* Per joint angle and distance tolerances that bound the world error to
 * first order (world_error.local_tolerances, which says how), and caps. */
static kb_status split_tolerance(const kb_motion_clip *c, const kb_reduce_options *o,
                                 prepared *p, kb_error *err)
{
    const ptrdiff_t J = c->n_joints;
    ptrdiff_t *chain = malloc((size_t)(2 * J) * sizeof *chain), *longest = chain + J;
    p->reach = malloc((size_t)J * sizeof(double));
    p->tolerances = malloc((size_t)(2 * J) * sizeof(double));
    p->caps = malloc((size_t)(2 * J) * sizeof(double));
    if (!chain || !p->reach || !p->tolerances || !p->caps) {
        free(chain);
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    }
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
    free(chain);
    return status;
}

static kb_status prepare(const kb_motion_clip *c, const kb_reduce_options *o, prepared *p,
                         kb_error *err)
{
    const ptrdiff_t F = c->n_frames;
    if (!(p->times = malloc((size_t)F * sizeof(double))))
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
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

/* Every frame a key (KB keys) and the errors of those splines, placed in
 * the world joint after joint: what reduce_keys keeps where no search held. */
static kb_status every_frame(const prepared *p, kb_reduction *out, kb_error *err)
{
    const kb_world_clip *c = &p->clip;
    const ptrdiff_t J = c->n_joints, F = c->n_frames;
    double *work = malloc((size_t)(9 * F + 12 * F * J) * sizeof(double));
    if (!work)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    double *rot = work, *trans = rot + 4 * F, *angle = trans + 3 * F, *distance = angle + F,
           *world_rot = distance + F, *origin = world_rot + 9 * F * J;
    kb_status status = KB_OK;
    const double *truth = c->truth, *site = c->sites;
    for (ptrdiff_t j = 0; j < J && status == KB_OK; j++) {
        const ptrdiff_t q = c->parents[j], n = c->n_sites[j];
        for (ptrdiff_t f = 0; f < F; f++)
            out->keys[j * F + f] = f;
        out->n_keys[j] = F;
        kb_reduce_joint jt = kb_clip_joint(c, j, 1.0, 1.0, 0);
        status = kb_reduce_rebuild(&jt, out->keys + j * F, F, NULL, NULL, rot, trans, NULL,
                                   NULL, err);
        if (status == KB_OK)
            status = kb_joint_world_error(
                F, q >= 0 ? world_rot + 9 * F * q : NULL, q >= 0 ? origin + 3 * F * q : NULL,
                rot, c->moves[j] ? trans : c->offsets + 3 * j, c->moves[j] ? 3 : 0, n, site,
                truth, INFINITY, world_rot + 9 * F * j, origin + 3 * F * j, NULL,
                &out->max_position[j], NULL, err);
        if (status == KB_OK)
            status = kb_clip_worst_errors(c, j, rot, c->moves[j] ? trans : NULL, angle,
                                          distance, &out->max_angle[j], &out->max_distance[j],
                                          err);
        if (status != KB_OK)
            err->track = j;
        truth += 3 * F * (1 + n);
        site += 3 * n;
    }
    free(work);
    return status;
}

/* The fitted search, then where none of its passes held the greedy one,
 * then every frame a key, into out (allocated). */
static kb_status search(const kb_motion_clip *c, const kb_reduce_options *o, const prepared *p,
                        kb_reduction *out, kb_error *err)
{
    const kb_world_plan fitted = {1, 2.0, FIT_PASSES, 0, TANGENT_LOOSEN_FACTORS, TANGENT_ROUNDS, NULL},
                        greedy = {0, FIRST_SCALE, SEARCH_PASSES, 1, LOOSEN_FACTORS, GREEDY_ROUNDS, NULL};
    const int total = SEARCH_PASSES + GREEDY_ROUNDS + (o->greedy ? 0 : FIT_PASSES + TANGENT_ROUNDS);
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
    status = every_frame(p, out, err);
    if (status == KB_OK && o->progress && o->progress(o->progress_data, total, total))
        status = kb_fail(err, KB_ESTOPPED, KB_ARG_NONE, -1, -1);
    return status;
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
    prepared_free(&p);
    if (status != KB_OK)
        kb_reduction_free(out);
    return status;
}
