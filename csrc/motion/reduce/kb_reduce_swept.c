/* kb_reduce_swept.c -- the world-space search with tangent keys
 * (kbspline.motion.reduce_keys with position_tolerance and fit=True): every
 * joint's swept keys at one scale of its tolerances, halved until every
 * point of the clip stays within the tolerance, then each joint's keys
 * dropped under looser tolerances and kept, or the pieces of them that
 * hold, where forward kinematics keeps every point within it.  In C
 * because on a clip of 20 frames the Python calls that drove it, a few per
 * joint and round, cost about a third of the search. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "motion/reduce/reduce_internal.h"

/* Keys and each key's tangent rows. */
typedef struct {
    ptrdiff_t *keys, n;   /* n 0: none */
    double *rows[2];      /* (F, 3) each, rotation and translation, the first n used */
} choice;

/* One joint through the search. */
typedef struct {
    choice selected;      /* its keys so far */
    choice candidate;     /* a pass's or a round's new keys */
    choice merged;        /* the pieces of the candidate that hold */
    double *rotations;    /* (F, 4) its curves built last */
    double *translations; /* (F, 3), only where the joint moves */
    double scale;         /* its tolerances' scale so far */
    kb_drop_memory memory;
    kb_status status;     /* of its last sweep or drop, with err */
    kb_error err;
} joint_state;

typedef struct {
    const kb_world_clip *clip;
    ptrdiff_t J, F;
    joint_state *joints;
    kb_world_points points;
    kb_world_placed held, trial;
    ptrdiff_t *runs;         /* (F + 1) the trial's runs of frames */
    double *frame_worst;     /* (F) the trial's worst squared error per frame */
    double *angle, *distance; /* (F) scratch for the final errors */
    const double **truth, **sites;  /* (J) each joint's */
    ptrdiff_t *order;        /* (J) the joints a round tries */
    double tolerance;
    kb_progress_fn progress;
    void *progress_ctx;
    int n_threads;
} search;

static kb_reduce_joint joint_at(const search *s, ptrdiff_t j, double angle, double distance)
{
    return kb_clip_joint(s->clip, j, angle, distance, 1);
}

/* Joint j's tolerances at `scale`: the base ones times it, capped (the
 * cap where it is the smaller, as Python's min). */
static kb_reduce_joint tolerances_at(const search *s, ptrdiff_t j, double scale)
{
    const double *base = s->clip->tolerances + 2 * j, *cap = s->clip->caps + 2 * j;
    double t[2];
    for (int c = 0; c < 2; c++)
        t[c] = cap[c] < scale * base[c] ? cap[c] : scale * base[c];
    return joint_at(s, j, t[0], t[1]);
}

static void copy_choice(choice *to, const choice *from)
{
    memcpy(to->keys, from->keys, (size_t)from->n * sizeof *to->keys);
    for (int c = 0; c < 2; c++)
        memcpy(to->rows[c], from->rows[c], (size_t)(3 * from->n) * sizeof(double));
    to->n = from->n;
}

static void swap_choices(choice *a, choice *b)
{
    choice t = *a;
    *a = *b;
    *b = t;
}

/* Joint j's swept keys at `scale` into its candidate. */
static void sweep(search *s, ptrdiff_t j, double scale)
{
    joint_state *js = &s->joints[j];
    kb_reduce_joint jt = tolerances_at(s, j, scale);
    js->status = kb_reduce_sweep(&jt, js->candidate.keys, &js->candidate.n,
                                 js->candidate.rows[0], js->candidate.rows[1], &js->err);
}

/* Joint j's keys with more dropped under its tolerances at `scale` into
 * its candidate (the same keys where only the first and last are, or no
 * tolerance is finite), remembering the drops that fail. */
static void drop(search *s, ptrdiff_t j, double scale)
{
    joint_state *js = &s->joints[j];
    kb_reduce_joint jt = tolerances_at(s, j, scale);
    copy_choice(&js->candidate, &js->selected);
    js->status = KB_OK;
    if (js->selected.n == 2 || (isinf(jt.angle_tolerance) && isinf(jt.distance_tolerance)))
        return;
    js->status = kb_reduce_drop(&jt, js->candidate.keys, &js->candidate.n,
                                js->candidate.rows[0], js->candidate.rows[1], NULL, NULL,
                                &js->memory, &js->err);
}

typedef struct {
    search *s;
    void (*work)(search *s, ptrdiff_t j, double scale);
    double factor;   /* of each joint's scale; 0: `scale` for all */
    double scale;
} joints_job;

static void joints_range(void *ctx, ptrdiff_t begin, ptrdiff_t end)
{
    joints_job *job = ctx;
    for (ptrdiff_t i = begin; i < end; i++) {
        ptrdiff_t j = job->s->order[i];
        job->work(job->s, j, job->factor ? job->factor * job->s->joints[j].scale : job->scale);
    }
}

/* job->work for the joints s->order[0:n], on s->n_threads threads. */
static void for_joints(search *s, ptrdiff_t n, joints_job *job)
{
    if (s->n_threads > 1 && n > 1)
        kb_parallel_for(n, s->n_threads < n ? s->n_threads : (int)n, 1, joints_range, job);
    else
        joints_range(job, 0, n);
}

/* The curves of joint j through c. */
static kb_status rebuild(search *s, ptrdiff_t j, const choice *c, kb_error *err)
{
    joint_state *js = &s->joints[j];
    kb_reduce_joint jt = joint_at(s, j, 1.0, 1.0);
    double *translations = s->clip->moves[j] ? js->translations : NULL;
    return kb_reduce_rebuild(&jt, c->keys, c->n, c->rows[0], c->rows[1], js->rotations,
                             translations, NULL, NULL, err);
}

/* Joint j under its curves built last, after its parent, into s->held:
 * its error there past limit as soon as a point is (or NaN). */
static kb_status place(search *s, ptrdiff_t j, double limit, kb_error *err)
{
    const kb_world_clip *c = s->clip;
    const joint_state *js = &s->joints[j];
    ptrdiff_t F = s->F, p = c->parents[j];
    kb_world_placed *h = &s->held;
    double *rotations = h->rotations + 4 * F * j, *offsets = h->offsets + 3 * F * j;
    memcpy(rotations, js->rotations, (size_t)(4 * F) * sizeof(double));
    if (c->moves[j])
        memcpy(offsets, js->translations, (size_t)(3 * F) * sizeof(double));
    else
        for (ptrdiff_t f = 0; f < F; f++)
            memcpy(offsets + 3 * f, c->offsets + 3 * j, 3 * sizeof(double));
    return kb_joint_world_error(F, p >= 0 ? h->world_rot + 9 * F * p : NULL,
                                p >= 0 ? h->origin + 3 * F * p : NULL, rotations, offsets, 3,
                                c->n_sites[j], s->sites[j], s->truth[j], limit,
                                h->world_rot + 9 * F * j, h->origin + 3 * F * j, NULL, &h->error[j],
                                h->frame_error + F * j, err);
}

/* Every joint's swept keys at `scale`, each placed in the world after its
 * parent: *held 1, and they the joints' keys, where every point stays
 * within the tolerance; 0 as soon as one does not. */
static kb_status attempt(search *s, double scale, int *held, kb_error *err)
{
    ptrdiff_t J = s->J, F = s->F;
    *held = 0;
    memset(s->held.frame_error, 0, (size_t)(J * F) * sizeof(double));
    int ahead = s->n_threads > 1;
    if (ahead) {  /* all at once; those after a joint that fails for nothing */
        for (ptrdiff_t j = 0; j < J; j++)
            s->order[j] = j;
        joints_job job = {s, sweep, 0.0, scale};
        for_joints(s, J, &job);
    }
    for (ptrdiff_t j = 0; j < J; j++) {
        joint_state *js = &s->joints[j];
        if (!ahead)
            sweep(s, j, scale);
        kb_status status = js->status;
        if (status != KB_OK)
            *err = js->err;
        else if ((status = rebuild(s, j, &js->candidate, err)) == KB_OK)
            status = place(s, j, s->tolerance, err);
        if (status != KB_OK) {
            err->track = j;
            return status;
        }
        if (!(s->held.error[j] <= s->tolerance))
            return kb_ok(err);
    }
    for (ptrdiff_t j = 0; j < J; j++) {
        swap_choices(&s->joints[j].selected, &s->joints[j].candidate);
        s->joints[j].scale = scale;
    }
    *held = 1;
    return kb_ok(err);
}

/* Joint j's curves built last, tried in the world: *worst every point's
 * largest error (or past the tolerance one past it), installed where
 * within it; with frame_worst, each frame's worst squared error. */
static kb_status try_curves(search *s, ptrdiff_t j, double *frame_worst, int *held,
                            kb_error *err)
{
    const joint_state *js = &s->joints[j];
    ptrdiff_t n_runs = 0;
    double worst = 0.0;
    kb_status status = kb_world_trial(&s->points, &s->held, j, js->rotations,
                                      s->clip->moves[j] ? js->translations : NULL,
                                      s->tolerance, &s->trial, s->runs, &n_runs, &worst,
                                      frame_worst, err);
    *held = status == KB_OK && worst <= s->tolerance;
    if (*held)
        status = kb_world_accept(&s->points, j, &s->trial, s->runs, n_runs, &s->held, err);
    return status;
}

/* Joint j's candidate keys, kept where every point stays within the
 * tolerance under them; else the pieces of them that do, its keys so far
 * elsewhere (kb_reduce_merge, which remembers the drops of the pieces that
 * fail), where those are fewer and hold: *held 1 where either is kept. */
static kb_status world_held(search *s, ptrdiff_t j, int *held, kb_error *err)
{
    joint_state *js = &s->joints[j];
    memset(s->frame_worst, 0, (size_t)s->F * sizeof(double));
    kb_status status = rebuild(s, j, &js->candidate, err);
    if (status == KB_OK)
        status = try_curves(s, j, s->frame_worst, held, err);
    if (status != KB_OK || *held) {
        if (*held)
            swap_choices(&js->selected, &js->candidate);
        return status;
    }
    const double *old_rows[2] = {js->selected.rows[0], js->selected.rows[1]};
    const double *new_rows[2] = {js->candidate.rows[0], js->candidate.rows[1]};
    status = kb_reduce_merge(s->F, js->selected.keys, js->selected.n, old_rows,
                             js->candidate.keys, js->candidate.n, new_rows, s->frame_worst,
                             s->tolerance, js->merged.keys, &js->merged.n, js->merged.rows,
                             &js->memory, err);
    if (status != KB_OK || !js->merged.n || js->merged.n >= js->selected.n)
        return status;
    if ((status = rebuild(s, j, &js->merged, err)) == KB_OK)
        status = try_curves(s, j, NULL, held, err);
    if (status == KB_OK && *held)
        swap_choices(&js->selected, &js->merged);
    return status;
}

/* The joints with more than two keys into s->order, most keys first
 * (ties: joint order), returning how many. */
static ptrdiff_t most_keys_first(search *s)
{
    ptrdiff_t n = 0;
    for (ptrdiff_t j = 0; j < s->J; j++) {
        ptrdiff_t k = s->joints[j].selected.n, i = n;
        if (k <= 2)
            continue;
        for (; i > 0 && s->joints[s->order[i - 1]].selected.n < k; i--)
            s->order[i] = s->order[i - 1];
        s->order[i] = j;
        n++;
    }
    return n;
}

/* Every joint of more than two keys with more dropped at `factor` times
 * its scale, most keys first, each kept where it holds (world_held), its
 * scale then times factor. */
static kb_status round_of_drops(search *s, double factor, kb_error *err)
{
    ptrdiff_t n = most_keys_first(s);
    joints_job job = {s, drop, factor, 0.0};
    for_joints(s, n, &job);
    for (ptrdiff_t i = 0; i < n; i++) {
        ptrdiff_t j = s->order[i];
        joint_state *js = &s->joints[j];
        int held = 0;
        kb_status status = js->status;
        if (status != KB_OK)
            *err = js->err;
        else if (js->candidate.n < js->selected.n)
            status = world_held(s, j, &held, err);
        if (status != KB_OK) {
            err->track = j;
            return status;
        }
        if (held)
            js->scale *= factor;
    }
    return kb_ok(err);
}

/* Reports pass `passes` (progress's numbering): KB_ESTOPPED where it says stop. */
static kb_status report(search *s, int passes, kb_error *err)
{
    if (s->progress && s->progress(s->progress_ctx, passes))
        return kb_fail(err, KB_ESTOPPED, KB_ARG_NONE, -1, -1);
    return kb_ok(err);
}

/* The keys, rows and errors of every joint into out. */
static kb_status write_out(search *s, kb_swept_keys *out, kb_error *err)
{
    ptrdiff_t F = s->F;
    for (ptrdiff_t j = 0; j < s->J; j++) {
        const choice *c = &s->joints[j].selected;
        int moves = s->clip->moves[j];
        memcpy(out->keys + F * j, c->keys, (size_t)c->n * sizeof *c->keys);
        for (int r = 0; r < 2; r++)
            memcpy((r ? out->translation_rows : out->rotation_rows) + 3 * F * j, c->rows[r],
                   (size_t)(3 * c->n) * sizeof(double));
        out->n_keys[j] = c->n;
        out->max_position[j] = s->held.error[j];
        kb_status status = kb_clip_worst_errors(s->clip, j, s->held.rotations + 4 * F * j,
                                                moves ? s->held.offsets + 3 * F * j : NULL,
                                                s->angle, s->distance, &out->max_angle[j],
                                                &out->max_distance[j], err);
        if (status != KB_OK)
            return status;
    }
    return kb_ok(err);
}

/* The search on a prepared s (see kb_reduce_world_swept), its outputs written
 * where a pass held (whatever progress did to scales since). */
static kb_status run(search *s, const double *scales, int n_scales, const double *factors,
                     int n_factors, kb_swept_keys *out, kb_error *err)
{
    int held = 0, k = 0;
    kb_status status = KB_OK;
    double scale = 0.0;
    out->scale = 0.0;
    while (status == KB_OK && !held && k < n_scales) {
        scale = scales[k];  /* read once: progress runs the caller's code, which may change them */
        if ((status = attempt(s, scale, &held, err)) == KB_OK)
            status = report(s, ++k, err);
    }
    if (status != KB_OK || !held)
        return status;
    out->scale = scale;
    int passes = n_scales + 1;
    status = report(s, passes, err);
    for (int f = 0; f <= n_factors && status == KB_OK; f++) {  /* the last: no factor */
        status = round_of_drops(s, f < n_factors ? factors[f] : 1.0, err);
        if (status == KB_OK)
            status = report(s, ++passes, err);
    }
    return status == KB_OK ? write_out(s, out, err) : status;
}

/* Doubles per frame of one joint's state: three choices' rows, its curves,
 * and its drop memory's needed and least; indices per frame: three
 * choices' keys and the memory's around and context. */
#define JOINT_DOUBLES (3 * 6 + 7 + 4)
#define JOINT_INDICES (3 + 4 + 1)
/* Doubles per joint and frame of a world placing (kb_world_placed; and its
 * error, one per joint), both held and trial's. */
#define PLACED_DOUBLES (4 + 3 + 9 + 3 + 1)

/* One joint's state in the blocks at d and x. */
static void joint_place(joint_state *js, ptrdiff_t F, double *d, ptrdiff_t *x)
{
    choice *choices[3] = {&js->selected, &js->candidate, &js->merged};
    for (int i = 0; i < 3; i++) {
        *choices[i] = (choice){x, 0, {d, d + 3 * F}};
        x += F;
        d += 6 * F;
    }
    js->rotations = d;
    js->translations = d + 4 * F;
    d += 7 * F;
    js->memory = (kb_drop_memory){d, x, d + 2 * F, x + 4 * F};
    memset(d, 0, (size_t)(4 * F) * sizeof(double));  /* none failed yet, as Python's */
    for (ptrdiff_t i = 0; i < 4 * F; i++)
        x[i] = -1;
    memset(x + 4 * F, 0, (size_t)F * sizeof *x);
    js->scale = 0.0;
    js->status = KB_OK;
}

/* The world placings' arrays, J joints of F frames each, from d. */
static kb_world_placed placed_at(double *d, ptrdiff_t J, ptrdiff_t F)
{
    size_t n = (size_t)(J * F);
    return (kb_world_placed){d, d + 4 * n, d + 7 * n, d + 16 * n, d + 19 * n, d + 20 * n};
}

kb_status kb_reduce_world_swept(const kb_world_clip *clip, double position_tolerance,
                                const double *scales, int n_scales, const double *factors,
                                int n_factors, kb_progress_fn progress, void *progress_ctx,
                                int n_threads, kb_swept_keys *out, kb_error *err)
{
    if (!clip || !out || clip->n_joints < 1 || clip->n_frames < 2 || n_scales < 1 ||
        !scales || n_factors < 0 || (n_factors && !factors) || n_threads < 1)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    if (!(position_tolerance >= 0.0 && position_tolerance < INFINITY))
        return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    for (int k = 0; k < n_scales; k++)
        if (!(scales[k] > 0.0 && scales[k] < INFINITY))
            return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    for (int f = 0; f < n_factors; f++)
        if (!(factors[f] > 0.0 && factors[f] < INFINITY))
            return kb_fail(err, KB_ERANGE, KB_ARG_NONE, -1, -1);
    ptrdiff_t J = clip->n_joints, F = clip->n_frames;
    for (ptrdiff_t j = 0; j < J; j++) {
        if (clip->parents[j] < -1 || clip->parents[j] >= j || clip->n_sites[j] < 0 ||
            clip->n_sites[j] > PTRDIFF_MAX / 3 / F - 1)
            return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, j, -1);
        for (int k = 0; k < 2; k++)
            if (!(clip->tolerances[2 * j + k] > 0.0) || !(clip->caps[2 * j + k] > 0.0))
                return kb_fail(err, KB_ERANGE, KB_ARG_NONE, j, -1);
    }
    size_t per_joint = JOINT_DOUBLES + 2 * PLACED_DOUBLES;
    if ((size_t)F > SIZE_MAX / sizeof(double) / (per_joint + 5) / (size_t)J)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    search s = {.clip = clip, .J = J, .F = F, .tolerance = position_tolerance,
                .progress = progress, .progress_ctx = progress_ctx, .n_threads = n_threads};
    s.points = (kb_world_points){J, F, clip->parents, clip->n_sites, clip->sites, clip->truth};
    size_t JF = (size_t)J * (size_t)F;
    double *d = malloc((per_joint * JF + 2 * (size_t)J + 3 * (size_t)F) * sizeof(double));
    ptrdiff_t *x = malloc((JOINT_INDICES * JF + (size_t)F + 1 + (size_t)J) * sizeof(ptrdiff_t));
    s.joints = malloc((size_t)J * sizeof *s.joints);
    s.truth = malloc((size_t)J * sizeof *s.truth);
    s.sites = malloc((size_t)J * sizeof *s.sites);
    kb_status status = kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    if (!d || !x || !s.joints || !s.truth || !s.sites)
        goto done;
    s.held = placed_at(d, J, F);
    s.trial = placed_at(d + PLACED_DOUBLES * JF + J, J, F);
    s.frame_worst = d + 2 * (PLACED_DOUBLES * JF + J);
    s.angle = s.frame_worst + F;
    s.distance = s.angle + F;
    double *joint_doubles = s.distance + F;
    s.runs = x;
    s.order = x + F + 1;
    ptrdiff_t *joint_indices = s.order + J;
    const double *truth = clip->truth, *site = clip->sites;
    for (ptrdiff_t j = 0; j < J; j++) {
        joint_place(&s.joints[j], F, joint_doubles + JOINT_DOUBLES * F * j,
                    joint_indices + JOINT_INDICES * F * j);
        s.truth[j] = truth;
        s.sites[j] = site;
        truth += 3 * F * (1 + clip->n_sites[j]);
        site += 3 * clip->n_sites[j];
    }
    status = run(&s, scales, n_scales, factors, n_factors, out, err);
done:
    free(d);
    free(x);
    free(s.joints);
    free(s.truth);
    free(s.sites);
    return status;
}
