/* kb_reduce_world.c -- the world-space search, written once: every joint's keys at
 * one scale of its tolerances (greedy or swept keys), the scale halved until forward
 * kinematics keeps every point of every frame within the tolerance, then each joint's
 * keys loosened alone, most keys first, kept where every point still holds. */
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

/* Joint j of a world search's clip under these tolerances. */
static kb_reduce_joint clip_joint(const kb_world_clip *c, ptrdiff_t j, double angle,
                                  double distance)
{
    kb_reduce_joint jt = {c->n_frames, c->times, c->rotations + 4 * c->n_frames * j,
                          c->translations + 3 * c->n_frames * j, angle, distance};
    return jt;
}

/* A joint's keys (with tangent rows where fitted) and its curves through them. */
typedef struct {
    ptrdiff_t *keys, n;
    double *rows[2];                  /* (F, 3) rotation and translation tangents */
    double *rotations, *translations; /* (F, 4) and (F, 3) */
} curves;

/* A joint's place in the world under some curves. */
typedef struct {
    double *world_rot, *origin;  /* (F, 9) and (F, 3) */
    double error;                /* its points' largest distance from the truth */
} placed;

/* A joint's greedy order, its scores and each frame's rank in it (PTRDIFF_MAX: none):
 * the keys at a scale above its floor are the prefix before the first score not above. */
typedef struct {
    ptrdiff_t *order, n_order, *rank;
    double *score, floor;
} greedy_order;

typedef struct {
    curves held, trial, spare;   /* its keys so far; a pass's or a round's; merged pieces */
    placed at, moved;            /* under held's curves; in a trial */
    greedy_order greedy;
    const double *truth, *sites; /* its points */
    double scale;                /* its tolerances' scale so far */
    kb_status status;            /* of its last keying, with err */
    kb_error err;
} joint_state;

typedef struct search {
    const kb_world_clip *clip;
    const kb_world_plan *plan;
    ptrdiff_t J, F;
    joint_state *joints;
    ptrdiff_t *order;                  /* (J) the joints a pass or round keys */
    ptrdiff_t *below;                  /* (J) a trial's marks: 1 for its joint and those below */
    double *frame_worst;               /* (F) a trial's squared errors, for the merge */
    double tolerance;
    kb_progress_fn progress;
    void *progress_ctx;
    int n_threads;
} search;

/* Joint j's tolerances at `scale`, capped. */
static kb_reduce_joint tolerances_at(const search *s, ptrdiff_t j, double scale)
{
    const double *base = s->clip->tolerances + 2 * j, *cap = s->clip->caps + 2 * j;
    return clip_joint(s->clip, j, fmin(cap[0], scale * base[0]), fmin(cap[1], scale * base[1]));
}

/* Joint j's greedy keys at `scale` into its trial: a prefix of its greedy
 * order (carried on below its floor), or kb_reduce_greedy's where a cap binds. */
static kb_status greedy_keys(search *s, ptrdiff_t j, double scale, kb_error *err)
{
    joint_state *js = &s->joints[j];
    greedy_order *g = &js->greedy;
    const double *base = s->clip->tolerances + 2 * j, *cap = s->clip->caps + 2 * j;
    if (scale * base[0] > cap[0] || scale * base[1] > cap[1]) {
        kb_reduce_joint jt = tolerances_at(s, j, scale);
        return kb_reduce_greedy(&jt, js->trial.keys, &js->trial.n, NULL, NULL, err);
    }
    if (scale < g->floor) {
        kb_reduce_joint jt = clip_joint(s->clip, j, base[0], base[1]);
        ptrdiff_t from = g->n_order;
        kb_status status = kb_reduce_greedy_order(&jt, scale, g->order, g->score, &g->n_order,
                                                  err);
        if (status != KB_OK)
            return status;
        for (ptrdiff_t i = from; i < g->n_order; i++)
            g->rank[g->order[i]] = i;
        g->floor = scale;
    }
    ptrdiff_t low = 0;  /* where the selection at `scale` stops */
    while (low < g->n_order && g->score[low] > scale)
        low++;
    ptrdiff_t n = 0, *keys = js->trial.keys;
    for (ptrdiff_t f = 0; f < s->F; f++)
        if (f == 0 || f == s->F - 1 || g->rank[f] < low)
            keys[n++] = f;
    js->trial.n = n;
    return kb_ok(err);
}

/* Joint j's keys at `scale` into its trial: greedy keys, or fitted, swept
 * afresh (a pass) or its keys so far with more dropped (a round). */
static void key(search *s, ptrdiff_t j, double scale, int afresh)
{
    joint_state *js = &s->joints[j];
    kb_reduce_joint jt = tolerances_at(s, j, scale);
    curves *t = &js->trial;
    if (!s->plan->fitted)
        js->status = greedy_keys(s, j, scale, &js->err);
    else if (afresh)
        js->status = kb_reduce_sweep(&jt, t->keys, &t->n, t->rows[0], t->rows[1], &js->err);
    else {
        t->n = js->held.n;
        memcpy(t->keys, js->held.keys, (size_t)t->n * sizeof *t->keys);
        for (int c = 0; c < 2; c++)
            memcpy(t->rows[c], js->held.rows[c], (size_t)(3 * t->n) * sizeof(double));
        js->status = KB_OK;
        if (t->n > 2 && !(isinf(jt.angle_tolerance) && isinf(jt.distance_tolerance)))
            js->status = kb_reduce_drop(&jt, t->keys, &t->n, t->rows[0], t->rows[1], NULL,
                                        NULL, &js->err);
    }
}

typedef struct {
    search *s;
    double scale;   /* of every joint; 0: factor times each joint's own */
    double factor;
} key_job;

static void key_range(void *ctx, ptrdiff_t begin, ptrdiff_t end)
{
    key_job *job = ctx;
    for (ptrdiff_t i = begin; i < end; i++) {
        ptrdiff_t j = job->s->order[i];
        double scale = job->scale ? job->scale : job->factor * job->s->joints[j].scale;
        key(job->s, j, scale, job->scale != 0.0);
    }
}

/* key() for the joints s->order[0:n], on the search's threads. */
static void key_joints(search *s, ptrdiff_t n, key_job *job)
{
    if (s->n_threads > 1 && n > 1)
        kb_parallel_for(n, s->n_threads < n ? s->n_threads : (int)n, 1, key_range, job);
    else
        key_range(job, 0, n);
}

/* The curves through c's keys, for joint j. */
static kb_status rebuild(search *s, ptrdiff_t j, curves *c, kb_error *err)
{
    kb_reduce_joint jt = clip_joint(s->clip, j, 1.0, 1.0);
    return kb_reduce_rebuild(&jt, c->keys, c->n, s->plan->fitted ? c->rows[0] : NULL,
                             s->plan->fitted ? c->rows[1] : NULL, c->rotations,
                             s->clip->moves[j] ? c->translations : NULL, NULL, NULL, err);
}

/* Joint j under curves c into `to`, after its parent placed at `parent`:
 * its error past limit as soon as a point is; frame_worst folded in. */
static kb_status place(search *s, ptrdiff_t j, const curves *c, const placed *parent,
                       placed *to, double limit, double *frame_worst, kb_error *err)
{
    const kb_world_clip *clip = s->clip;
    int moves = clip->moves[j];
    return kb_joint_world_error(s->F, parent ? parent->world_rot : NULL,
                                parent ? parent->origin : NULL, c->rotations,
                                moves ? c->translations : clip->offsets + 3 * j, moves ? 3 : 0,
                                clip->n_sites[j], s->joints[j].sites, s->joints[j].truth, limit,
                                to->world_rot, to->origin, NULL, &to->error, frame_worst, err);
}

/* Swaps two curves or two places (their buffers change hands, not their contents). */
#define SWAP(type, a, b) do { type swapped_ = *(a); *(a) = *(b); *(b) = swapped_; } while (0)

/* Every joint's keys at `scale` into its trial, placed after its parent:
 * *held 1 where every point stays within the tolerance, 0 as soon as one does not. */
static kb_status attempt(search *s, double scale, int *held, kb_error *err)
{
    int ahead = s->n_threads > 1;
    *held = 0;
    if (ahead) {  /* all at once; those after a joint that fails for nothing */
        key_job job = {s, scale, 0.0};
        for (ptrdiff_t j = 0; j < s->J; j++)
            s->order[j] = j;
        key_joints(s, s->J, &job);
    }
    for (ptrdiff_t j = 0; j < s->J; j++) {
        joint_state *js = &s->joints[j];
        ptrdiff_t p = s->clip->parents[j];
        if (!ahead)
            key(s, j, scale, 1);
        kb_status status = js->status;
        if (status != KB_OK)
            *err = js->err;
        else if ((status = rebuild(s, j, &js->trial, err)) == KB_OK)
            status = place(s, j, &js->trial, p >= 0 ? &s->joints[p].moved : NULL, &js->moved,
                           s->tolerance, NULL, err);
        if (status != KB_OK) {
            err->track = j;
            return status;
        }
        if (!(js->moved.error <= s->tolerance))
            return kb_ok(err);
    }
    *held = 1;
    return kb_ok(err);
}

/* Takes the pass's keys and places for every joint, at `scale`. */
static void take_pass(search *s, double scale)
{
    for (ptrdiff_t j = 0; j < s->J; j++) {
        SWAP(curves, &s->joints[j].held, &s->joints[j].trial);
        SWAP(placed, &s->joints[j].at, &s->joints[j].moved);
        s->joints[j].scale = scale;
    }
}

/* Joint j with curves c (its trial's or merged keys) and the joints below it placed
 * again; *held 1, and they installed, where every point stays within the tolerance.
 * With frame_worst, no early stop. */
static kb_status trial(search *s, ptrdiff_t j, curves *c, double *frame_worst, int *held,
                       kb_error *err)
{
    ptrdiff_t *below = s->below;
    double limit = frame_worst ? INFINITY : s->tolerance;
    int within = 1;
    kb_status status = rebuild(s, j, c, err);
    for (ptrdiff_t m = j; status == KB_OK && (within || frame_worst) && m < s->J; m++) {
        ptrdiff_t p = s->clip->parents[m];
        below[m] = m == j || (p >= j && below[p]);  /* parents come before children */
        if (!below[m])
            continue;
        const placed *parent = p < 0 ? NULL : m == j ? &s->joints[p].at : &s->joints[p].moved;
        joint_state *ms = &s->joints[m];
        status = place(s, m, m == j ? c : &ms->held, parent, &ms->moved, limit, frame_worst,
                       err);
        within = within && ms->moved.error <= s->tolerance;
    }
    *held = status == KB_OK && within;
    if (status != KB_OK) {
        err->track = j;
        return status;
    }
    if (*held) {
        SWAP(curves, &s->joints[j].held, c);
        for (ptrdiff_t m = j; m < s->J; m++)
            if (below[m])
                SWAP(placed, &s->joints[m].at, &s->joints[m].moved);
    }
    return kb_ok(err);
}

/* Joint j's trial keys kept where they hold; fitted, else the pieces of
 * them that hold (kb_reduce_merge) where those are fewer and hold. */
static kb_status loosen(search *s, ptrdiff_t j, int *held, kb_error *err)
{
    joint_state *js = &s->joints[j];
    double *worst = s->plan->fitted ? s->frame_worst : NULL;
    if (worst)
        memset(worst, 0, (size_t)s->F * sizeof(double));
    kb_status status = trial(s, j, &js->trial, worst, held, err);
    if (status != KB_OK || *held || !worst)
        return status;
    const double *old_rows[2] = {js->held.rows[0], js->held.rows[1]};
    const double *new_rows[2] = {js->trial.rows[0], js->trial.rows[1]};
    status = kb_reduce_merge(s->F, js->held.keys, js->held.n, old_rows, js->trial.keys,
                             js->trial.n, new_rows, worst, s->tolerance, js->spare.keys,
                             &js->spare.n, js->spare.rows, err);
    if (status != KB_OK || !js->spare.n || js->spare.n >= js->held.n)
        return status;
    return trial(s, j, &js->spare, NULL, held, err);
}

/* The joints with more than two keys into s->order, most keys first
 * (ties: joint order), returning how many. */
static ptrdiff_t most_keys_first(search *s)
{
    ptrdiff_t n = 0;
    for (ptrdiff_t j = 0; j < s->J; j++) {
        ptrdiff_t k = s->joints[j].held.n, i = n;
        if (k <= 2)
            continue;
        for (; i > 0 && s->joints[s->order[i - 1]].held.n < k; i--)
            s->order[i] = s->order[i - 1];
        s->order[i] = j;
        n++;
    }
    return n;
}

/* Every joint of more than two keys loosened to `factor` times its scale,
 * most keys first, each kept where it holds, its scale then times factor. */
static kb_status round_of(search *s, double factor, kb_error *err)
{
    ptrdiff_t n = most_keys_first(s);
    key_job job = {s, 0.0, factor};
    key_joints(s, n, &job);
    for (ptrdiff_t i = 0; i < n; i++) {
        ptrdiff_t j = s->order[i];
        joint_state *js = &s->joints[j];
        int held = 0;
        kb_status status = js->status;
        if (status != KB_OK)
            *err = js->err;
        else if (js->trial.n < js->held.n)
            status = loosen(s, j, &held, err);
        if (status != KB_OK) {
            err->track = j;
            return status;
        }
        if (held)
            js->scale *= factor;
    }
    return kb_ok(err);
}

static kb_status report(search *s, int done, kb_error *err)
{
    if (s->progress && s->progress(s->progress_ctx, done))
        return kb_fail(err, KB_ESTOPPED, KB_ARG_NONE, -1, -1);
    return kb_ok(err);
}

/* The scale passes (from first_scale, halved until one holds; with refine, the passes
 * left doubling, then bisecting, keeping the fewest keys, the later of a tie), then
 * the loosening rounds. */
static kb_status run(search *s, int *found, kb_error *err)
{
    const kb_world_plan *plan = s->plan;
    int held = 0, passes = 0;
    double good = plan->first_scale, bad = 0.0;  /* 0: no pass failed yet */
    ptrdiff_t best = PTRDIFF_MAX;
    kb_status status = KB_OK;
    *found = 0;
    for (double scale = good; passes < plan->passes;) {
        if ((status = attempt(s, scale, &held, err)) == KB_OK)
            status = report(s, ++passes, err);
        if (status != KB_OK)
            return status;
        if (held) {
            ptrdiff_t keys = 0;
            for (ptrdiff_t j = 0; j < s->J; j++)
                keys += s->joints[j].trial.n;
            if (keys <= best) {
                take_pass(s, scale);
                best = keys;
            }
            *found = 1;
            good = scale;
            if (!plan->refine)
                break;
        } else {
            bad = scale;
        }
        scale = !*found ? scale / 2 : bad > 0.0 ? sqrt(good * bad) : 2 * good;
    }
    for (int f = 0; *found && status == KB_OK && f < plan->n_factors; f++)
        if ((status = round_of(s, plan->factors[f], err)) == KB_OK)
            status = report(s, plan->passes + f + 1, err);
    return status;
}

/* The kept keys, tangents and worst errors of every joint into out (its
 * frames validated by the rebuilds of its curves). */
static kb_status write_out(search *s, kb_reduction *out, kb_error *err)
{
    const ptrdiff_t F = s->F;
    double *angle = malloc(2 * (size_t)F * sizeof(double)), *distance = angle + F;
    if (!angle)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t j = 0; j < s->J; j++) {
        const curves *c = &s->joints[j].held;
        int moves = s->clip->moves[j];
        memcpy(out->keys + F * j, c->keys, (size_t)c->n * sizeof *c->keys);
        out->n_keys[j] = c->n;
        for (int r = 0; s->plan->fitted && r < 2; r++)
            memcpy((r ? out->translation_tangents : out->rotation_tangents) + 3 * F * j,
                   c->rows[r], (size_t)(3 * c->n) * sizeof(double));
        out->max_position[j] = s->joints[j].at.error;
        if (s->plan->scales)
            s->plan->scales[j] = s->joints[j].scale;
        kb_reduce_joint jt = clip_joint(s->clip, j, 1.0, 1.0);
        kb_reduce_errors_unchecked(&jt, c->rotations, moves ? c->translations : NULL, angle,
                                   distance);
        out->max_angle[j] = kb_rd_worst(angle, F);
        out->max_distance[j] = moves ? kb_rd_worst(distance, F) : 0.0;
    }
    free(angle);
    return kb_ok(err);
}

/* Per frame of one joint, doubles: three curves (rows, rotations and translations),
 * two places, its greedy scores; indices: three curves' keys, the order, its ranks. */
#define JOINT_DOUBLES (3 * (6 + 7) + 2 * 12 + 1)
#define JOINT_INDICES (3 + 2)

static void joint_layout(joint_state *js, ptrdiff_t F, double *d, ptrdiff_t *x)
{
    curves *c[3] = {&js->held, &js->trial, &js->spare};
    for (int i = 0; i < 3; i++, d += 13 * F, x += F)
        *c[i] = (curves){x, 0, {d, d + 3 * F}, d + 6 * F, d + 10 * F};
    js->at = (placed){d, d + 9 * F, 0.0};
    js->moved = (placed){d + 12 * F, d + 21 * F, 0.0};
    d += 24 * F;
    js->greedy = (greedy_order){x, 0, x + F, d, INFINITY};
    for (ptrdiff_t f = 0; f < F; f++)
        js->greedy.rank[f] = PTRDIFF_MAX;
    js->scale = 0.0;
    js->status = KB_OK;
}

kb_status kb_reduce_world(const kb_world_clip *clip, double position_tolerance,
                          const kb_world_plan *plan, kb_progress_fn progress,
                          void *progress_ctx, int n_threads, kb_reduction *out, int *found,
                          kb_error *err)
{
    const ptrdiff_t J = clip->n_joints, F = clip->n_frames;
    *found = 0;
    if ((size_t)F > SIZE_MAX / sizeof(double) / (JOINT_DOUBLES + 1) / (size_t)J)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    search s = {.clip = clip, .plan = plan, .J = J, .F = F, .tolerance = position_tolerance,
                .progress = progress, .progress_ctx = progress_ctx, .n_threads = n_threads};
    size_t JF = (size_t)J * (size_t)F;
    double *d = malloc((JOINT_DOUBLES * JF + (size_t)F) * sizeof(double));
    ptrdiff_t *x = malloc((JOINT_INDICES * JF + 2 * (size_t)J) * sizeof(ptrdiff_t));
    s.joints = malloc((size_t)J * sizeof *s.joints);
    kb_status status = kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    if (!d || !x || !s.joints)
        goto done;
    s.frame_worst = d + JOINT_DOUBLES * JF;
    s.order = x + JOINT_INDICES * JF;
    s.below = s.order + J;
    const double *truth = clip->truth, *site = clip->sites;
    for (ptrdiff_t j = 0; j < J; j++) {
        joint_layout(&s.joints[j], F, d + JOINT_DOUBLES * F * j, x + JOINT_INDICES * F * j);
        s.joints[j].truth = truth;
        s.joints[j].sites = site;
        truth += 3 * F * (1 + clip->n_sites[j]);
        site += 3 * clip->n_sites[j];
    }
    status = run(&s, found, err);
    if (status == KB_OK && *found)
        status = write_out(&s, out, err);
done:
    free(d);
    free(x);
    free(s.joints);
    return status;
}
