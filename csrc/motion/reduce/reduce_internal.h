/* reduce_internal.h -- private: key reduction's search (kbspline.motion.reduce_keys);
 * the declarations it shares between its files, the binding and the C tests. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_REDUCE_INTERNAL_H
#define KB_REDUCE_INTERNAL_H

#include "kb_internal.h"
#include "kbspline/reduce.h"

/* ------------------------------------------------------------------ */
/* Key reduction (kbspline.motion.reduce_keys).  One joint's frames:   */
/* its local rotations and translations at strictly increasing times.  */
/* Its splines are a RotationSpline and a PositionSpline through the   */
/* keys (KB timing, natural ends); a frame's score is the larger of    */
/* its rotation angle over angle_tolerance and its translation         */
/* distance over distance_tolerance (each > 0, +inf for none).        */
/* ------------------------------------------------------------------ */

typedef struct {
    ptrdiff_t n_frames;          /* >= 2 */
    const double *times;         /* (n_frames,) */
    const double *rotations;     /* (n_frames, 4) unit quaternions, (w, x, y, z): a zero
                                    one is refused (KB_EZERONORM) */
    const double *translations;  /* (n_frames, 3) */
    double angle_tolerance, distance_tolerance;
    int tangent_keys;            /* fitted keys carry each key's tangent per time (C1
                                    Hermite keys: given_in = given_out) where the
                                    functions below say TCB; 0: TCB */
} kb_reduce_joint;

/*
 * Greedy keys: from the first and last frames, keys the frame of the worst
 * score until none is above 1 (ties: the earliest frame).  Only the frames
 * beside a new key are evaluated again (on the seven keys around it), and
 * a heap of each segment's worst frame finds the next: near-linear in
 * frames.  Writes keys (n_frames capacity) ascending and their count, and
 * the final splines' angle and distance (n_frames) at every frame.
 * Allocates about 100 n_frames doubles.
 */
kb_status kb_reduce_greedy(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                           double *angle, double *distance, kb_error *err);

/*
 * The splines through keys (n_keys ascending frames from 0 to n_frames - 1)
 * with TCB rotation_tcb and translation_tcb ((n_keys, 3) each; NULL: zero)
 * at every frame: rotations (n_frames, 4), translations (n_frames, 3; NULL
 * to skip), and their errors from the frames, angle and distance
 * (n_frames; NULL to skip).  Allocates about 75 n_frames doubles.
 */
kb_status kb_reduce_rebuild(const kb_reduce_joint *joint, const ptrdiff_t *keys,
                            ptrdiff_t n_keys, const double *rotation_tcb,
                            const double *translation_tcb, double *rotations,
                            double *translations, double *angle, double *distance,
                            kb_error *err);

/*
 * The errors of curves at every frame, as kb_reduce_rebuild gives them:
 * angle (n_frames; NULL to skip) of rotations (n_frames, 4) from the
 * joint's, and distance (n_frames; NULL, or translations NULL, to skip) of
 * translations (n_frames, 3).  The joint's tolerances are not used but
 * must be positive.  Allocates nothing.
 */
kb_status kb_reduce_errors(const kb_reduce_joint *joint, const double *rotations,
                           const double *translations, double *angle, double *distance,
                           kb_error *err);

/*
 * The greedy selection's order: runs it until no score is above floor
 * (> 0; 1 is kb_reduce_greedy) and writes the frames it keyed, in turn,
 * with the score each had when keyed (order, order_score: n_frames - 2
 * capacity; *n_order of them on return).  On entry, *n_order is how many
 * of order are keyed already (0 to start afresh): the frames an earlier
 * call keyed at a higher floor, whose run this one carries on, writing
 * after them (the same order and scores, bit for bit, as one run to this
 * floor; KB_EBADSHAPE where they are not distinct interior frames).  As
 * the scores under s times the tolerances are these over s, the keys
 * under s times the tolerances, for any s >= floor, are the first and
 * last frames and order[i] for every i before the first order_score[i]
 * <= s (up to rounding within an ulp: a score an ulp from s, or two
 * scores an ulp apart, may compare the other way after kb_reduce_greedy
 * divides by s times a tolerance; powers of two divide exactly).
 */
kb_status kb_reduce_greedy_order(const kb_reduce_joint *joint, double floor, ptrdiff_t *order,
                                 double *order_score, ptrdiff_t *n_order, kb_error *err);

/*
 * Tangent keys (C1 Hermite keys: the rows kb_reduce_rebuild takes with
 * tangent_keys set, whatever jt->tangent_keys says) in one forward sweep,
 * keys shared by both channels: from the last key, whose tangent is fixed,
 * the farthest frame that can end a segment, its tangents fitted in closed
 * form (see kb_reduce_sweep.c), every segment checked on the splines
 * kb_reduce_rebuild builds, so that every frame is within the joint's
 * tolerances by them (the angle and distance kb_reduce_errors reports; a
 * channel of infinite tolerance is not constrained, its keys taking the
 * frames' own tangents by central differences).  Keys at the first and
 * last frames always.  Writes keys (n_frames capacity, ascending) and
 * their count, and rotation_rows and translation_rows (n_frames, 3; the
 * first n_keys rows used, the rest zero).  Frames are checked as
 * kb_reduce_drop checks them.  Allocates about 50 n_frames doubles.
 */
kb_status kb_reduce_sweep(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                          double *rotation_rows, double *translation_rows, kb_error *err);

/*
 * Fewer tangent keys (keys, *n_keys in, capacity n_frames; their tangents
 * in the first *n_keys rows of rotation_tcb and translation_tcb, the
 * translation's read only where distance_tolerance is finite): drops keys
 * a few apart at once, refits the keys near each, and keeps each drop
 * whose frames nearby all stay within tolerance (a failed one restores
 * its key and its neighbours' rows), for every phase of the spacing in
 * turn.  Writes the keys, their count, rows and the final angle and
 * distance at every frame as kb_reduce_rebuild gives them (or neither).
 */
kb_status kb_reduce_drop(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                         double *rotation_tcb, double *translation_tcb, double *angle,
                         double *distance, kb_error *err);

/*
 * The pieces of a joint's new tangent keys (new_keys, n_new; rows (n_new,
 * 3) each) whose frames all have frame_worst (n_frames, squared world
 * errors under the new keys) at most limit squared, the old keys (which
 * held) elsewhere: keys both share with the same rows cut the frames into
 * pieces, and a segment of tangent keys hangs on its two keys alone, so
 * each piece's curves are wholly the old or the new ones.  Writes keys
 * (n_frames capacity) and rows, *n_keys 0 where no piece that differs holds.
 */
kb_status kb_reduce_merge(ptrdiff_t n_frames, const ptrdiff_t *old_keys, ptrdiff_t n_old,
                          const double *const old_rows[2], const ptrdiff_t *new_keys,
                          ptrdiff_t n_new, const double *const new_rows[2],
                          const double *frame_worst, double limit, ptrdiff_t *keys,
                          ptrdiff_t *n_keys, double *const rows[2], kb_error *err);

/* ------------------------------------------------------------------ */
/* The world-space search with greedy keys (reduce_keys with           */
/* position_tolerance: all of it with fit=False, with fit=True its     */
/* first phase, no factors; see kbspline.motion.reduce).                */
/* ------------------------------------------------------------------ */

typedef struct {
    ptrdiff_t n_joints;          /* >= 1 */
    ptrdiff_t n_frames;          /* >= 2 */
    const double *times;         /* (n_frames,) strictly increasing */
    const double *rotations;     /* (n_joints, n_frames, 4) local, (w, x, y, z) */
    const double *translations;  /* (n_joints, n_frames, 3) local */
    const ptrdiff_t *parents;    /* (n_joints,) -1 for a root; parents before children */
    const unsigned char *moves;  /* (n_joints,) 1: the joint's translations place it */
    const double *offsets;       /* (n_joints, 3) where moves is 0, what places it */
    const ptrdiff_t *n_sites;    /* (n_joints,) points its frame carries besides its origin */
    const double *sites;         /* (sum of n_sites, 3) joint after joint */
    const double *truth;         /* joint after joint, (n_frames, 1 + n_sites, 3): its
                                    origin and sites under the clip's own frames */
    const double *tolerances;    /* (n_joints, 2) angle and distance tolerances at scale 1
                                    (> 0, +inf for none) */
    const double *caps;          /* (n_joints, 2) the most they may grow to (+inf: no cap) */
} kb_world_clip;

/* Called after each pass; nonzero stops the search (KB_ESTOPPED). */
typedef int (*kb_progress_fn)(void *ctx, int passes);

/* How kb_reduce_world keys and loosens. */
typedef struct {
    int fitted;          /* 1: swept tangent keys, loosened by drops; 0: greedy keys */
    double first_scale;  /* the first pass's scale of every tolerance, halved until one holds */
    int passes;          /* passes at most */
    int refine;          /* 1: the passes left double, then bisect, keeping the fewest keys */
    const double *factors;  /* the loosening rounds: each joint's scale times each in turn */
    int n_factors;
    double *scales;      /* output (n_joints; NULL to skip): each joint's final scale */
} kb_world_plan;

/*
 * The world-space search: every joint's keys (plan->fitted: kb_reduce_sweep;
 * else the greedy keys, read off kb_reduce_greedy_order) at its tolerances
 * times one scale, capped, placed by forward kinematics until a pass keeps
 * every point of every frame within position_tolerance; then for each
 * factor, every joint with more than two keys, most keys first, keyed at
 * its own scale times the factor (fitted: kb_reduce_drop from its keys),
 * its fewer keys kept where every point still holds (fitted: else the
 * pieces that hold, kb_reduce_merge), its scale then times the factor.
 * Keys are computed on n_threads threads, checked in order: the same keys.
 * progress after pass k with k, after round r with plan->passes + r.
 * *found 0 where no pass held (out untouched); else out's keys, n_keys,
 * tangents (fitted) and worst errors written.  The clip is validated by
 * kb_reduce_clip.
 */
kb_status kb_reduce_world(const kb_world_clip *clip, double position_tolerance,
                          const kb_world_plan *plan, kb_progress_fn progress,
                          void *progress_ctx, int n_threads, kb_reduction *out, int *found,
                          kb_error *err);

/* Joint j of a world search's clip under these tolerances. */
static inline kb_reduce_joint kb_clip_joint(const kb_world_clip *c, ptrdiff_t j, double angle,
                                            double distance, int tangent_keys)
{
    kb_reduce_joint jt = {c->n_frames, c->times, c->rotations + 4 * c->n_frames * j,
                          c->translations + 3 * c->n_frames * j, angle, distance,
                          tangent_keys};
    return jt;
}

/* The largest of v (n >= 1), or NaN where one is, as NumPy's max. */
static inline double kb_nan_max(const double *v, ptrdiff_t n)
{
    double m = v[0];
    for (ptrdiff_t i = 1; i < n && !isnan(m); i++)
        if (v[i] > m || isnan(v[i]))
            m = v[i];
    return m;
}

/* Joint j's worst local errors under curves, rotations (n_frames, 4) and
 * translations (n_frames, 3; NULL: none, *max_distance 0), as
 * kb_reduce_errors measures them into angle and distance (n_frames each),
 * NaN where one is (kb_reduce_world.c). */
kb_status kb_clip_worst_errors(const kb_world_clip *clip, ptrdiff_t j, const double *rotations,
                               const double *translations, double *angle, double *distance,
                               double *max_angle, double *max_distance, kb_error *err);

/* kb_reduce_errors of a joint whose frames a validated joint holds (as
 * kb_reduce_sweep's checks take its frames between two keys, again and
 * again): the same errors without validate's pass over the frames; any
 * n_frames >= 0. */
void kb_reduce_errors_unchecked(const kb_reduce_joint *jt, const double *rotations,
                                const double *translations, double *angle, double *distance);

#endif /* KB_REDUCE_INTERNAL_H */
