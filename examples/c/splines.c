/*
 * splines.c -- kbspline from C: a position spline and a rotation spline
 * built from four keys and evaluated, against the public headers alone.
 *
 *   make -C ../../csrc && make run      (or see the Makefile's one-line cc)
 *
 * Prints "position t x y z", "velocity t x y z" and "rotation t w x y z"
 * lines, %.17g, which tests/test_c_example.py checks against the Python API.
 */
#include <stdio.h>
#include <stdlib.h>

#include <kbspline/kbspline.h>

enum { K = 4, N_EVAL = 5 };

static const double times[K] = {0.0, 1.0, 2.5, 4.0};
static const double zeros[K] = {0.0, 0.0, 0.0, 0.0};
static const double queries[N_EVAL] = {0.0, 0.5, 1.75, 3.0, 4.0};

static int failed(kb_status status, const kb_error *err, const char *what)
{
    if (status == KB_OK)
        return 0;
    fprintf(stderr, "%s: %s (argument %d, track %td, index %td)\n", what, kb_strerror(status),
            (int)err->arg, err->track, err->index);
    return 1;
}

/* A 3-D position spline with tension 0.5 at every key, natural ends. */
static int positions(void)
{
    static const double values[K * 3] = {0, 0, 0, 1, 2, 0, 3, 1, 1, 4, 0, 2};
    static const double tension[K] = {0.5, 0.5, 0.5, 0.5};
    const ptrdiff_t S = kb_num_segments(KB_ENDS_NATURAL, K);
    double coef[(K - 1) * 4 * 3], ease[(K - 1) * 2], out[N_EVAL * 3];
    kb_tcb_keys keys = {
        .n_tracks = 1, .n_keys = K, .dim = 3, .times = {times, 0}, .values = values,
        .tension = {tension, 0}, .continuity = {zeros, 0}, .bias = {zeros, 0},
        .ease_from = {zeros, 0}, .ease_to = {zeros, 0},
        .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL,
    };
    kb_error err;
    if (failed(kb_tcb_build(&keys, NULL, NULL, coef, ease, &err), &err, "kb_tcb_build"))
        return 1;
    /* natural ends: the knots are the key times */
    kb_curve curve = {1, S, 3, times, 0, coef, ease, KB_EXTRAP_CLAMP};
    for (int nu = 0; nu <= 1; nu++) {
        if (failed(kb_curve_eval(&curve, nu, queries, N_EVAL, 0, 0, 1, out, NULL, &err), &err,
                   "kb_curve_eval"))
            return 1;
        for (int i = 0; i < N_EVAL; i++)
            printf("%s %.17g %.17g %.17g %.17g\n", nu ? "velocity" : "position", queries[i],
                   out[3 * i], out[3 * i + 1], out[3 * i + 2]);
    }
    return 0;
}

/* A rotation spline through four unnormalised (w, x, y, z) keys. */
static int rotations(void)
{
    static const double quats[K * 4] = {1, 0, 0, 0, 0.9, 0.3, 0, 0,
                                        0.7, 0.2, 0.6, 0.1, 0.2, 0.1, 0.9, 0.3};
    const ptrdiff_t S = kb_num_segments(KB_ENDS_NATURAL, K);
    double tan_in[K * 3], tan_out[K * 3], seg[(K - 1) * KB_ROT_SEG], ease[(K - 1) * 2];
    double out[N_EVAL * 4];
    unsigned char kind[K - 1];
    kb_rot_keys keys = {
        .n_tracks = 1, .n_keys = K, .times = {times, 0}, .quats = quats,
        .tension = {zeros, 0}, .continuity = {zeros, 0}, .bias = {zeros, 0},
        .ease_from = {zeros, 0}, .ease_to = {zeros, 0},
        .timing = KB_TIMING_KB, .ends = KB_ENDS_NATURAL,
    };
    kb_error err;
    if (failed(kb_rot_build(&keys, tan_in, tan_out, seg, NULL, kind, ease, &err), &err,
               "kb_rot_build"))
        return 1;
    kb_rot_curve curve = {1, S, times, 0, seg, ease, KB_EXTRAP_CLAMP, kind};
    if (failed(kb_rot_eval(&curve, 0, 0, 1, queries, N_EVAL, 0, 0, 1, out, NULL, &err), &err,
               "kb_rot_eval"))
        return 1;
    for (int i = 0; i < N_EVAL; i++)
        printf("rotation %.17g %.17g %.17g %.17g %.17g\n", queries[i], out[4 * i],
               out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
    return 0;
}

int main(void)
{
    int status = positions() || rotations();
    kb_threads_shutdown();
    return status;
}
