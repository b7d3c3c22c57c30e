/*
 * kb_world_trial.c -- new curves for one joint checked in the world at
 * only the frames where they differ from the held ones: the fitted
 * world-space search of kbspline.motion.reduce_keys (WorldError.trial)
 * tries a joint's keys with a few dropped, which change a few segments,
 * and a frame's places hang on the curves at that frame alone, so the
 * other frames keep their held places and errors.  Each run of frames
 * that differ, rounded out to blocks of four, is placed by kb_joint_world
 * with its arrays offset to the run's first frame: the same arithmetic
 * frame by frame, so the same bits.  One call for the joint and all those
 * below it, since a Python call per joint cost about as much as placing a
 * joint at a thousand frames.
 */
#include <math.h>
#include <string.h>

#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"

/* Frames placed again together where one differs: kb_joint_world's lanes. */
#define BLOCK 4

/* Whether joint m is j or below it (parents come before children). */
static int below(const ptrdiff_t *parents, ptrdiff_t m, ptrdiff_t j)
{
    while (m > j)
        m = parents[m];
    return m == j;
}

/* Whether the tree is well formed and its arrays addressable; else the
 * offending joint in *bad (-1: the counts). */
static int check_points(const kb_world_points *points, ptrdiff_t *bad)
{
    *bad = -1;
    if (!points || points->n_joints < 1 || points->n_frames < 1 || !points->parents ||
        !points->n_sites || !points->truth ||
        !kb_doubles_fit(points->n_joints, points->n_frames, 9, 1))
        return 0;
    ptrdiff_t sites = 0, truth = 0;
    for (ptrdiff_t m = 0; m < points->n_joints; m++) {
        const ptrdiff_t n = points->n_sites[m];
        *bad = m;
        if (points->parents[m] < -1 || points->parents[m] >= m || n < 0 ||
            n > PTRDIFF_MAX / 3 - sites || !kb_doubles_fit(points->n_frames, 3, 1 + n, 1) ||
            truth > PTRDIFF_MAX / (ptrdiff_t)sizeof(double) - 3 * points->n_frames * (1 + n))
            return 0;
        sites += n;
        truth += 3 * points->n_frames * (1 + n);
    }
    *bad = -1;
    return sites == 0 || points->sites;
}

/* Whether every array of p is given. */
static int complete(const kb_world_placed *p)
{
    return p && p->rotations && p->offsets && p->world_rot && p->origin && p->frame_error &&
           p->error;
}

/* Whether a joint's new rows differ from its held ones, bit for bit, at
 * some frame of [first, end).  Offsets NULL: the same as held's. */
static int differs(ptrdiff_t first, ptrdiff_t end, const double *rotations,
                   const double *offsets, const double *held_rotations,
                   const double *held_offsets)
{
    return memcmp(rotations + 4 * first, held_rotations + 4 * first,
                  (size_t)(4 * (end - first)) * sizeof(double)) ||
           (offsets && memcmp(offsets + 3 * first, held_offsets + 3 * first,
                              (size_t)(3 * (end - first)) * sizeof(double)));
}

/* The frames to place again, as [first, end) pairs into runs: their
 * count.  Whole blocks of four frames wherever one frame differs: placing
 * a frame that does not gives the same bits again, and on 131_01 at 1 mm
 * the runs of frames that differ were short (about six frames, often cut
 * by a single key frame), so half their frames went to the scalar code,
 * a call each (591 -> 582 M instructions for the whole reduction; in
 * blocks of four, 563; of eight, 566). */
static ptrdiff_t changed_runs(ptrdiff_t n_frames, const double *rotations, const double *offsets,
                              const double *held_rotations, const double *held_offsets,
                              ptrdiff_t *runs)
{
    ptrdiff_t n = 0;
    for (ptrdiff_t f = 0; f < n_frames; f += BLOCK) {
        const ptrdiff_t end = f + BLOCK < n_frames ? f + BLOCK : n_frames;
        if (!differs(f, end, rotations, offsets, held_rotations, held_offsets))
            continue;
        if (n && runs[2 * n - 1] == f) {
            runs[2 * n - 1] = end;
        } else {
            runs[2 * n] = f;
            runs[2 * n + 1] = end;
            n++;
        }
    }
    return n;
}

/* Copies `width` doubles a frame of the runs' frames from `from` to `to`. */
static void copy_runs(const double *from, double *to, ptrdiff_t width, const ptrdiff_t *runs,
                      ptrdiff_t n_runs)
{
    for (ptrdiff_t r = 0; r < n_runs; r++)
        memcpy(to + width * runs[2 * r], from + width * runs[2 * r],
               (size_t)(width * (runs[2 * r + 1] - runs[2 * r])) * sizeof(double));
}

/* The largest of a joint's squared frame errors in the runs (inside 1)
 * or outside them (inside 0), NaN kept. */
static double largest(const double *frame_error, ptrdiff_t n_frames, const ptrdiff_t *runs,
                      ptrdiff_t n_runs, int inside)
{
    double square = 0.0;
    for (ptrdiff_t r = 0; r <= n_runs; r++) {
        ptrdiff_t first = r ? runs[2 * r - 1] : 0, end = r < n_runs ? runs[2 * r] : n_frames;
        if (inside) {
            if (r == n_runs)
                break;
            first = runs[2 * r];
            end = runs[2 * r + 1];
        }
        for (ptrdiff_t f = first; f < end; f++)
            if (frame_error[f] > square || isnan(frame_error[f]))
                square = frame_error[f];
    }
    return square;
}

/* A joint's error at every frame from its held error (held_error, over
 * held_frames) and its error in the runs placed again (in_runs): the
 * frames outside them are scanned only where the held worst may be in a
 * run, the new curves doing better there. */
static double joint_error(double held_error, const double *held_frames, ptrdiff_t n_frames,
                          const ptrdiff_t *runs, ptrdiff_t n_runs, double in_runs)
{
    if (in_runs >= held_error || isnan(in_runs))  /* the held frames outside are no worse */
        return in_runs;
    if (sqrt(largest(held_frames, n_frames, runs, n_runs, 1)) < held_error)
        return held_error;  /* its worst frame is outside the runs */
    const double outside = sqrt(largest(held_frames, n_frames, runs, n_runs, 0));
    return in_runs > outside || isnan(in_runs) ? in_runs : outside;
}

/* frame_worst[f] = e[f] where larger, or NaN, a NaN there staying
 * (kb_joint_world's rule), for n frames: a select, so that it vectorizes. */
static void fold(const double *e, ptrdiff_t n, double *frame_worst)
{
    for (ptrdiff_t f = 0; f < n; f++) {
        const double w = frame_worst[f];
        frame_worst[f] = e[f] <= w || w != w ? w : e[f];
    }
}

/* A joint's squared frame errors (trial's in the runs, held's elsewhere)
 * folded into frame_worst. */
static void fold_frames(const double *held, const double *trial, ptrdiff_t n_frames,
                        const ptrdiff_t *runs, ptrdiff_t n_runs, double *frame_worst)
{
    ptrdiff_t f = 0;
    for (ptrdiff_t r = 0; r < n_runs; r++) {
        fold(held + f, runs[2 * r] - f, frame_worst + f);
        f = runs[2 * r + 1];
        fold(trial + runs[2 * r], f - runs[2 * r], frame_worst + runs[2 * r]);
    }
    fold(held + f, n_frames - f, frame_worst + f);
}

/* Joint m placed again at the runs into trial, after its parent (held's
 * where m is j, whose parent stays; else placed again in trial), its
 * rows trial's where m is j (copied there first), else held's; sites and
 * truth its own.  trial->error[m]: its error, past limit as soon as a
 * run's frame is (the runs after it then not placed). */
static kb_status place_again(const kb_world_points *points, const kb_world_placed *held,
                             kb_world_placed *trial, ptrdiff_t j, ptrdiff_t m,
                             const double *sites, const double *truth, const ptrdiff_t *runs,
                             ptrdiff_t n_runs, double limit, kb_error *err)
{
    const ptrdiff_t F = points->n_frames, p = points->parents[m];
    const ptrdiff_t n_sites = points->n_sites[m], per_frame = 3 * (1 + n_sites);
    const kb_world_placed *parent = m == j ? held : trial, *rows = m == j ? trial : held;
    double in_runs = 0.0;
    for (ptrdiff_t r = 0; r < n_runs && in_runs <= limit; r++) {
        const ptrdiff_t a = runs[2 * r], n = runs[2 * r + 1] - a, at = F * m + a;
        double *frame_error = trial->frame_error + at, run_error;
        memset(frame_error, 0, (size_t)n * sizeof *frame_error);
        kb_status status = kb_joint_world_error(
            n, p < 0 ? NULL : parent->world_rot + 9 * (F * p + a),
            p < 0 ? NULL : parent->origin + 3 * (F * p + a), rows->rotations + 4 * at,
            rows->offsets + 3 * at, 3, n_sites, sites, truth + per_frame * a, limit,
            trial->world_rot + 9 * at, trial->origin + 3 * at, NULL, &run_error, frame_error,
            err);
        if (status != KB_OK)
            return status;
        if (run_error > in_runs || isnan(run_error))
            in_runs = run_error;
    }
    trial->error[m] = in_runs <= limit ? joint_error(held->error[m], held->frame_error + F * m,
                                                     F, runs, n_runs, in_runs)
                                       : in_runs;
    return kb_ok(err);
}

kb_status kb_world_trial(const kb_world_points *points, const kb_world_placed *held,
                         ptrdiff_t j, const double *rotations, const double *offsets,
                         double limit, kb_world_placed *trial, ptrdiff_t *runs,
                         ptrdiff_t *n_runs, double *worst, double *frame_worst, kb_error *err)
{
    ptrdiff_t bad;
    if (!check_points(points, &bad) || !complete(held) || !complete(trial) || !rotations ||
        !runs || !n_runs || !worst || j < 0 || j >= points->n_joints)
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, bad, -1);
    const ptrdiff_t J = points->n_joints, F = points->n_frames;
    *n_runs = changed_runs(F, rotations, offsets, held->rotations + 4 * F * j,
                           held->offsets + 3 * F * j, runs);
    double *const new_rotations = trial->rotations + 4 * F * j;
    double *const new_offsets = trial->offsets + 3 * F * j;
    /* j's new rows at the runs into trial, where place_again reads them */
    copy_runs(rotations, new_rotations, 4, runs, *n_runs);
    copy_runs(offsets ? offsets : held->offsets + 3 * F * j, new_offsets, 3, runs, *n_runs);
    if (!(limit < INFINITY) || frame_worst)  /* no stop, but at a NaN (kb_joint_world's) */
        limit = INFINITY;
    const double *sites = points->sites, *truth = points->truth;
    for (ptrdiff_t m = 0; m < J; m++) {
        if (m >= j && below(points->parents, m, j)) {
            kb_status status = place_again(points, held, trial, j, m, sites, truth, runs,
                                           *n_runs, limit, err);
            if (status != KB_OK) {
                if (err)
                    err->track = m;
                return status;
            }
            if (frame_worst)
                fold_frames(held->frame_error + F * m, trial->frame_error + F * m, F, runs,
                            *n_runs, frame_worst);
            else if (!(trial->error[m] <= limit)) {
                *worst = trial->error[m];
                return kb_ok(err);
            }
        }
        sites += 3 * points->n_sites[m];
        truth += 3 * F * (1 + points->n_sites[m]);
    }
    *worst = 0.0;  /* every joint's, NaN kept */
    for (ptrdiff_t m = 0; m < J; m++) {
        const int moved = m >= j && below(points->parents, m, j);
        const double e = moved ? trial->error[m] : held->error[m];
        if (e > *worst || isnan(e))
            *worst = e;
    }
    return kb_ok(err);
}

kb_status kb_world_accept(const kb_world_points *points, ptrdiff_t j,
                          const kb_world_placed *trial, const ptrdiff_t *runs, ptrdiff_t n_runs,
                          kb_world_placed *held, kb_error *err)
{
    ptrdiff_t bad;
    if (!check_points(points, &bad) || !complete(held) || !complete(trial) ||
        j < 0 || j >= points->n_joints || n_runs < 0 || (n_runs && !runs))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, bad, -1);
    const ptrdiff_t J = points->n_joints, F = points->n_frames;
    for (ptrdiff_t r = 0; r < n_runs; r++)
        if (runs[2 * r] < (r ? runs[2 * r - 1] : 0) || runs[2 * r + 1] <= runs[2 * r] ||
            runs[2 * r + 1] > F)
            return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, j, r);
    copy_runs(trial->rotations + 4 * F * j, held->rotations + 4 * F * j, 4, runs, n_runs);
    copy_runs(trial->offsets + 3 * F * j, held->offsets + 3 * F * j, 3, runs, n_runs);
    for (ptrdiff_t m = j; m < J; m++) {
        if (!below(points->parents, m, j))
            continue;
        copy_runs(trial->world_rot + 9 * F * m, held->world_rot + 9 * F * m, 9, runs, n_runs);
        copy_runs(trial->origin + 3 * F * m, held->origin + 3 * F * m, 3, runs, n_runs);
        copy_runs(trial->frame_error + F * m, held->frame_error + F * m, 1, runs, n_runs);
        held->error[m] = trial->error[m];
    }
    return kb_ok(err);
}
