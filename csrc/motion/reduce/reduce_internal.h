/* reduce_internal.h -- private: key reduction's stages, shared by its files,
 * the binding and the C tests; each function is documented where defined. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline: include <kbspline/kbspline.h>"
#endif
#ifndef KB_REDUCE_INTERNAL_H
#define KB_REDUCE_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kb_internal.h"
#include "kbspline/kbspline.h"
#include "kbspline/reduce.h"
#include "spline/kb_locate.h"
#include "rotation/kb_rot_chords.h"
#include "quat/kb_quat.h"

/* 1 (default): the two shortcuts worth 1.3x each (docs/benchmarks.md); 0: off (tests). */
extern int kb_reduce_shortcuts;

/* Constants of the fits and the sweep: docs/benchmarks.md ("Tuning notes"). */
#define FIT_PER_SEGMENT 4       /* frames a fit weighs per segment besides its first */
#define FIT_DAMPING 1e-9        /* the fit's one step: damping times the normal diagonal */
#define SWEEP_ALPHA 0.006       /* the pull towards the frames' tangent, times dt^2 */
#define SWEEP_LOOK 3.0          /* the virtual next segment, in this one's frames, at most */
#define SWEEP_LOOK_LEAST 2      /* ... and at least this many */
#define SWEEP_FIRST_GUESS 4     /* the first segment's first candidate length */

/* One joint's frames and tolerances (each > 0, +inf for none); a frame's score
 * is the larger of its angle / angle_tolerance and distance / distance_tolerance. */
typedef struct {
    ptrdiff_t n_frames;          /* >= 2 */
    const double *times;         /* (n_frames,) */
    const double *rotations;     /* (n_frames, 4) (w, x, y, z), none zero */
    const double *translations;  /* (n_frames, 3) */
    double angle_tolerance, distance_tolerance;  /* key rows, where given: tangents per time */
} kb_reduce_joint;

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

/* Scratch for a spline through up to n_frames keys at up to n_frames frames. */
typedef struct {
    double *t, *q, *x, *tan_in, *tan_out, *seg, *coef, *out;
    kb_rot_chords chords;  /* of the rotation keys in q (prepare_keys) */
    kb_loc *loc;           /* the frames evaluated, located on the keys' times */
    ptrdiff_t *between;    /* joint_errors' frames that are not keys, their times and errors */
    double *between_times, *between_error;
    int signs_follow;      /* cleared where the rotation keys' signs do not (signs_follow) */
    const double *given;   /* the keys' tangents (n, 3), or NULL: KB keys */
    unsigned char *kind;
    double *angle, *distance, *score, *residual, *moved, *zeros;
} space;

/* Work of the least-squares fit of one channel with up to F keys. */
typedef struct {
    double *basis;         /* (m, 2): each weighed frame's tangent bases */
    double *diag, *off;    /* (K) the normal matrix: N(k, k) and N(k, k - 1) per component */
    double floor;          /* the damping's weights' floor (kept off zero) */
    double *inv_d, *l;     /* (K) its damped LDL^T factor: 1 / D(k) and L(k, k - 1) */
    double *h;             /* (K - 1) each segment's duration times the channel's scale */
    double *gradient, *step;  /* (3K) each */
    ptrdiff_t *at;         /* (m) the frames the fit weighs */
    double *at_times;      /* (m) their times */
    ptrdiff_t *seg_start;  /* (K) the first of them in each segment; [K - 1] = m */
} fit_space;

/* The fit of one joint: its keys, their rows per channel, and the work. */
typedef struct {
    const kb_reduce_joint *jt;
    ptrdiff_t *keys, K;
    double *tcb[2];         /* (K, 3): rotation, translation */
    ptrdiff_t *spare_keys;
    double *spare_tcb[2];
    int channels;           /* 1: rotation only (distance_tolerance infinite), 2: both */
    unsigned char *mark;    /* (F): keys to fit again (refit_near) */
    ptrdiff_t *backup_keys; /* (F) and (F, 3) each: the keys before a trial */
    double *backup_tcb[2];
    unsigned char *restore; /* (F): keys whose rows a failed trial restores */
    double *model_worst;    /* (F, 2): the drops' refits' (refit_near) */
    space s;
    fit_space w;
} joint_fit;

/* The sweep's state: the frames, their tangents, scratch and the last key;
 * per channel, [0] the rotation and [1] the translation. */
typedef struct {
    const kb_reduce_joint *jt;
    ptrdiff_t F;
    double tol[2];             /* the angle and distance tolerances */
    int fits[2];               /* channels the fit shapes: finite tolerance, not constant */
    int checks[2];             /* channels the real check measures: finite tolerance */
    double *q;                 /* (F, 4) unit frames */
    double *d[2];              /* (F, 3) each: the frames' tangents per time */
    double *logs;              /* (F, 3) log(q_s* q_f), short arc (value_at) */
    double *curve_q, *curve_x, *angle, *distance;  /* (F, 4), (F, 3), (F,), (F,) */
    kb_loc *loc;               /* (F,) */
    double *res_seg, *res_look;  /* (F, 4): a model's residual and its tangent's coefficient */
    ptrdiff_t *run[2];         /* (F,) the last frame g >= f with the steps to f .. g alike */
    ptrdiff_t s;               /* the last key, its tangents and its rebuilt rotation's sign */
    double t_s[2][3], sign_s;
} sweep;

/* A candidate end's fit: its tangents, the rotation's inverse normal
 * matrix, inverse Jacobian at the segment's log and the pull's weight. */
typedef struct {
    double t[2][3];
    double ninv[9], jinv[9], lam;
} fit;

/* fmax inline (the library's is a call); the same bits but for signed zeros. */
static inline double larger(double a, double b)
{
    return a > b || b != b ? a : b;
}

/* log(a* b) on the short arc (the scalar part made >= 0). */
static inline void short_log(const double *a, const double *b, double *v)
{
    double r[4];
    kb_qmul_conj_left(a, b, r);
    if (r[0] < 0.0)
        for (int c = 0; c < 4; c++)
            r[c] = -r[c];
    kb_qlog(r, v);
}

/* Unit quaternions without overflow or underflow (as kb_rot's keys). */
static inline void unit_quat(const double *src, double *q)
{
    double m = 0.0;
    for (int c = 0; c < 4; c++)  /* fmax's, not its library call */
        m = fabs(src[c]) > m ? fabs(src[c]) : m;
    double s[4] = {src[0] / m, src[1] / m, src[2] / m, src[3] / m};
    double n = sqrt(kb_qdot(s, s));
    for (int c = 0; c < 4; c++)
        q[c] = s[c] / n;
}

/* Fritsch-Butland's weighted harmonic mean of slopes s0, s1 (0 where their signs
 * differ), with the weights as fractions of their sum where that overflows. */
static inline double fritsch_butland(double s0, double s1, double w0, double w1)
{
    if (!(s0 * s1 > 0.0))
        return 0.0;
    double v = (w0 + w1) / (w0 / s0 + w1 / s1);
    if (isfinite(v))
        return v;
    const double sum = w0 + w1;
    return 1.0 / (w0 / sum / s0 + w1 / sum / s1);
}

/* Whether n <= 4 doubles are the same bits (b negated where `negate`). */
static inline int same_bits(const double *a, const double *b, int n, int negate)
{
    double v[4];
    for (int c = 0; c < n; c++)
        v[c] = negate ? -b[c] : b[c];
    return memcmp(a, v, (size_t)n * sizeof(double)) == 0;
}

/* Whether two frames' rotations are the same, bit for bit, up to sign. */
static inline int same_rotation(const double *a, const double *b)
{
    return same_bits(a, b, 4, 0) || same_bits(a, b, 4, 1);
}

/* kb_reduce_greedy.c */
kb_status kb_reduce_greedy(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                           double *angle, double *distance, kb_error *err);
kb_status kb_reduce_greedy_order(const kb_reduce_joint *joint, double floor, ptrdiff_t *order,
                                 double *order_score, ptrdiff_t *n_order, kb_error *err);
/* kb_reduce_errors.c */
kb_status kb_reduce_rebuild(const kb_reduce_joint *joint, const ptrdiff_t *keys,
                            ptrdiff_t n_keys, const double *rotation_tcb,
                            const double *translation_tcb, double *rotations,
                            double *translations, double *angle, double *distance,
                            kb_error *err);
kb_status kb_reduce_errors(const kb_reduce_joint *joint, const double *rotations,
                           const double *translations, double *angle, double *distance,
                           kb_error *err);
void kb_reduce_errors_unchecked(const kb_reduce_joint *jt, const double *rotations,
                                const double *translations, double *angle, double *distance);
void *kb_rd_space_alloc(space *s, ptrdiff_t F, size_t extra_bytes);
kb_status kb_rd_prepare_keys(const kb_reduce_joint *jt, int rotation, const ptrdiff_t *keys,
                             ptrdiff_t n, const double *tcb, const double *at_times,
                             ptrdiff_t m, space *s, kb_error *err);
kb_status kb_rd_spline_errors(const kb_reduce_joint *jt, int rotation, ptrdiff_t n,
                              const double *tcb, const ptrdiff_t *at, const double *at_times,
                              ptrdiff_t first, ptrdiff_t m, double *error, double *residual,
                              space *s, kb_error *err);
kb_status kb_rd_joint_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                             const double *rotation_tcb, const double *translation_tcb,
                             ptrdiff_t first, ptrdiff_t last, double *const *residual,
                             space *s, kb_error *err);
kb_status kb_rd_final_errors(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t n,
                             const double *rotation_tcb, const double *translation_tcb,
                             double *angle, double *distance, space *s, kb_error *err);
double kb_rd_worst(const double *v, ptrdiff_t n);
kb_status kb_rd_validate(const kb_reduce_joint *jt, kb_error *err);
kb_status kb_rd_check_keys(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K,
                           kb_error *err);
int kb_rd_orthogonal_neighbours(const kb_reduce_joint *jt, const ptrdiff_t *keys, ptrdiff_t K);
/* kb_reduce_fit.c */
size_t kb_rd_fit_bytes(ptrdiff_t F);
void kb_rd_fit_place(fit_space *w, ptrdiff_t F, double *d);
kb_status kb_rd_refit_near(joint_fit *j, double *const tcb[2], const unsigned char *mark,
                           ptrdiff_t near, double *model_worst, kb_error *err);
void kb_rd_monotone_tangent(const kb_reduce_joint *jt, int ch, ptrdiff_t f, double *tangent);
void kb_rd_restart_far(joint_fit *j, ptrdiff_t m);
/* kb_reduce_drop.c */
kb_status kb_reduce_drop(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                         double *rotation_tcb, double *translation_tcb, double *angle,
                         double *distance, kb_error *err);
/* kb_reduce_sweep.c, kb_reduce_sweep_fit.c */
kb_status kb_reduce_sweep(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                          double *rotation_rows, double *translation_rows, kb_error *err);
int kb_sw_fit_model(sweep *w, ptrdiff_t e, fit *r);
int kb_sw_check_real(sweep *w, ptrdiff_t e, fit *r, double *sign_e);
/* kb_reduce_merge.c */
kb_status kb_reduce_merge(ptrdiff_t n_frames, const ptrdiff_t *old_keys, ptrdiff_t n_old,
                          const double *const old_rows[2], const ptrdiff_t *new_keys,
                          ptrdiff_t n_new, const double *const new_rows[2],
                          const double *frame_worst, double limit, ptrdiff_t *keys,
                          ptrdiff_t *n_keys, double *const rows[2], kb_error *err);
/* kb_reduce_world.c */
kb_status kb_reduce_world(const kb_world_clip *clip, double position_tolerance,
                          const kb_world_plan *plan, kb_progress_fn progress,
                          void *progress_ctx, int n_threads, kb_reduction *out, int *found,
                          kb_error *err);

#endif /* KB_REDUCE_INTERNAL_H */
