/* kb_rot_chords.h -- private: a rotation track's keys prepared once and its
 * segments built again from them: for key reduction, which builds one
 * track's splines again and again (kb_rot_build.c). */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_ROT_CHORDS_H
#define KB_ROT_CHORDS_H

#include "kb_internal.h"
#include "spline/kb_locate.h"

/* One rotation track's keys as kb_rot_build prepares them (track_chords):
 * unit keys q (K, 4), chords (K - 1, 3), the chords its tangents are taken
 * from (tchord, K - 1, 3) and durations dt (K - 1), in the caller's
 * memory: a track built again and again with other TCB prepares once. */
typedef struct {
    double *q, *chord, *tchord, *dt;
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
