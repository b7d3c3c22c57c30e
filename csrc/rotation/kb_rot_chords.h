/* kb_rot_chords.h -- private: a rotation track's keys prepared once and its
 * segments built again from them, with a memo by frame: for key reduction,
 * which builds one track's splines again and again (kb_rot_build.c). */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_ROT_CHORDS_H
#define KB_ROT_CHORDS_H

#include "kb_internal.h"
#include "spline/kb_locate.h"

/* What kb_rot_chords_of takes of keys chosen again and again among one
 * track's frames (kb_reduce.c), kept by frame: each frame's unit
 * quaternion, and the chord from a frame to the frame after it, where the
 * keys' signs leave it the same whichever key starts them (the same bits
 * as taken anew). */
typedef struct {
    const ptrdiff_t *frame;  /* (K): each key's frame */
    double *unit;            /* (F, 4): frame f's unit quaternion, NaN until taken */
    ptrdiff_t *to;           /* (F): the frame of the chord held from frame f, or -1 */
    double *chord;           /* (F, 3): that chord */
} kb_rot_memo;

/* One rotation track's keys as kb_rot_build prepares them (track_chords):
 * unit keys q (K, 4), chords (K - 1, 3), the chords its tangents are taken
 * from (tchord, K - 1, 3) and durations dt (K - 1), in the caller's
 * memory: a track built again and again with other TCB prepares once;
 * with memo (NULL: none), from and into it. */
typedef struct {
    double *q, *chord, *tchord, *dt;
    const kb_rot_memo *memo;
} kb_rot_chords;

/* Track 0 of validated keys k (kb_rot_validate) into c. */
void kb_rot_chords_of(const kb_rot_keys *k, const kb_rot_chords *c);

/* kb_rot_build of track 0 of validated keys k from c (kb_rot_chords_of),
 * without checks, threads or allocation: every key's tangents, but only
 * the segments that the m ascending queries located at loc lie in, into
 * seg and kind (others left as they were). */
kb_status kb_rot_build_segments(const kb_rot_keys *k, const kb_rot_chords *c,
                                const kb_loc *loc, ptrdiff_t m, double *tan_in,
                                double *tan_out, double *seg, unsigned char *kind,
                                kb_error *err);

#endif /* KB_ROT_CHORDS_H */
