/* test_rot_build_segments.c -- kb_rot_build_segments (the reductions'
 * build of only the segments queries lie in, from kb_rot_chords_of) gives
 * those segments' records, kinds and every key's tangents bit for bit as
 * kb_rot_build does, and leaves the other segments as they were: queries
 * in runs of neighbouring segments, in lone segments, and gaps between. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb_test.h"
#include "kb_internal.h"
#include "spline/kb_locate.h"
#include "rotation/kb_rot_chords.h"

#define N_KEYS 9
#define N_SEG (N_KEYS - 1)

static double uniform(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (double)((*state >> 8) & 0xFFFF) / 65536.0 * 2.0 - 1.0;
}

/* Keys at uneven times, TCB or (given) tangents, large ones included so
 * that some segments are cumulative. */
static void random_keys(unsigned *state, int given, double *times, double *quats,
                        double *tcb3, double *tangents)
{
    double t = 0.0;
    for (int i = 0; i < N_KEYS; i++) {
        times[i] = t;
        t += 0.05 + 0.5 * fabs(uniform(state));
        for (int j = 0; j < 4; j++)
            quats[4 * i + j] = uniform(state);
        for (int p = 0; p < 3; p++) {
            tcb3[p * N_KEYS + i] = 0.9 * uniform(state);
            tangents[3 * i + p] = (given > 1 ? 20.0 : 2.0) * uniform(state);
        }
    }
}

KB_TEST(test_rot_build_segments_equal_kb_rot_build)
{
    /* segments queried: runs, lone ones and gaps */
    static const int queried[4][N_SEG] = {{1, 1, 1, 1, 1, 1, 1, 1},
                                          {0, 1, 1, 0, 1, 0, 0, 1},
                                          {1, 0, 1, 0, 1, 0, 1, 0},
                                          {0, 0, 0, 1, 1, 1, 0, 0}};
    unsigned state = 12345u;
    for (int trial = 0; trial < 60; trial++) {
        int given = trial % 3;  /* 0: TCB, 1: tangents, 2: large tangents */
        double times[N_KEYS], quats[4 * N_KEYS], tcb3[3 * N_KEYS], tangents[3 * N_KEYS];
        double zeros[N_KEYS] = {0};
        random_keys(&state, given, times, quats, tcb3, tangents);
        kb_param zero = {zeros, N_KEYS}, none = {NULL, 0}, t = {times, N_KEYS};
        kb_param T = {tcb3, N_KEYS}, C = {tcb3 + N_KEYS, N_KEYS}, B = {tcb3 + 2 * N_KEYS, N_KEYS};
        kb_rot_keys k = {.n_tracks = 1, .n_keys = N_KEYS, .times = t, .quats = quats,
                         .tension = given ? zero : T, .continuity = given ? zero : C,
                         .bias = given ? zero : B, .ease_from = zero, .ease_to = zero,
                         .start_omega = none, .end_omega = none, .timing = KB_TIMING_KB,
                         .ends = KB_ENDS_NATURAL, .chords = NULL,
                         .given_in = given ? tangents : NULL,
                         .given_out = given ? tangents : NULL};
        double tin[3 * N_KEYS], tout[3 * N_KEYS], seg[N_SEG * KB_ROT_SEG];
        unsigned char kind[N_SEG];
        kb_error err;
        kb_status built = kb_rot_build(&k, tin, tout, seg, NULL, kind, NULL, &err);
        double q[4 * N_KEYS], chord[3 * N_SEG], tchord[3 * N_SEG], dt[N_SEG];
        kb_rot_chords c = {q, chord, tchord, dt};
        kb_rot_chords_of(&k, &c);
        for (int pattern = 0; pattern < 4; pattern++) {
            kb_loc loc[3 * N_SEG];
            ptrdiff_t m = 0, hint = 0;
            for (int s = 0; s < N_SEG; s++)
                for (int e = 0; queried[pattern][s] && e < 1 + s % 3; e++) {
                    double at = times[s] + (times[s + 1] - times[s]) * (e + 0.5) / 3.0;
                    locate(times, N_SEG, KB_EXTRAP_CLAMP, at, &hint, &loc[m++]);
                }
            double tin2[3 * N_KEYS], tout2[3 * N_KEYS], seg2[N_SEG * KB_ROT_SEG];
            unsigned char kind2[N_SEG];
            memset(seg2, 0x5a, sizeof seg2);
            memset(kind2, 0x5a, sizeof kind2);
            kb_error err2;
            kb_status status = kb_rot_build_segments(&k, &c, loc, m, tin2, tout2, seg2, kind2,
                                                     &err2);
            if (built != KB_OK) {  /* the first failing segment, where queried */
                int first_bad = (int)err.index;
                if (queried[pattern][first_bad] && status == KB_OK)
                    KB_ASSERT(0);
                continue;
            }
            KB_ASSERT(status == KB_OK);
            KB_ASSERT(!memcmp(tin, tin2, sizeof tin) && !memcmp(tout, tout2, sizeof tout));
            for (int s = 0; s < N_SEG; s++) {
                const double *a = seg + s * KB_ROT_SEG, *b = seg2 + s * KB_ROT_SEG;
                if (queried[pattern][s]) {
                    KB_ASSERT(kind[s] == kind2[s]);
                    KB_ASSERT(!memcmp(a, b, KB_ROT_SEG * sizeof(double)));
                } else {
                    unsigned char untouched[KB_ROT_SEG * sizeof(double)];
                    memset(untouched, 0x5a, sizeof untouched);
                    KB_ASSERT(kind2[s] == 0x5a && !memcmp(b, untouched, sizeof untouched));
                }
            }
        }
    }
}
