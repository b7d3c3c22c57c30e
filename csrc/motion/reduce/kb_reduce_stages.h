/* kb_reduce_stages.h -- private: what key reduction's stages for one
 * joint (kb_reduce_errors.c, kb_reduce_greedy.c, kb_reduce_fit.c,
 * kb_reduce_drop.c) share; each function is documented where defined. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_REDUCE_STAGES_H
#define KB_REDUCE_STAGES_H

#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"
#include "spline/kb_locate.h"
#include "rotation/kb_rot_chords.h"
#include "quat/kb_quat.h"

/* The fits' constants; docs/benchmarks.md ("Tuning notes") says what was
 * tried for each and how to measure it. */
#define FIT_SMALLEST_STEP 1e-5  /* a step shorter than this has converged */
#define FIT_MODEL_STEPS 2       /* Levenberg-Marquardt steps on the model per step asked */
#define FIT_MODEL_GAIN 0.01     /* ... until one lowers its squared error by less than this */
#define FIT_PER_SEGMENT 4       /* frames a fit weighs per segment besides its first */
#define FIT_FIRST_DAMPING 3e-2  /* then a third after a step taken, tenfold after one refused */
#define BAND 6          /* a frame's residual depends on its segment's 2 keys' 3 parameters */

/* Scratch for a spline through up to n_frames keys evaluated at up to
 * n_frames frames, and the per-frame arrays of one joint. */
typedef struct {
    double *t, *q, *x, *tcb3, *tan_in, *tan_out, *seg, *coef, *out;
    kb_rot_chords chords;  /* of the rotation keys in q (prepare_keys) */
    kb_loc *loc;           /* the frames evaluated, located on the keys' times */
    /* joint_errors' frames that are not keys, their times and errors */
    ptrdiff_t *between;
    double *between_times, *between_error;
    int signs_follow;      /* cleared where the rotation keys' signs do not (signs_follow) */
    int given;             /* s->tcb3 holds the keys' tangents (n, 3), not TCB rows (gather_tcb) */
    unsigned char *kind;
    double *angle, *distance, *score, *residual, *moved, *zeros;
} space;

/* fmax(a, b) inline, where the library's is a call: the larger, or the
 * one not NaN; the same bits but for zeros of both signs, which none of
 * its uses below has (errors, scores, their squares and sizes: +0 or more). */
static inline double larger(double a, double b)
{
    return a > b || b != b ? a : b;
}

/* Work of the Levenberg-Marquardt fit of one channel with up to F keys. */
typedef struct {
    double *slope;    /* (K - 1, 2): d T0 / d key s, d T1 / d key s + 1, times I (closed_jacobian) */
    double *basis;    /* (m, 2): each weighed frame's tangent bases (tangent_bases) */
    double *sums;     /* (K - 1, 3): each segment's sums of their products */
    double *normal;   /* (3K, BAND) lower band of the normal matrix: [i][d] = N(i, i - d) */
    double *chol;     /* (3K, BAND) its damped LDL^T factor, same layout (damped_solve) */
    double *gradient, *diagonal, *step, *trial;  /* (3K) each */
    ptrdiff_t *at;         /* (m) the frames the fit weighs (weigh_frames) */
    double *at_times;      /* (m) their times */
    ptrdiff_t *seg_start;  /* (K) the first of them in each segment; [K - 1] = m */
    const double *chord, *dt;  /* (K - 1, 3), (K - 1): each segment's chord and duration (chords) */
    double *chord_store, *dt_store;  /* the translation's */
    ptrdiff_t per_segment; /* frames weighed per segment besides its first */
    double *model_tcb;     /* (3F): model_fit's TCB */
} fit_space;

/* The fit of one joint: its keys, their TCB per channel, and the work. */
typedef struct {
    const kb_reduce_joint *jt;
    ptrdiff_t *keys, K;
    double *tcb[2];         /* (K, 3): rotation, translation */
    ptrdiff_t *spare_keys;
    double *spare_tcb[2];
    int channels;           /* 1: rotation only (distance_tolerance infinite), 2: both */
    unsigned char *mark;    /* (F): keys to fit again (refit_near) */
    unsigned char *near;    /* (F): frames of keys beside a dropped one */
    ptrdiff_t *backup_keys; /* (F) and (F, 3) each: the keys before a trial (drop_refitted) */
    double *backup_tcb[2];
    unsigned char *restore; /* (F): keys whose TCB a failed trial restores */
    double *model_worst;    /* (F, 2): the drops' refits' (refit_near) */
    space s;
    fit_space w;
} joint_fit;

/* kb_reduce_errors.c */
void *kb_rd_space_alloc(space *s, ptrdiff_t F, size_t extra_bytes);
int kb_rd_signs_follow(ptrdiff_t n, const space *s);
kb_status kb_rd_prepare_keys(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                             ptrdiff_t n, const double *tcb, const double *at_times,
                             ptrdiff_t m, space *s, kb_error *err);
kb_status kb_rd_spline_errors(const kb_reduce_joint *jt, int rotation, ptrdiff_t n,
                              const double *tcb, const ptrdiff_t *at, const double *at_times,
                              ptrdiff_t first, ptrdiff_t m, double *error, double *residual,
                              space *s, kb_error *err);
kb_status kb_rd_window_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                              const double *rotation_tcb, const double *translation_tcb,
                              ptrdiff_t first, ptrdiff_t last, double *const *residual,
                              space *s, kb_error *err);
kb_status kb_rd_joint_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                             const double *rotation_tcb, const double *translation_tcb,
                             ptrdiff_t first, ptrdiff_t last, space *s, kb_error *err);
kb_status kb_rd_key_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                           const double *rotation_tcb, const double *translation_tcb,
                           space *s, kb_error *err);
kb_status kb_rd_skipped_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                               const double *rotation_tcb, const double *translation_tcb,
                               space *s, kb_error *err);
kb_status kb_rd_validate(const kb_reduce_joint *jt, kb_error *err);
kb_status kb_rd_check_keys(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K,
                           kb_error *err);
kb_status kb_rd_refuse_row(const kb_reduce_joint *jt, ptrdiff_t i, ptrdiff_t track,
                           kb_error *err);
ptrdiff_t kb_rd_tangent_reach(const kb_reduce_joint *jt, const double *rows);
int kb_rd_orthogonal_neighbours(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K);

/* kb_reduce_fit.c */
size_t kb_rd_fit_bytes(ptrdiff_t F);
void kb_rd_fit_place(fit_space *w, const kb_reduce_joint *jt, ptrdiff_t per_segment, double *d);
kb_status kb_rd_fit_score(joint_fit *j, const ptrdiff_t *keys, ptrdiff_t K, double *const tcb[2],
                          double *worst, kb_error *err);
int kb_rd_worse_than_tolerance(joint_fit *j, const ptrdiff_t *keys, ptrdiff_t K,
                               double *const tcb[2], kb_status *status, kb_error *err);
kb_status kb_rd_refit_near(joint_fit *j, double *const tcb[2], const unsigned char *mark,
                           ptrdiff_t near, int steps, double *model_worst, kb_error *err);
void kb_rd_restart_far(joint_fit *j, ptrdiff_t m);
ptrdiff_t kb_rd_without(joint_fit *j, const unsigned char *drop);
void kb_rd_take_spares(joint_fit *j, ptrdiff_t n);

#endif /* KB_REDUCE_STAGES_H */
