/* reduce_internal.h -- private: key reduction's stages, shared by its
 * files, the binding and the C tests. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_REDUCE_INTERNAL_H
#define KB_REDUCE_INTERNAL_H

#include "kb_internal.h"
#include "kbspline/reduce.h"

/* 1 (the default): two shortcuts that each save about 1.3x of the fitted
 * search's time (a drop failed by its refit's own model; a sweep model
 * failed by two frames no tangent fits together); 0: off (tests). */
extern int kb_reduce_shortcuts;

/* One joint's frames and tolerances; a frame's score is the larger of its
 * rotation angle over angle_tolerance and its translation distance over
 * distance_tolerance (each > 0, +inf for none). */
typedef struct {
    ptrdiff_t n_frames;          /* >= 2 */
    const double *times;         /* (n_frames,) */
    const double *rotations;     /* (n_frames, 4) (w, x, y, z), none zero */
    const double *translations;  /* (n_frames, 3) */
    double angle_tolerance, distance_tolerance;
    int tangent_keys;            /* 1: key rows are tangents per time (C1 Hermite keys) */
} kb_reduce_joint;

/* Greedy keys (KB tangents): from the first and last frames, keys the
 * frame of the worst score until none is above 1 (ties: the earliest);
 * writes keys ascending, and angle and distance at every frame. */
kb_status kb_reduce_greedy(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                           double *angle, double *distance, kb_error *err);

/* The splines through keys (from frame 0 to the last) with key rows
 * (n_keys, 3) each (NULL: greedy keys) at every frame, and their errors
 * (translations, angle, distance: NULL to skip). */
kb_status kb_reduce_rebuild(const kb_reduce_joint *joint, const ptrdiff_t *keys,
                            ptrdiff_t n_keys, const double *rotation_tcb,
                            const double *translation_tcb, double *rotations,
                            double *translations, double *angle, double *distance,
                            kb_error *err);

/* The errors of curves at every frame from the joint's (NULL to skip). */
kb_status kb_reduce_errors(const kb_reduce_joint *joint, const double *rotations,
                           const double *translations, double *angle, double *distance,
                           kb_error *err);

/* The greedy selection run until no score is above floor: the frames it
 * keyed in turn and each one's score then.  On entry *n_order frames are
 * keyed already (an earlier call's at a higher floor, carried on).  The
 * keys at s times the tolerances (s >= floor) are the ends and order[i]
 * for every i before the first order_score[i] <= s. */
kb_status kb_reduce_greedy_order(const kb_reduce_joint *joint, double floor, ptrdiff_t *order,
                                 double *order_score, ptrdiff_t *n_order, kb_error *err);

/* Tangent keys in one forward sweep (kb_reduce_sweep.c): from the last
 * key, the farthest frame that can end a segment within the tolerances,
 * its tangents fitted; rows (n_frames, 3) each, the rest zero. */
kb_status kb_reduce_sweep(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                          double *rotation_rows, double *translation_rows, kb_error *err);

/* Fewer tangent keys: drops keys a few apart at once, refits the keys
 * near each and keeps each drop whose frames stay within tolerance; the
 * final angle and distance at every frame (NULL to skip). */
kb_status kb_reduce_drop(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                         double *rotation_tcb, double *translation_tcb, double *angle,
                         double *distance, kb_error *err);

/* The pieces of new tangent keys whose frames all have frame_worst (squared
 * world errors) at most limit squared, the old keys elsewhere (pieces cut
 * at keys both share with the same rows); *n_keys 0 where none differs and holds. */
kb_status kb_reduce_merge(ptrdiff_t n_frames, const ptrdiff_t *old_keys, ptrdiff_t n_old,
                          const double *const old_rows[2], const ptrdiff_t *new_keys,
                          ptrdiff_t n_new, const double *const new_rows[2],
                          const double *frame_worst, double limit, ptrdiff_t *keys,
                          ptrdiff_t *n_keys, double *const rows[2], kb_error *err);

/* A clip as the world search takes it. */
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
    const double *truth;         /* per joint (n_frames, 1 + n_sites, 3): its points */
    const double *tolerances;    /* (n_joints, 2) angle and distance tolerances at scale 1 */
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

/* The world-space search (kb_reduce_world.c): *found 0 where no pass held
 * (out untouched); else out's keys, tangents (fitted) and errors.  progress
 * after pass k with k, after round r with plan->passes + r. */
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

/* Joint j's worst local errors under curves (translations NULL: 0). */
kb_status kb_clip_worst_errors(const kb_world_clip *clip, ptrdiff_t j, const double *rotations,
                               const double *translations, double *angle, double *distance,
                               double *max_angle, double *max_distance, kb_error *err);

/* kb_reduce_errors without validating the frames (any n_frames >= 0). */
void kb_reduce_errors_unchecked(const kb_reduce_joint *jt, const double *rotations,
                                const double *translations, double *angle, double *distance);

#endif /* KB_REDUCE_INTERNAL_H */
