/*
 * kbspline/reduce.h -- key reduction of a clip (reduce_keys' world mode).
 *
 *   kb_reduce_clip     per joint, few keys within a world-space tolerance
 *   kb_reduction_free  frees what kb_reduce_clip allocated
 */
#ifndef KBSPLINE_REDUCE_H
#define KBSPLINE_REDUCE_H

#include "status.h"

KB_BEGIN_DECLS

/* A joint hierarchy and its frames (frame f at time f * frame_time). */
typedef struct {
    ptrdiff_t n_joints;          /* >= 1 */
    ptrdiff_t n_frames;          /* >= 2 */
    double frame_time;           /* > 0 */
    const ptrdiff_t *parents;    /* (n_joints) -1 for a root; parents before children */
    const double *rotations;     /* (n_joints, n_frames, 4) local, (w, x, y, z) */
    const double *translations;  /* (n_joints, n_frames, 3) local; read where moves */
    const unsigned char *moves;  /* (n_joints) 1: translations place the joint, 0: offsets */
    const double *offsets;       /* (n_joints, 3) read where moves is 0 */
    const ptrdiff_t *n_sites;    /* (n_joints) points besides its origin (End Sites); or NULL */
    const double *sites;         /* (sum of n_sites, 3) joint after joint, in its frame */
} kb_motion_clip;

typedef struct {
    double position_tolerance;   /* > 0: the worst world distance of any point, any frame */
    double angle_cap;            /* > 0: the worst local rotation error; 0 for none */
    double distance_cap;         /* > 0: the worst local translation error; 0 for none */
    double virtual_distance;     /* > 0: virtual vertices this far along its axes; or 0 */
    int greedy;                  /* 1: greedy keys (fit=False), 0: fitted tangents */
    int n_threads;               /* threads to search on; <= 1: one */
    /* Or NULL: done of total as passes end; non-zero stops (KB_ESTOPPED). */
    int (*progress)(void *progress_data, int done, int total);
    void *progress_data;
} kb_reduce_options;

/* Joint j's keys are keys[j * n_frames + k], k < n_keys[j]; key k's tangents
 * per time rows j * n_frames + k of (n_joints, n_frames, 3), NULL for greedy
 * keys (KB, zero TCB); worst errors (n_joints): world, angle, distance. */
typedef struct {
    ptrdiff_t n_joints, n_frames;
    ptrdiff_t *keys, *n_keys;
    double *rotation_tangents, *translation_tangents;
    double *max_position, *max_angle, *max_distance;
} kb_reduction;

/*
 * Reduces a clip (reduce_keys' Notes).  KB_EBADSHAPE, KB_ENONFINITE (track
 * the joint, index the frame), KB_ERANGE for a tolerance not positive and
 * finite or below what keys at every frame reproduce (index 0 position,
 * 1 angle, 2 distance), KB_ESTOPPED.  Free *out with kb_reduction_free;
 * on failure it holds nothing.
 */
kb_status kb_reduce_clip(const kb_motion_clip *clip, const kb_reduce_options *options,
                         kb_reduction *out, kb_error *err);
void kb_reduction_free(kb_reduction *reduction);

KB_END_DECLS
#endif /* KBSPLINE_REDUCE_H */
