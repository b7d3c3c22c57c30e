/*
 * reduce.c -- kbspline's key reduction from C: a three-joint clip built
 * here (a root that moves, two joints its offsets place, an End Site),
 * reduced within a world-space tolerance, against the public headers alone.
 *
 *   make -C ../../csrc && make run      (or see the Makefile's one-line cc)
 *
 * Prints the clip as BVH frame lines ("frame v1 ... v12", degrees, %.17g)
 * and per search and joint its keys ("keys<search>_<joint> k0 k1 ..."),
 * which tests/test_c_example.py checks against Python's reduce_keys.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <kbspline/kbspline.h>

enum { J = 3, F = 60, CHANNELS = 12 };

static const ptrdiff_t parents[J] = {-1, 0, 1};
static const double offsets[J * 3] = {0, 0, 0, 0, 10, 0, 0, 8, 0};
static const unsigned char moves[J] = {1, 0, 0};
static const ptrdiff_t n_sites[J] = {0, 0, 1};
static const double end_site[3] = {0, 5, 0};

/* Frame f's channels: the root's X, Y, Z position, then every joint's
 * Z, X, Y rotation in degrees (BVH's Zrotation Xrotation Yrotation). */
static void channels(int f, double *v)
{
    v[0] = 0.5 * f;
    v[1] = 90.0 + 2.0 * sin(0.2 * f);
    v[2] = 0.002 * f * f;
    for (int j = 0; j < J; j++) {
        v[3 + 3 * j] = 20.0 * sin(0.1 * f + j);
        v[4 + 3 * j] = 15.0 * sin(0.07 * f * (j + 1));
        v[5 + 3 * j] = 30.0 * cos(0.05 * f);
    }
}

/* The clip's local rotations (J, F, 4) and translations (J, F, 3). */
static int build(double *rotations, double *translations)
{
    static const int zxy[3] = {2, 0, 1};
    for (int f = 0; f < F; f++) {
        double v[CHANNELS], radians[3];
        channels(f, v);
        printf("frame");
        for (int c = 0; c < CHANNELS; c++)
            printf(" %.17g", v[c]);
        printf("\n");
        for (int j = 0; j < J; j++) {
            for (int i = 0; i < 3; i++) {
                radians[i] = v[3 + 3 * j + i] * (3.14159265358979323846 / 180.0);
                translations[(j * F + f) * 3 + i] = j == 0 ? v[i] : 0.0;
            }
            kb_error err;
            if (kb_quat_from_euler(1, radians, zxy, 0, rotations + (j * F + f) * 4, &err)) {
                fprintf(stderr, "kb_quat_from_euler: %s\n", kb_strerror(err.status));
                return 1;
            }
        }
    }
    return 0;
}

/* Reduces the clip under options and prints each joint's keys. */
static int reduce(const kb_motion_clip *clip, kb_reduce_options options, int search)
{
    kb_reduction reduction;
    kb_error err;
    kb_status status = kb_reduce_clip(clip, &options, &reduction, &err);
    if (status != KB_OK) {
        fprintf(stderr, "kb_reduce_clip: %s (joint %td)\n", kb_strerror(status), err.track);
        return 1;
    }
    for (ptrdiff_t j = 0; j < J; j++) {
        printf("keys%d_%td", search, j);
        for (ptrdiff_t k = 0; k < reduction.n_keys[j]; k++)
            printf(" %td", reduction.keys[j * F + k]);
        printf("\n");
    }
    kb_reduction_free(&reduction);
    return 0;
}

int main(void)
{
    static double rotations[J * F * 4], translations[J * F * 3];
    if (build(rotations, translations))
        return 1;
    const kb_motion_clip clip = {J, F, 1.0 / 30.0, parents, rotations, translations, moves,
                                 offsets, n_sites, end_site};
    /* fitted tangents; greedy keys; fitted with virtual vertices and caps */
    const kb_reduce_options options[3] = {
        {.position_tolerance = 0.05},
        {.position_tolerance = 0.05, .greedy = 1},
        {.position_tolerance = 0.2, .virtual_distance = 3.0, .angle_cap = 0.01,
         .distance_cap = 0.1, .n_threads = 2},
    };
    int status = 0;
    for (int i = 0; i < 3 && !status; i++)
        status = reduce(&clip, options[i], i);
    kb_threads_shutdown();
    return status;
}
