/* kb_reduce_world.c -- the world-space search with greedy keys: one scale
 * of every joint's tolerances, then each joint's loosened alone, checked
 * by forward kinematics (kbspline.motion.reduce_keys: all of it with
 * fit=False, the fitted search's first phase with fit=True).  In C
 * because on a clip of 20 frames the Python calls that drove its passes,
 * a few per joint, cost more than the passes' work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "motion/reduce/reduce_internal.h"

/* One joint's curves through some keys. */
typedef struct {
    ptrdiff_t *keys, n_keys;   /* n_keys 0: none yet */
    double *rotations;         /* (F, 4) */
    double *translations;      /* (F, 3), only where the joint moves */
} curves;

/* One joint's place in the world under some curves. */
typedef struct {
    double *world_rot;         /* (F, 9) */
    double *origin;            /* (F, 3) */
    double error;              /* its points' largest distance from the truth */
} placed;

/* One joint's greedy order (kb_reduce_greedy_order), its running least
 * score, and each frame's place in it (PTRDIFF_MAX: not in it), so that a
 * prefix's frames are read off in ascending order without sorting. */
typedef struct {
    ptrdiff_t *order, n_order, *rank;
    double *score, *least, floor;
    /* the keys kb_reduce_greedy gave last under capped tolerances, which
     * stay the same from pass to pass once a cap binds both (n_capped 0: none) */
    double capped_at[2];
    ptrdiff_t *capped, n_capped;
} greedy_order;

typedef struct {
    const kb_world_clip *clip;
    ptrdiff_t J, F;
    curves *held_curves, *other_curves;  /* (J,) the world's; a pass's or a trial's */
    placed *held, *other;                /* (J,) the same, swapped in where they hold */
    greedy_order *orders;
    const double **truth;   /* (J,) each joint's points under the clip */
    const double **sites;   /* (J,) */
    ptrdiff_t *below, *below_start;   /* each joint and those below it, ascending */
    ptrdiff_t *keys, n_keys;          /* scratch: the keys asked for */
    double *angle, *distance;         /* scratch: kb_reduce_greedy's errors */
    double tolerance;                 /* the position tolerance */
    kb_progress_fn progress;
    void *progress_ctx;
    int passes;
    int n_threads;                    /* for the greedy orders a pass carries on */
    ptrdiff_t *carried;               /* (J,) scratch: the joints carried on ahead */
} search;

static kb_reduce_joint joint_at(const search *s, ptrdiff_t j, double angle, double distance)
{
    return kb_clip_joint(s->clip, j, angle, distance, 0);
}

/* Whether a cap binds joint j's tolerances at `scale`. */
static int capped(const search *s, ptrdiff_t j, double scale)
{
    const double *base = s->clip->tolerances + 2 * j, *cap = s->clip->caps + 2 * j;
    return scale * base[0] > cap[0] || scale * base[1] > cap[1];
}

/* Carries joint j's greedy order on down to `scale` where it is below its floor. */
static kb_status carry_on(search *s, ptrdiff_t j, double scale, kb_error *err)
{
    greedy_order *g = &s->orders[j];
    if (!(scale < g->floor))
        return kb_ok(err);
    const double *base = s->clip->tolerances + 2 * j;
    kb_reduce_joint jt = joint_at(s, j, base[0], base[1]);
    ptrdiff_t from = g->n_order;
    kb_status status = kb_reduce_greedy_order(&jt, scale, g->order, g->score, &g->n_order, err);
    if (status != KB_OK)
        return status;
    for (ptrdiff_t i = from; i < g->n_order; i++) {
        g->least[i] = i && !(g->score[i] < g->least[i - 1]) ? g->least[i - 1] : g->score[i];
        g->rank[g->order[i]] = i;
    }
    g->floor = scale;
    return kb_ok(err);
}

typedef struct {
    search *s;
    double scale;
} carry_job;

/* carry_on for the joints s->carried[begin:end]; one that fails is left
 * as it was, for the pass to meet the failure itself. */
static void carry_range(void *ctx, ptrdiff_t begin, ptrdiff_t end)
{
    carry_job *job = ctx;
    for (ptrdiff_t i = begin; i < end; i++) {
        kb_error err;
        (void)carry_on(job->s, job->s->carried[i], job->scale, &err);
    }
}

/* On s->n_threads threads, carries on every joint whose greedy order a
 * pass at `scale` reads below its floor (a pass that fails at a joint then
 * has carried on those after it for nothing, as threads run ahead): the
 * same orders, bit for bit, as carried on one by one. */
static void carry_on_ahead(search *s, double scale)
{
    ptrdiff_t n = 0;
    for (ptrdiff_t j = 0; j < s->J; j++)
        if (!capped(s, j, scale) && scale < s->orders[j].floor)
            s->carried[n++] = j;
    carry_job job = {s, scale};
    if (n > 1)
        kb_parallel_for(n, s->n_threads < n ? s->n_threads : (int)n, 1, carry_range, &job);
}

/* Joint j's greedy keys at `scale` into s->keys: the first and last
 * frames and the prefix of its order before the first running least
 * score at most scale (carried on below its floor), or where a cap
 * binds, kb_reduce_greedy's under the capped tolerances. */
static kb_status keys_at(search *s, ptrdiff_t j, double scale, kb_error *err)
{
    greedy_order *g = &s->orders[j];
    if (capped(s, j, scale)) {
        const double *base = s->clip->tolerances + 2 * j, *cap = s->clip->caps + 2 * j;
        double angle = fmin(scale * base[0], cap[0]), distance = fmin(scale * base[1], cap[1]);
        if (!g->n_capped || angle != g->capped_at[0] || distance != g->capped_at[1]) {
            kb_reduce_joint jt = joint_at(s, j, angle, distance);
            kb_status status = kb_reduce_greedy(&jt, g->capped, &g->n_capped, s->angle,
                                                s->distance, err);
            if (status != KB_OK) {
                g->n_capped = 0;
                return status;
            }
            g->capped_at[0] = angle;
            g->capped_at[1] = distance;
        }
        memcpy(s->keys, g->capped, (size_t)g->n_capped * sizeof *s->keys);
        s->n_keys = g->n_capped;
        return kb_ok(err);
    }
    kb_status status = carry_on(s, j, scale, err);
    if (status != KB_OK)
        return status;
    ptrdiff_t low = 0, high = g->n_order;  /* the first least score <= scale */
    while (low < high) {
        ptrdiff_t mid = low + (high - low) / 2;
        if (g->least[mid] <= scale)
            high = mid;
        else
            low = mid + 1;
    }
    ptrdiff_t n = 0;
    s->keys[n++] = 0;
    for (ptrdiff_t f = 1; f < s->F - 1; f++)
        if (g->rank[f] < low)
            s->keys[n++] = f;
    s->keys[n++] = s->F - 1;
    s->n_keys = n;
    return kb_ok(err);
}

/* s->keys' curves for joint j into s->other_curves[j]. */
static kb_status rebuild(search *s, ptrdiff_t j, kb_error *err)
{
    curves *to = &s->other_curves[j];
    kb_reduce_joint jt = joint_at(s, j, 1.0, 1.0);
    kb_status status = kb_reduce_rebuild(&jt, s->keys, s->n_keys, NULL, NULL, to->rotations,
                                         s->clip->moves[j] ? to->translations : NULL, NULL,
                                         NULL, err);
    if (status != KB_OK)
        return status;
    memcpy(to->keys, s->keys, (size_t)s->n_keys * sizeof *s->keys);
    to->n_keys = s->n_keys;
    return kb_ok(err);
}

/* Joint j in the world under curves c, after its parent placed at
 * `parent` (NULL for a root), into s->other[j]: its error there is past
 * limit as soon as a point is (or NaN). */
static kb_status place(search *s, ptrdiff_t j, const curves *c, const placed *parent,
                       double limit, kb_error *err)
{
    const kb_world_clip *clip = s->clip;
    placed *p = &s->other[j];
    int moves = clip->moves[j];
    return kb_joint_world_error(s->F, parent ? parent->world_rot : NULL,
                                parent ? parent->origin : NULL, c->rotations,
                                moves ? c->translations : clip->offsets + 3 * j, moves ? 3 : 0,
                                clip->n_sites[j], s->sites[j], s->truth[j], limit, p->world_rot,
                                p->origin, NULL, &p->error, NULL, err);
}

static void swap_curves(search *s, ptrdiff_t j)
{
    curves t = s->held_curves[j];
    s->held_curves[j] = s->other_curves[j];
    s->other_curves[j] = t;
}

static void swap_placed(search *s, ptrdiff_t j)
{
    placed t = s->held[j];
    s->held[j] = s->other[j];
    s->other[j] = t;
}

/* Every joint's keys at `scale` into s->other_curves, each placed in the
 * world after its parent into s->other: *held 0 as soon as a point is
 * farther than limit. */
static kb_status attempt(search *s, double scale, double limit, int *held, kb_error *err)
{
    *held = 0;
    if (s->n_threads > 1)
        carry_on_ahead(s, scale);
    for (ptrdiff_t j = 0; j < s->J; j++) {
        ptrdiff_t p = s->clip->parents[j];
        kb_status status = keys_at(s, j, scale, err);
        if (status == KB_OK)
            status = rebuild(s, j, err);
        if (status == KB_OK)
            status = place(s, j, &s->other_curves[j], p >= 0 ? &s->other[p] : NULL, limit,
                           err);
        if (status != KB_OK) {
            err->track = j;
            return status;
        }
        if (!(s->other[j].error <= limit))
            return kb_ok(err);
    }
    *held = 1;
    return kb_ok(err);
}

/* Joint j with s->keys instead: it and the joints below it placed again
 * into s->other; *held 1 (and they swapped in) where every point stays
 * within limit. */
static kb_status trial(search *s, ptrdiff_t j, double limit, int *held, kb_error *err)
{
    *held = 0;
    const ptrdiff_t *moved = s->below + s->below_start[j];
    ptrdiff_t n = s->below_start[j + 1] - s->below_start[j];
    kb_status status = rebuild(s, j, err);
    for (ptrdiff_t i = 0; status == KB_OK && i < n; i++) {
        ptrdiff_t m = moved[i], p = s->clip->parents[m];
        /* j's parent stays where it is; the others' were placed again */
        const placed *parent = p < 0 ? NULL : m == j ? &s->held[p] : &s->other[p];
        status = place(s, m, m == j ? &s->other_curves[j] : &s->held_curves[m], parent, limit,
                       err);
        if (status == KB_OK && !(s->other[m].error <= limit))
            return kb_ok(err);
    }
    if (status != KB_OK) {
        err->track = j;
        return status;
    }
    swap_curves(s, j);
    for (ptrdiff_t i = 0; i < n; i++)
        swap_placed(s, moved[i]);
    *held = 1;
    return kb_ok(err);
}

/* The joints a loosening round tries, into `joints`, returning how many:
 * those with more than two keys, most keys first (ties: joint order). */
static ptrdiff_t most_keys_first(const search *s, ptrdiff_t *joints)
{
    ptrdiff_t n = 0;
    for (ptrdiff_t j = 0; j < s->J; j++) {
        ptrdiff_t k = s->held_curves[j].n_keys, i = n++;
        if (k <= 2) {
            n--;
            continue;
        }
        for (; i > 0 && s->held_curves[joints[i - 1]].n_keys < k; i--)
            joints[i] = joints[i - 1];
        joints[i] = j;
    }
    return n;
}

/* Counts a pass and reports it: KB_ESTOPPED where progress says stop. */
static kb_status counted(search *s, kb_error *err)
{
    s->passes++;
    if (s->progress && s->progress(s->progress_ctx, s->passes))
        return kb_fail(err, KB_ESTOPPED, KB_ARG_NONE, -1, -1);
    return kb_ok(err);
}

/* attempt() at `scale` against the tolerance, counted. */
static kb_status pass(search *s, double scale, int *held, kb_error *err)
{
    kb_status status = attempt(s, scale, s->tolerance, held, err);
    return status == KB_OK ? counted(s, err) : status;
}

/* Takes the pass's curves and places for every joint: *keys their count. */
static void take_pass(search *s, ptrdiff_t *keys)
{
    *keys = 0;
    for (ptrdiff_t j = 0; j < s->J; j++) {
        swap_curves(s, j);
        swap_placed(s, j);
        *keys += s->held_curves[j].n_keys;
    }
}

/* The search of kb_reduce_world_greedy on a prepared s: its scales into
 * out, and the curves it keeps held. */
static kb_status run(search *s, double first_scale, int search_passes, const double *factors,
                     int n_factors, kb_world_keys *out, ptrdiff_t *joints, kb_error *err)
{
    int held = 0, have_bad = 0;
    double good = first_scale, bad = 0.0;
    ptrdiff_t best_keys;
    kb_status status = pass(s, good, &held, err);
    while (status == KB_OK && !held && s->passes < search_passes) {  /* too loose: tighten */
        bad = good;
        have_bad = 1;
        good /= 2;
        status = pass(s, good, &held, err);
    }
    out->good_scale = good;
    out->best_scale = 0.0;
    if (status != KB_OK || !held)  /* none held: every frame a key, the caller's */
        return status;
    take_pass(s, &best_keys);
    out->best_scale = good;
    while (s->passes < search_passes) {  /* double until too loose, then bisect */
        double scale = have_bad ? sqrt(good * bad) : 2 * good;
        if ((status = pass(s, scale, &held, err)) != KB_OK)
            return status;
        if (!held) {
            bad = scale;
            have_bad = 1;
            continue;
        }
        out->good_scale = good = scale;
        ptrdiff_t keys = 0;
        for (ptrdiff_t j = 0; j < s->J; j++)
            keys += s->other_curves[j].n_keys;
        if (keys <= best_keys) {  /* the later of a tie */
            take_pass(s, &best_keys);
            out->best_scale = scale;
        }
    }
    for (ptrdiff_t j = 0; j < s->J; j++)
        out->scales[j] = out->best_scale;
    for (int f = 0; f < n_factors; f++) {  /* each joint loosened alone */
        ptrdiff_t n = most_keys_first(s, joints);
        for (ptrdiff_t i = 0; i < n; i++) {
            ptrdiff_t j = joints[i];
            if ((status = keys_at(s, j, factors[f] * out->scales[j], err)) != KB_OK) {
                err->track = j;
                return status;
            }
            if (s->n_keys >= s->held_curves[j].n_keys)
                continue;
            if ((status = trial(s, j, s->tolerance, &held, err)) != KB_OK)
                return status;
            if (held)
                out->scales[j] *= factors[f];
        }
        if ((status = counted(s, err)) != KB_OK)
            return status;
    }
    return kb_ok(err);
}

/* The held curves' keys and errors (where no pass held, no keys, scale 0
 * and NaN errors), and every joint's greedy order, into out. */
static kb_status write_out(search *s, kb_world_keys *out, kb_error *err)
{
    ptrdiff_t F = s->F, capacity = F - 2;
    for (ptrdiff_t j = 0; j < s->J; j++) {
        const greedy_order *g = &s->orders[j];
        memcpy(out->order + j * capacity, g->order, (size_t)g->n_order * sizeof *g->order);
        memcpy(out->order_score + j * capacity, g->score, (size_t)g->n_order * sizeof *g->score);
        out->n_order[j] = g->n_order;
        out->floor[j] = g->floor;
        if (out->best_scale == 0.0) {  /* no keys: every frame is the caller's */
            out->n_keys[j] = 0;
            out->scales[j] = 0.0;
            out->max_position[j] = out->max_angle[j] = out->max_distance[j] = NAN;
            continue;
        }
        const curves *c = &s->held_curves[j];
        int moves = s->clip->moves[j];
        memcpy(out->keys + j * F, c->keys, (size_t)c->n_keys * sizeof *c->keys);
        out->n_keys[j] = c->n_keys;
        out->max_position[j] = s->held[j].error;
        kb_status status = kb_clip_worst_errors(s->clip, j, c->rotations,
                                                moves ? c->translations : NULL, s->angle,
                                                s->distance, &out->max_angle[j],
                                                &out->max_distance[j], err);
        if (status != KB_OK)
            return status;
    }
    return kb_ok(err);
}

kb_status kb_clip_worst_errors(const kb_world_clip *clip, ptrdiff_t j, const double *rotations,
                               const double *translations, double *angle, double *distance,
                               double *max_angle, double *max_distance, kb_error *err)
{
    kb_reduce_joint jt = kb_clip_joint(clip, j, 1.0, 1.0, 0);
    kb_status status = kb_reduce_errors(&jt, rotations, translations, angle,
                                        translations ? distance : NULL, err);
    if (status != KB_OK) {
        err->track = j;
        return status;
    }
    *max_angle = kb_nan_max(angle, clip->n_frames);
    *max_distance = translations ? kb_nan_max(distance, clip->n_frames) : 0.0;
    return kb_ok(err);
}

/* Doubles per frame of a joint's curves (rotation, and where it moves its
 * translation) and of its place in the world (rotation and origin). */
#define ROTATION_DOUBLES 4
#define TRANSLATION_DOUBLES 3
#define PLACE_DOUBLES 12

kb_status kb_reduce_world_greedy(const kb_world_clip *clip, double position_tolerance,
                                 double first_scale, int search_passes,
                                 const double *factors, int n_factors,
                                 kb_progress_fn progress, void *progress_ctx,
                                 int n_threads, kb_world_keys *out, kb_error *err)
{
    if (!clip || !out || clip->n_joints < 1 || clip->n_frames < 2 || search_passes < 1 ||
        n_factors < 0 || (n_factors && !factors) || n_threads < 1)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    if (!(position_tolerance >= 0.0 && position_tolerance < INFINITY) ||
        !(first_scale > 0.0 && first_scale < INFINITY))
        return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    ptrdiff_t J = clip->n_joints, F = clip->n_frames, pairs = 0;
    for (ptrdiff_t j = 0; j < J; j++) {
        if (clip->parents[j] < -1 || clip->parents[j] >= j || clip->n_sites[j] < 0 ||
            clip->n_sites[j] > PTRDIFF_MAX / 3 / F - 1)
            return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, j, -1);
        for (int k = 0; k < 2; k++)
            if (!(clip->tolerances[2 * j + k] > 0.0) || !(clip->caps[2 * j + k] > 0.0))
                return kb_fail(err, KB_ERANGE, KB_ARG_NONE, j, -1);
        for (ptrdiff_t a = j; a >= 0; a = clip->parents[a])
            pairs++;
    }
    /* per joint, doubles: two curves (the translations only where it
     * moves), two places (one shared by the joints nothing hangs from, as
     * none reads theirs), an order's scores; and indices: two curves' keys,
     * an order, its ranks and the keys under capped tolerances.  No more than that: malloc maps this memory
     * anew on most calls, and faulting its pages in took about 5% of the
     * time on 8000 frames of 31 joints. */
    size_t most = 2 * (ROTATION_DOUBLES + TRANSLATION_DOUBLES + PLACE_DOUBLES) + 2;
    if ((size_t)F > SIZE_MAX / sizeof(double) / most / (size_t)J)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    search s = {.clip = clip, .J = J, .F = F, .tolerance = position_tolerance,
                .progress = progress, .progress_ctx = progress_ctx,
                .n_threads = n_threads};
    double *d = malloc((2 + PLACE_DOUBLES) * (size_t)F * sizeof(double));
    ptrdiff_t *x = malloc(((size_t)F + (size_t)pairs + 3 * (size_t)J + 1) * sizeof(ptrdiff_t));
    void **blocks = calloc(2 * (size_t)J, sizeof *blocks);
    curves *c = malloc(2 * (size_t)J * sizeof *c);
    placed *p = malloc(2 * (size_t)J * sizeof *p);
    s.orders = malloc((size_t)J * sizeof *s.orders);
    s.truth = malloc((size_t)J * sizeof *s.truth);
    s.sites = malloc((size_t)J * sizeof *s.sites);
    kb_status status = kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    if (!d || !x || !blocks || !c || !p || !s.orders || !s.truth || !s.sites)
        goto done;
    s.keys = x;
    s.below_start = x + F;  /* each joint's own and descendants' count, then where they start */
    s.below = s.below_start + J + 1;
    ptrdiff_t *joints = s.below + pairs;
    s.carried = joints + J;
    memset(s.below_start, 0, (size_t)(J + 1) * sizeof *s.below_start);
    memset(joints, 0, (size_t)J * sizeof *joints);
    for (ptrdiff_t j = 0; j < J; j++)
        for (ptrdiff_t a = j; a >= 0; a = clip->parents[a])
            s.below_start[a + 1]++;
    for (ptrdiff_t j = 0; j < J; j++)
        s.below_start[j + 1] += s.below_start[j];
    for (ptrdiff_t j = 0; j < J; j++)  /* ascending within each, as j rises */
        for (ptrdiff_t a = j; a >= 0; a = clip->parents[a])
            s.below[s.below_start[a] + joints[a]++] = j;
    s.angle = d;
    s.distance = d + F;
    double *unread = d + 2 * F;  /* the places no joint reads */
    s.held_curves = c;
    s.other_curves = c + J;
    s.held = p;
    s.other = p + J;
    const double *truth = clip->truth, *site = clip->sites;
    for (ptrdiff_t j = 0; j < J; j++) {
        int moves = clip->moves[j], carries = s.below_start[j + 1] - s.below_start[j] > 1;
        size_t doubles = 2 * (ROTATION_DOUBLES + (moves ? TRANSLATION_DOUBLES : 0) +
                              (carries ? PLACE_DOUBLES : 0)) + 2;
        if (!(blocks[2 * j] = malloc(doubles * (size_t)F * sizeof(double))) ||
            !(blocks[2 * j + 1] = malloc(5 * (size_t)F * sizeof(ptrdiff_t))))
            goto done;
        double *dd = blocks[2 * j];
        ptrdiff_t *xx = blocks[2 * j + 1];
        for (int k = 0; k < 2; k++) {
            curves *cv = k ? &s.other_curves[j] : &s.held_curves[j];
            placed *pl = k ? &s.other[j] : &s.held[j];
            *cv = (curves){xx, 0, dd, moves ? dd + ROTATION_DOUBLES * F : NULL};
            xx += F;
            dd += (ROTATION_DOUBLES + (moves ? TRANSLATION_DOUBLES : 0)) * F;
            double *place = carries ? dd : unread;
            *pl = (placed){place, place + 9 * F, 0.0};
            dd += carries ? PLACE_DOUBLES * F : 0;
        }
        s.orders[j] = (greedy_order){xx, 0, xx + F, dd, dd + F, INFINITY, {0.0, 0.0},
                                     xx + 2 * F, 0};
        for (ptrdiff_t f = 0; f < F; f++)
            s.orders[j].rank[f] = PTRDIFF_MAX;
        s.truth[j] = truth;
        s.sites[j] = site;
        truth += 3 * F * (1 + clip->n_sites[j]);
        site += 3 * clip->n_sites[j];
    }
    status = run(&s, first_scale, search_passes, factors, n_factors, out, joints, err);
    if (status == KB_OK)
        status = write_out(&s, out, err);
done:
    for (ptrdiff_t j = 0; blocks && j < 2 * J; j++)
        free(blocks[j]);
    free(blocks);
    free(d);
    free(x);
    free(c);
    free(p);
    free(s.orders);
    free(s.truth);
    free(s.sites);
    return status;
}
