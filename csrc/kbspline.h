/*
 * kbspline.h -- the one public header of the kbspline C core.
 *
 * Kochanek-Bartels (tension / continuity / bias) splines for batches of
 * vector tracks.  Pure C11: no Python, no allocation in evaluation loops,
 * thread-safe; the only global state is the pool of worker threads that
 * large batches are split over (see kb_threads_shutdown).  Every array is
 * C-contiguous float64 and its shape is written with named axes, e.g.
 * values (n_tracks, n_keys, dim).
 *
 * Derivatives are d/dt in global time (per unit of t), never d/du.
 */
#ifndef KBSPLINE_H
#define KBSPLINE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    KB_OK = 0,
    KB_EBADSHAPE,   /* a count or size is out of range */
    KB_ENOTSORTED,  /* times not strictly increasing */
    KB_ENONFINITE,  /* NaN or infinity */
    KB_ENOMEM,
    KB_EBADOPTION,  /* unknown timing / ends / extrapolation code */
    KB_ETOOFEW,     /* too few keys for the end condition */
    KB_ENOTCLOSED,  /* ends=closed but the last key does not repeat the first */
    KB_EDOMAIN,     /* a query outside the domain under extrapolate=error */
    KB_ERANGE,      /* outside its allowed range (ease), or finite but too large to
                       compute with (times whose differences overflow, keys whose
                       coefficients overflow), or times closer than DBL_MIN (a
                       subnormal spacing, whose reciprocal overflows) */
    KB_EZERONORM,   /* a quaternion of zero norm */
    KB_ESTOPPED     /* stopped by its caller's progress function */
} kb_status;

/* Which argument an error is about (the Python names). */
typedef enum {
    KB_ARG_NONE = 0,
    KB_ARG_TIMES,
    KB_ARG_VALUES,
    KB_ARG_TENSION,
    KB_ARG_CONTINUITY,
    KB_ARG_BIAS,
    KB_ARG_EASE_FROM,
    KB_ARG_EASE_TO,
    KB_ARG_START_TANGENT,
    KB_ARG_END_TANGENT,
    KB_ARG_T,
    KB_ARG_QUATERNIONS,
    KB_ARG_TANGENTS
} kb_arg;

/* An error: its status, the argument, and the offending track and index
 * (key or query index; -1 where it does not apply). */
typedef struct {
    kb_status status;
    kb_arg arg;
    ptrdiff_t track;
    ptrdiff_t index;
} kb_error;

typedef enum {
    KB_TIMING_KB = 0,     /* Kochanek-Bartels 1984, Eberly's code */
    KB_TIMING_3DS,        /* 3D Studio: multipliers corrected by |continuity| */
    KB_TIMING_PARABOLIC,  /* exact for parabolas (the splines package) */
    KB_TIMING_AVERAGE     /* mean of the slopes, KB-weighted */
} kb_timing;

typedef enum {
    KB_ENDS_NATURAL = 0,  /* zero second derivative at both ends */
    KB_ENDS_PHANTOM,      /* keys 0 and K-1 only shape tangents */
    KB_ENDS_REFLECT,      /* a virtual key mirrored through each end key */
    KB_ENDS_CLAMPED,      /* end tangents given */
    KB_ENDS_CLOSED        /* a loop: key K-1 repeats key 0 */
} kb_ends;

typedef enum {
    KB_EXTRAP_CLAMP = 0,
    KB_EXTRAP_LINEAR,
    KB_EXTRAP_PERIODIC,
    KB_EXTRAP_ERROR
} kb_extrap;

/* A per-key parameter: element (track, key) is data[track * stride + key],
 * so stride 0 shares one row (n_keys,) across all tracks. */
typedef struct {
    const double *data;
    ptrdiff_t stride;
} kb_param;

const char *kb_strerror(kb_status status);

/* Fewest keys an end condition accepts (2, or 4 for phantom, 3 for closed). */
ptrdiff_t kb_min_keys(kb_ends ends);

/* Number of segments of a spline with n_keys keys under `ends`. */
ptrdiff_t kb_num_segments(kb_ends ends, ptrdiff_t n_keys);

/* Index of the first key that starts a segment (1 for phantom, else 0). */
ptrdiff_t kb_first_segment_key(kb_ends ends);

/* ------------------------------------------------------------------ */
/* Building: tangents and per-segment cubic coefficients.              */
/* ------------------------------------------------------------------ */

/* The keys of a batch of position-like tracks. */
typedef struct {
    ptrdiff_t n_tracks, n_keys, dim;
    kb_param times;        /* (n_tracks | 1, n_keys), strictly increasing */
    const double *values;  /* (n_tracks, n_keys, dim) */
    kb_param tension, continuity, bias;   /* (n_tracks | 1, n_keys) */
    kb_param ease_from, ease_to;          /* (n_tracks | 1, n_keys), in [0, 1] */
    kb_param start_tangent, end_tangent;  /* (n_tracks | 1, dim) per time;
                                             clamped only; data may be NULL (zero) */
    kb_timing timing;
    kb_ends ends;
    /* (n_tracks, n_keys, dim) incoming and outgoing tangents per time, given
     * (Hermite keys): both or neither; with them TCB and timing go unused
     * and ends must be natural (the end keys' tangents are given too) */
    const double *given_in, *given_out;
} kb_tcb_keys;

/*
 * Checks every input of kb_tcb_build once: counts (KB_EBADSHAPE where the
 * arrays' sizes would overflow ptrdiff_t), option codes, finite and
 * strictly increasing times spaced at least DBL_MIN apart, finite values
 * and parameters, ease in [0, 1],
 * and for closed splines that key K-1 repeats key 0 (value within 1e-9 of
 * the track's largest magnitude; parameters within 1e-9); given tangents
 * both or neither (KB_EBADSHAPE), with natural ends (KB_EBADOPTION), and
 * finite (KB_ENONFINITE, KB_ARG_TANGENTS, index the key).
 */
kb_status kb_tcb_validate(const kb_tcb_keys *keys, kb_error *err);

/*
 * Builds a batch of KB splines.  S = kb_num_segments(ends, n_keys).
 *   @param[in]  keys
 *   @param[out] tan_in    (n_tracks, n_keys, dim) incoming tangents, per time
 *   @param[out] tan_out   (n_tracks, n_keys, dim) outgoing tangents, per time
 *                         (NaN at the two phantom keys, which have none);
 *                         both NULL to skip them (they are then kept per
 *                         track in the workspace)
 *   @param[out] coef      (n_tracks, S, 4, dim): segment n is
 *                         c0 + c1 u + c2 u^2 + c3 u^3, u in [0, 1]
 *   @param[out] ease      (n_tracks, S, 2): (ease_from of the segment's first
 *                         key, ease_to of its last), or NULL to skip
 *   @param[out] err       filled when the result is not KB_OK
 * Validates first; writes nothing unless the keys are valid, except that
 * keys whose coefficients overflow (finite but near the largest double)
 * are found while building: KB_ERANGE, argument values, index the key,
 * with the outputs partly written.  Allocates one workspace of
 * (n_keys - 1)(dim + 1) doubles, and 2 n_keys dim more without tan_in.
 */
kb_status kb_tcb_build(const kb_tcb_keys *keys, double *tan_in, double *tan_out,
                       double *coef, double *ease, kb_error *err);

/* The most threads a *_threaded call uses; a larger n_threads counts as this. */
#define KB_MAX_THREADS 256

/* Joins the worker threads that *_threaded calls start on first use and
 * keep; the next such call starts them again.  Optional: for leak checkers
 * and programs that unload the library.  Must not run beside a call. */
void kb_threads_shutdown(void);

/* kb_tcb_build split over up to n_threads threads for large batches (the
 * outputs and any error are those of kb_tcb_build). */
kb_status kb_tcb_build_threaded(const kb_tcb_keys *keys, double *tan_in, double *tan_out,
                                double *coef, double *ease, int n_threads, kb_error *err);

/*
 * Tangents at one key from the chords on its two sides (the building block
 * shared by positions and, on the logs, rotations).
 *   @param[in] d_im1, d_i  (dim,) chord into the key and chord out of it
 *   @param[in] dt_im1, dt_i  durations of those two segments (> 0)
 *   @param[out] tan_in, tan_out  (dim,) per-time tangents
 */
void kb_key_tangents(kb_timing timing, double tension, double continuity,
                     double bias, const double *d_im1, double dt_im1,
                     const double *d_i, double dt_i, ptrdiff_t dim,
                     double *tan_in, double *tan_out);

/*
 * Key times from the keys: t(0) = 0, t(n) = t(n-1) + |x(n) - x(n-1)|^alpha
 * (alpha 0.5 centripetal, 1 chordal, 0 uniform).
 *   @param[in]  values     (n_tracks, n_keys, dim), finite
 *   @param[out] times_out  (n_tracks, n_keys)
 * KB_ENOTSORTED (argument values, index n) where alpha > 0 and key n
 * repeats key n-1, since the two would share a time; KB_ERANGE where key n
 * is so far from key n-1 that a time overflows, or so near that its time
 * is less than DBL_MIN after the one before.
 */
kb_status kb_alpha_times(ptrdiff_t n_tracks, ptrdiff_t n_keys, ptrdiff_t dim,
                         const double *values, double alpha, double *times_out,
                         kb_error *err);

/* Seed 002's Ease(u, a, b) with its first and second derivatives in u.
 * Robust where the seed divides by zero (b == 0 at u == 1). */
void kb_ease(double u, double a, double b, double *e, double *de, double *dde);

/* The pieces Ease(u, a, b) really uses: a + b scaled down to 1 when
 * larger, and an ease below 1e-9 taken as 0.  Ease changes piece at a and
 * at 1 - b. */
void kb_ease_pieces(double *a, double *b);

/* ------------------------------------------------------------------ */
/* Evaluation.                                                          */
/* ------------------------------------------------------------------ */

/* A built batch of piecewise cubics, ready to evaluate. */
typedef struct {
    ptrdiff_t n_tracks, n_seg, dim;
    const double *knots;   /* (n_tracks | 1, n_seg + 1), strictly increasing */
    ptrdiff_t knots_stride;/* 0 (shared) or n_seg + 1 */
    const double *coef;    /* (n_tracks, n_seg, 4, dim) */
    const double *ease;    /* (n_tracks, n_seg, 2) or NULL (no ease) */
    kb_extrap extrap;
} kb_curve;

/* Checks the curve and the queries: finite t, and under KB_EXTRAP_ERROR
 * every t within the domain (a t beyond it by at most 1e-12 of its span
 * counts as inside).  t is (n_tracks | 1, n_eval) with t_stride 0 or n_eval. */
kb_status kb_curve_validate(const kb_curve *curve, int nu, const double *t,
                            ptrdiff_t n_eval, ptrdiff_t t_stride, kb_error *err);

/*
 * Evaluates the nu-th time derivative (0, 1 or 2) for tracks
 * [track_begin, track_end).  Validates first; writes nothing on error.
 *   @param[in]  t      (n_tracks | 1, n_eval) query times, t_stride 0 or n_eval,
 *                      sorted or not
 *   @param[out] out64  (n_tracks, n_eval, dim) float64, or NULL
 *   @param[out] out32  (n_tracks, n_eval, dim) float32, or NULL (exactly one
 *                      of out64 / out32 is given)
 * Allocates nothing but, with shared knots and times, one workspace of
 * about 90 KB per call (per thread), and where queries outnumber segments
 * twice over, a grid of 2 n_seg indices that guesses each query's segment;
 * if either cannot be had, the same results are computed without it, more
 * slowly.
 */
kb_status kb_curve_eval(const kb_curve *curve, int nu, const double *t,
                        ptrdiff_t n_eval, ptrdiff_t t_stride,
                        ptrdiff_t track_begin, ptrdiff_t track_end,
                        double *out64, float *out32, kb_error *err);

/* kb_curve_eval over all tracks, split over up to n_threads threads when
 * the call is large enough to gain from it (outputs identical either way). */
kb_status kb_curve_eval_threaded(const kb_curve *curve, int nu, const double *t,
                                 ptrdiff_t n_eval, ptrdiff_t t_stride, int n_threads,
                                 double *out64, float *out32, kb_error *err);

/* ------------------------------------------------------------------ */
/* Integrals of speed: arc length and swept angle.                      */
/* ------------------------------------------------------------------ */

/*
 * A table of the integral of a batch's speed along each track: every
 * segment is cut into panels on which 10-point Gauss-Legendre agrees with
 * its two halves to 1e-13 of the segment's total (at least four panels a
 * segment, split where ease changes piece, refined where the speed has a
 * kink).  Building is linear in the number of segments; a query finds its
 * panel by binary search and costs one 10-point rule per evaluation.
 *   seg_start  (n_tracks * n_seg + 1): the first panel of each segment
 *   panels     (n_panels, 4): u0, u1 (segment parameter), s0, s1 (the
 *              integral from the track's domain start to u0 and to u1)
 * Tables built by the core own their arrays: free them with kb_table_free.
 */
typedef struct {
    ptrdiff_t n_tracks, n_seg, n_panels;
    ptrdiff_t *seg_start;
    double *panels;
} kb_table;

void kb_table_free(kb_table *table);

/*
 * Arc length of a position curve.  kb_pos_length: out (n_tracks, n_eval),
 * the length from the domain start to each t.  kb_pos_time_at_length: the
 * time at which the length reaches each s: bracketed Newton inside one
 * panel, falling back to bisection, so it never diverges; the domain's ends
 * at s = 0 and s = total; where the curve rests, the earliest time.  t and
 * s outside the domain / [0, total] follow the curve's extrapolation
 * (clamp holds, linear grows at the end speed, periodic adds whole turns).
 */
kb_status kb_pos_length_table(const kb_curve *curve, kb_table *table, kb_error *err);
kb_status kb_pos_length(const kb_curve *curve, const kb_table *table, const double *t,
                        ptrdiff_t n_eval, ptrdiff_t t_stride, ptrdiff_t track_begin,
                        ptrdiff_t track_end, double *out, kb_error *err);
kb_status kb_pos_time_at_length(const kb_curve *curve, const kb_table *table,
                                const double *s, ptrdiff_t n_eval, ptrdiff_t s_stride,
                                ptrdiff_t track_begin, ptrdiff_t track_end, double *out,
                                kb_error *err);

/* ------------------------------------------------------------------ */
/* Rotations: squad with Kochanek-Bartels tangents on the logs.         */
/*                                                                      */
/* IMPORTANT: quaternions are (w, x, y, z), scalar first, inside the    */
/* core; kb_rot_eval can write (x, y, z, w).  Hamilton product; a unit   */
/* q rotates v as q v q*.  Angular velocity w: dq/dt = w q / 2 (world)   */
/* or q w / 2 (body), in radians per unit time.                         */
/* ------------------------------------------------------------------ */

typedef struct {
    ptrdiff_t n_tracks, n_keys;
    kb_param times;            /* (n_tracks | 1, n_keys), strictly increasing */
    const double *quats;       /* (n_tracks, n_keys, 4), any nonzero norm */
    kb_param tension, continuity, bias;   /* (n_tracks | 1, n_keys) */
    kb_param ease_from, ease_to;          /* (n_tracks | 1, n_keys), in [0, 1] */
    kb_param start_omega, end_omega;      /* (n_tracks | 1, 3) world angular velocity
                                             for clamped ends; data may be NULL (zero) */
    kb_timing timing;
    kb_ends ends;
    const double *chords;      /* (n_tracks, n_keys - 1, 3) or NULL: multi-turn keys.  The
                                  logs L_n of the segments, never reduced modulo a turn
                                  (|L_n| is half the angle turned); the keys must then be
                                  q_(n+1) = q_n exp(L_n), and are not sign-aligned */
    const double *given_in, *given_out;  /* (n_tracks, n_keys, 3) log-space tangents per
                                            time, or NULL: as kb_tcb_keys' */
} kb_rot_keys;

/* Checks the keys of kb_rot_build: as kb_tcb_validate, with quaternions
 * finite and of nonzero norm, and for closed splines key K-1 the same
 * rotation as key 0 (|dot| of the unit keys >= 1 - 1e-9). */
kb_status kb_rot_validate(const kb_rot_keys *keys, kb_error *err);

/* How a rotation segment is interpolated (kb_rot_curve.kind). */
enum {
    KB_SEG_SQUAD = 0,      /* squad(q_n, a_n, b_(n+1), q_(n+1)) */
    KB_SEG_CUMULATIVE = 1  /* the cumulative cubic of Kim, Kim & Shin (1995), on a spin */
};

/*
 * Builds rotation segments.  Keys are normalised and sign-aligned (each key
 * on the side of its predecessor), L_n = log(q_n* q_(n+1)) are the chords
 * (or, for multi-turn keys, the given chords), tangents come from
 * kb_key_tangents on them (with timing 3ds, on 3D Studio's CompAB chords:
 * a key turned by 2 pi - 1e-5 or more contributes pi/2 along its axis, a
 * shorter one its chord reduced to the shorter arc), and
 * a_n = q_n exp((T0_n - L_n) / 2), b_(n+1) = q_(n+1) exp((L_n - T1_(n+1)) / 2).
 * A segment is squad where a bound on squad's angular speed proves it within
 * 2 max(|w(t_n+)|, |w(t_(n+1)-)|) + 2 pi / dt; elsewhere (large tangents,
 * where squad's inner curves come near antipodal and it would spike) it is
 * the cumulative cubic q_n exp(B1 w1) exp(B2 w2) exp(B3 w3), which has the
 * same ends and end angular velocities (w1 = T0_n dt / 3, w3 = T1_(n+1) dt / 3)
 * and always keeps that bound.  A segment of more than half a turn
 * (|L_n| > pi / 2, multi-turn keys only) is the same cubic on a uniform spin,
 * q_n exp(u L_n) exp(B1 w1) exp(B2 w2) exp(B3 w3) with w1 = (T0 - L_n) / 3,
 * w3 = (T1 - L_n) / 3, so it sweeps the whole angle.
 *   @param[out] tan_in, tan_out  (n_tracks, n_keys, 3) log-space tangents per time
 *   @param[out] seg    (n_tracks, S, KB_ROT_SEG): what evaluation reads, one
 *                      record per segment: squad: (q_n, a_n, L_n,
 *                      log(a_n* b_(n+1)), 0, 0); cumulative: (q_n, spin, w1,
 *                      w2, w3), spin L_n or 0
 *   @param[out] ctrl   (n_tracks, S, 4, 4) or NULL: the control points, squad:
 *                      (q_n, a_n, b_(n+1), q_(n+1)); cumulative: (q_n,
 *                      q_n exp(w1), q_(n+1) exp(-w3), q_(n+1))
 *   @param[out] kind   (n_tracks, S): KB_SEG_SQUAD or KB_SEG_CUMULATIVE
 *   @param[out] ease   (n_tracks, S, 2) or NULL
 * Validates first; tangents too large to compute with (TCB or keys so
 * extreme that a segment's record overflows) are found while building:
 * KB_ERANGE, argument values, index the segment's first key, with the
 * outputs partly written.  Allocates one workspace of 7 n_keys doubles.
 */
kb_status kb_rot_build(const kb_rot_keys *keys, double *tan_in, double *tan_out,
                       double *seg, double *ctrl, unsigned char *kind, double *ease,
                       kb_error *err);

/* kb_rot_build split over up to n_threads threads for large batches (see
 * kb_tcb_build_threaded). */
kb_status kb_rot_build_threaded(const kb_rot_keys *keys, double *tan_in, double *tan_out,
                                double *seg, double *ctrl, unsigned char *kind, double *ease,
                                int n_threads, kb_error *err);

/* Doubles per segment record (kb_rot_build's seg): 128 bytes, what a
 * rotation spline keeps per segment besides its knots and kinds. */
#define KB_ROT_SEG 16

typedef struct {
    ptrdiff_t n_tracks, n_seg;
    const double *knots;    /* (n_tracks | 1, n_seg + 1) */
    ptrdiff_t knots_stride; /* 0 or n_seg + 1 */
    const double *seg;      /* (n_tracks, n_seg, KB_ROT_SEG), see kb_rot_build */
    const double *ease;     /* (n_tracks, n_seg, 2) or NULL */
    kb_extrap extrap;
    const unsigned char *kind; /* (n_tracks, n_seg), or NULL: every segment squad */
} kb_rot_curve;

/*
 * nu = 0: unit quaternions, out (n_tracks, n_eval, 4), (w, x, y, z) or with
 * scalar_first = 0 (x, y, z, w); nu = 1: angular velocity, nu = 2: angular
 * acceleration, out (n_tracks, n_eval, 3), in the world frame or with
 * body = 1 the body frame.  Derivatives are analytic (jets through squad).
 * Linear extrapolation rotates on at the end angular velocity.  Tracks
 * [track_begin, track_end); validates first; never allocates.
 */
kb_status kb_rot_eval(const kb_rot_curve *curve, int nu, int body, int scalar_first,
                      const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                      ptrdiff_t track_begin, ptrdiff_t track_end, double *out64,
                      float *out32, kb_error *err);

/* kb_rot_eval over all tracks on up to n_threads threads (see
 * kb_curve_eval_threaded). */
kb_status kb_rot_eval_threaded(const kb_rot_curve *curve, int nu, int body, int scalar_first,
                               const double *t, ptrdiff_t n_eval, ptrdiff_t t_stride,
                               int n_threads, double *out64, float *out32, kb_error *err);

/*
 * Constant angular speed: the angle swept from the domain start is the
 * integral of |w| dt, tabulated once (kb_rot_angle_table, see kb_table);
 * kb_rot_angle gives it at times t, kb_rot_time_at_angle the time at which
 * it reaches s.  Both as kb_pos_length / kb_pos_time_at_length below.
 */
kb_status kb_rot_angle_table(const kb_rot_curve *curve, kb_table *table, kb_error *err);
kb_status kb_rot_angle(const kb_rot_curve *curve, const kb_table *table, const double *t,
                       ptrdiff_t n_eval, ptrdiff_t t_stride, ptrdiff_t track_begin,
                       ptrdiff_t track_end, double *out, kb_error *err);
kb_status kb_rot_time_at_angle(const kb_rot_curve *curve, const kb_table *table,
                               const double *s, ptrdiff_t n_eval, ptrdiff_t s_stride,
                               ptrdiff_t track_begin, ptrdiff_t track_end, double *out,
                               kb_error *err);

/* ------------------------------------------------------------------ */
/* Quaternion utilities, over n elements of C-contiguous arrays:       */
/* quaternions (n, 4) as (w, x, y, z), vectors (n, 3), matrices        */
/* (n, 3, 3), scalars (n,).  Functions that take rotations normalise    */
/* them, giving the same result at any finite scale (subnormal to      */
/* 1e308).  A non-finite input (KB_ENONFINITE), a zero-norm rotation    */
/* (KB_EZERONORM) or a result too large for a double (KB_ERANGE) is an  */
/* error whose err->track names the operand (0 for the first argument,  */
/* 1 the second, ...) and err->index the element.  An output may be the */
/* very array of an input of the same width (in place); it must not     */
/* overlap an input or another output in any other way.                 */
/* ------------------------------------------------------------------ */

kb_status kb_quat_multiply(ptrdiff_t n, const double *a, const double *b, double *out,
                           kb_error *err);
kb_status kb_quat_conjugate(ptrdiff_t n, const double *q, double *out, kb_error *err);
/* Full quaternion log (ln|q|, theta n) with theta in [0, pi]; exp inverts it.
 * A negative real q = -s has log (ln s, pi, 0, 0). */
kb_status kb_quat_log(ptrdiff_t n, const double *q, double *out, kb_error *err);
/* KB_ERANGE where e^w or the vector part's norm overflows. */
kb_status kb_quat_exp(ptrdiff_t n, const double *q, double *out, kb_error *err);
/* Slerp along the shorter arc (q is negated when p . q < 0); KB_ERANGE
 * (operand 2) where u times the angle overflows (|u| > 5e307). */
kb_status kb_quat_slerp(ptrdiff_t n, const double *p, const double *q, const double *u,
                        double *out, kb_error *err);
/* slerp(2u(1-u), slerp(u, p, q), slerp(u, a, b)), no slerp taking a shorter arc;
 * KB_ERANGE (operand 4) where 2u(1-u) times an angle overflows (|u| > 9e153). */
kb_status kb_quat_squad(ptrdiff_t n, const double *p, const double *a, const double *b,
                        const double *q, const double *u, double *out, kb_error *err);
kb_status kb_quat_from_axis_angle(ptrdiff_t n, const double *axis, const double *angle,
                                  double *out, kb_error *err);
/* angle in [0, pi]; the identity has axis (1, 0, 0). */
kb_status kb_quat_to_axis_angle(ptrdiff_t n, const double *q, double *axis, double *angle,
                                kb_error *err);
kb_status kb_quat_to_matrix(ptrdiff_t n, const double *q, double *out, kb_error *err);
/* KB_ERANGE where a matrix is not a rotation (orthonormal to 1e-6, det > 0);
 * the result has w >= 0. */
kb_status kb_quat_from_matrix(ptrdiff_t n, const double *matrix, double *out, kb_error *err);
/* Euler angles (n, 3) about axes[0], axes[1], axes[2] (0 = x, 1 = y, 2 = z),
 * extrinsic (fixed axes) or intrinsic (moving axes), radians. */
kb_status kb_quat_from_euler(ptrdiff_t n, const double *angles, const int *axes,
                             int extrinsic, double *out, kb_error *err);
/* Angles in [-pi, pi] (the middle one in [0, pi] or [-pi/2, pi/2]); at
 * gimbal lock the last extrinsic angle is 0. */
kb_status kb_quat_to_euler(ptrdiff_t n, const double *q, const int *axes, int extrinsic,
                           double *out, kb_error *err);

/* ------------------------------------------------------------------ */
/* Linear playback check (the exporters' adaptive keys).  samples is    */
/* (n, m, width): each of n intervals sampled at fractions u (m >= 3,   */
/* u[0] = 0, u[m-1] = 1); its first and last samples, rounded to        */
/* float32 as glTF and USD store them, are the keys that playback joins */
/* by slerp on the shorter arc (rotation != 0: width 4, (w, x, y, z),   */
/* normalised) or by lerp (any width).  The error at a sample is a      */
/* vector e_j: the rotation vector of conj(playback) * sample, or       */
/* playback - sample.  Writes per interval the largest |e_j|, the       */
/* largest |e_(j-1) - 2 e_j + e_(j+1)|, and for rotations the sum of    */
/* the angles between neighbouring samples (swept; 0 for vectors).  A  */
/* non-finite sample gives NaN there.                                   */
/* ------------------------------------------------------------------ */

kb_status kb_playback_check(ptrdiff_t n, ptrdiff_t m, ptrdiff_t width, int rotation,
                            const double *samples, const double *u, double *err_max,
                            double *bend_max, double *swept, kb_error *err);

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
 * kb_reduce_fit checks them.  Allocates about 50 n_frames doubles.
 */
kb_status kb_reduce_sweep(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                          double *rotation_rows, double *translation_rows, kb_error *err);

/*
 * The drops of one joint's keys that failed, kept from one kb_reduce_drop
 * call to the next on the same joint's frames (and read within a call,
 * where a key comes up again between the same keys).  Per frame f, where
 * dropping key f last failed: needed (n_frames, 2), its worst score then
 * times that call's angle and distance tolerances (the least tolerances,
 * scaled alike, it could have held under; 0 for both where no drop of f
 * failed), and around (n_frames, 4), the two keys on each side of it then
 * (-1 past an end); least (n_frames, 2), the least angle and distance
 * tolerances it could hold under, each alone (0 for both where unknown),
 * and context (n_frames), a hash of the keys and TCB its refit started
 * from (nearly all the refit hangs on: see DROP_HOPELESS in kb_reduce.c).
 * Start with needed all zero.
 */
typedef struct {
    double *needed;
    ptrdiff_t *around;
    double *least;
    ptrdiff_t *context;
} kb_drop_memory;

/*
 * Fewer keys from fitted ones (keys, *n_keys in, capacity n_frames; their
 * TCB in the first *n_keys rows of rotation_tcb and translation_tcb, each
 * in [-1, 1], the translation's read only where distance_tolerance is
 * finite): drops keys a few apart at once, refits the TCB of the keys near
 * each, and keeps each drop whose frames nearby all stay within tolerance
 * (a failed one restores its key and its neighbours' TCB, so those frames
 * are as they were), for every phase of the spacing in turn.  With memory
 * (NULL: a memory of this call alone), a key is not tried where its drop
 * failed before between the same four keys and needed tolerances that
 * this call's are too tight for, to a margin (the largest ratio of this
 * call's tolerances to those it needed, over the channels of finite
 * tolerance, is below 2/3; an infinite one adds nothing), nor where it
 * failed from the same keys and TCB (context) under tolerances below the
 * least it could hold under, and the
 * drops that fail are recorded there.  Whatever the memory holds, the result
 * keeps every frame within tolerance: at worst it keeps keys that could
 * have gone.  Writes the keys, their count, TCB and the final angle and
 * distance at every frame as kb_reduce_fit does (or neither).  Allocates
 * about 206 n_frames doubles (254 with tangent keys).
 */
kb_status kb_reduce_drop(const kb_reduce_joint *joint, ptrdiff_t *keys, ptrdiff_t *n_keys,
                         double *rotation_tcb, double *translation_tcb, double *angle,
                         double *distance, kb_drop_memory *memory, kb_error *err);

/*
 * The pieces of a joint's new tangent keys (new_keys, n_new; rows: the
 * rotation's and the translation's (n_new, 3)) whose frames all have
 * frame_worst (n_frames, squared world errors under the new keys) at most
 * limit squared (none where limit is negative or NaN), the old keys
 * (which held) elsewhere: keys both share with
 * the same rows cut the frames into pieces, and a segment of tangent keys
 * hangs on its two keys alone, so each piece's curves are wholly the old
 * or the new ones (reduce_keys' world search keeps the pieces of a
 * joint's drops that hold).  Writes keys (n_frames capacity) and rows,
 * *n_keys 0 where no piece that differs holds.  With memory (NULL to
 * skip), each old key the new ones dropped in a piece that failed, where a
 * frame from two keys before it to two after is past the limit, is
 * recorded as a drop that fails between the same keys (needed infinite),
 * so that kb_reduce_drop does not try it again there.  Keys ascending in
 * [0, n_frames), at least two each.
 */
kb_status kb_reduce_merge(ptrdiff_t n_frames, const ptrdiff_t *old_keys, ptrdiff_t n_old,
                          const double *const old_rows[2], const ptrdiff_t *new_keys,
                          ptrdiff_t n_new, const double *const new_rows[2],
                          const double *frame_worst, double limit, ptrdiff_t *keys,
                          ptrdiff_t *n_keys, double *const rows[2], kb_drop_memory *memory,
                          kb_error *err);

/* ------------------------------------------------------------------ */
/* Forward kinematics (kbspline.motion's world-space error).          */
/* ------------------------------------------------------------------ */

/*
 * One joint in the world at n_frames frames: its rotation matrices
 * world_rot (n_frames, 9; row-major, acting on column vectors) = parent_rot
 * R(rotation) and its origin (n_frames, 3) = parent_origin + parent_rot
 * offset, from its local rotations (n_frames, 4; (w, x, y, z), normalised
 * here, a zero or non-finite one refused; the other arrays are not
 * checked, and a NaN in them makes *max_error NaN) and offsets (n_frames,
 * 3, or one (3,) for every frame when offset_stride is 0, else 3); a root
 * passes NULL for both parent arrays.  Its points,
 * the origin then each of sites (n_sites, 3) carried by its frame, go to
 * points (n_frames, 1 + n_sites, 3) unless NULL; with truth (the same
 * shape; NULL to skip) their largest distance from it goes to *max_error.
 * With truth, it stops at the first point farther than limit from it (a
 * check that fails needs no more; with an infinite or NaN limit, only at a
 * NaN; with a negative one, at the first point): *max_error is then that
 * point's distance, above limit (or NaN), and the outputs are unfinished.
 * frame_worst (n_frames; NULL to skip; only with truth) takes each frame's
 * largest squared distance where it is larger (or NaN; a NaN there stays,
 * from any point of the frame or an earlier call) up to where it stops,
 * so that calls for the joints below one fold in the frames where they
 * stray (reduce_keys keeps the pieces of a joint's new keys that do not;
 * it passes no limit).
 */
kb_status kb_joint_world(ptrdiff_t n_frames, const double *parent_rot,
                         const double *parent_origin, const double *rotations,
                         const double *offsets, ptrdiff_t offset_stride, ptrdiff_t n_sites,
                         const double *sites, const double *truth, double limit,
                         double *world_rot, double *origin, double *points, double *max_error,
                         double *frame_worst, kb_error *err);

/*
 * Each joint's reach: reach[j], the farthest any point it carries (its own
 * and those of every joint below it) gets from its origin in any frame
 * (the largest distance's root of the largest square; NaN where a point
 * is NaN).  points: every joint's points in joint order, joint j's
 * (n_frames, 1 + n_sites[j], 3), its origin first, as kb_joint_world
 * writes them; parents[j] in [-1, j).  The first-order split of a
 * world-space tolerance divides a joint's share by it (reduce_keys).
 */
kb_status kb_joint_reach(ptrdiff_t n_joints, ptrdiff_t n_frames, const ptrdiff_t *parents,
                         const ptrdiff_t *n_sites, const double *points, double *reach,
                         kb_error *err);

/*
 * A clip's joints and the points they carry, for kb_world_trial: parents
 * (n_joints; each in [-1, j), parents before children), n_sites
 * (n_joints), sites (sum of n_sites, 3) and truth (each joint's
 * (n_frames, 1 + n_sites, 3), origin first, joint after joint) as in
 * kb_world_clip.
 */
typedef struct {
    ptrdiff_t n_joints, n_frames;   /* >= 1 each */
    const ptrdiff_t *parents;
    const ptrdiff_t *n_sites;
    const double *sites;
    const double *truth;
} kb_world_points;

/*
 * Every joint of a clip placed in the world under some curves, frame by
 * frame: from its rotations (n_joints, n_frames, 4) and offsets (n_joints,
 * n_frames, 3: its translations, or where they do not place it its OFFSET
 * at every frame), its world_rot (n_joints, n_frames, 9) and origin
 * (n_joints, n_frames, 3) as kb_joint_world gives them, frame_error
 * (n_joints, n_frames) each frame's largest squared distance of its points
 * from the truth (kb_joint_world's frame_worst from zeros) and error
 * (n_joints) the largest distance over every frame.
 */
typedef struct {
    double *rotations, *offsets, *world_rot, *origin, *frame_error, *error;
} kb_world_placed;

/*
 * New curves for joint j, checked against those `held` places (read only)
 * at only the frames where they differ: a frame's places hang on the
 * curves at that frame alone, so the other frames keep held's.  Its new
 * rotations (n_frames, 4) and offsets (n_frames, 3; NULL: held's, as for
 * a joint its OFFSET places) are placed again in the blocks of four frames
 * (from frame 0) where a row differs from held's, bit for bit (placing a
 * frame again gives the same bits, and whole blocks run four frames at a
 * time): runs takes those frames as [first, end) pairs (capacity
 * n_frames + 1), *n_runs of them.  There j's new rows and the places of j
 * and every joint below it go to `trial` (nothing else of it written),
 * each such joint's error to trial->error, and *worst is every joint's
 * largest error: bit for bit those of placing every frame again
 * (kb_joint_world), where no point is NaN.  Past limit (an infinite or NaN
 * one: none) a joint stops the trial (as kb_joint_world), *worst then an
 * error past it (or NaN) and trial unfinished.  With frame_worst
 * (n_frames; NULL to skip) there is no stop, and at every frame, in joint
 * order, each moved joint's squared error there (trial's in the runs,
 * held's elsewhere) is written in where larger (or NaN), as
 * kb_joint_world's frame_worst: the frames where the new curves stray.
 * kb_world_accept then installs a trial in held.
 */
kb_status kb_world_trial(const kb_world_points *points, const kb_world_placed *held,
                         ptrdiff_t j, const double *rotations, const double *offsets,
                         double limit, kb_world_placed *trial, ptrdiff_t *runs,
                         ptrdiff_t *n_runs, double *worst, double *frame_worst, kb_error *err);

/*
 * Installs in held what kb_world_trial of joint j left in trial at its
 * runs (n_runs [first, end) pairs): j's rows, and the places and errors of
 * j and every joint below it.  A trial that stopped must not be installed.
 */
kb_status kb_world_accept(const kb_world_points *points, ptrdiff_t j,
                          const kb_world_placed *trial, const ptrdiff_t *runs, ptrdiff_t n_runs,
                          kb_world_placed *held, kb_error *err);

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

typedef struct {
    ptrdiff_t *keys;         /* (n_joints, n_frames): joint j's from j * n_frames */
    ptrdiff_t *n_keys;       /* (n_joints,) */
    double *scales;          /* (n_joints,) each joint's final scale */
    double *max_position;    /* (n_joints,) worst distance of the joint's points */
    double *max_angle;       /* (n_joints,) worst local rotation error */
    double *max_distance;    /* (n_joints,) worst local translation error (0 unless moves) */
    ptrdiff_t *order;        /* (n_joints, n_frames - 2) each joint's greedy order so far */
    double *order_score;     /* (n_joints, n_frames - 2) and each one's score when keyed */
    ptrdiff_t *n_order;      /* (n_joints,) */
    double *floor;           /* (n_joints,) the least scale each order was run to (+inf) */
    double good_scale;       /* the largest scale whose keys passed */
    double best_scale;       /* the scale of the fewest keys that passed; 0 where none did */
} kb_world_keys;

/*
 * The world-space search: every joint's greedy keys at its tolerances
 * times one scale, the scale tried from first_scale, halved until a pass
 * keeps every point within position_tolerance (forward kinematics of every
 * frame), then doubled until one fails and bisected (geometric mean),
 * search_passes passes in all; the pass of fewest keys (the later of a
 * tie) is kept.  Then for each of factors in turn, every joint with more
 * than two keys, most keys first, has its own scale loosened by it, its
 * fewer keys kept where every point stays within the tolerance (only it
 * and the joints below it moved again).  The greedy keys at a scale s are
 * a prefix of each joint's greedy order (kb_reduce_greedy_order, carried
 * on below its floor), or where s times a tolerance passes its cap,
 * kb_reduce_greedy's under the capped tolerances; with n_threads > 1,
 * a pass first carries on, on that many threads, every joint's order it
 * reads below its floor (the same orders, bit for bit).  Writes every
 * output; where no pass held (best_scale 0), no keys (n_keys 0), scales 0
 * and NaN errors.
 * progress (NULL: none) is called after each pass with the passes so far.
 * KB_EBADSHAPE for counts or parents out of range (track: the joint),
 * KB_ERANGE for a position_tolerance that is negative or not finite, a
 * first_scale that is not positive and finite, or a tolerance or cap that
 * is not positive (NaN included; track: the joint).  Allocates about 40
 * n_frames doubles and 5 n_frames indices a joint, besides what each call
 * of kb_reduce_greedy_order (one per thread at once) and
 * kb_reduce_rebuild_from allocates.
 */
kb_status kb_reduce_world_greedy(const kb_world_clip *clip, double position_tolerance,
                                 double first_scale, int search_passes,
                                 const double *factors, int n_factors,
                                 kb_progress_fn progress, void *progress_ctx, int n_threads,
                                 kb_world_keys *out, kb_error *err);

/* ------------------------------------------------------------------ */
/* The world-space search with tangent keys (reduce_keys with          */
/* position_tolerance and fit=True; see kbspline.motion.reduce).       */
/* ------------------------------------------------------------------ */

typedef struct {
    ptrdiff_t *keys;          /* (n_joints, n_frames): joint j's from j * n_frames */
    ptrdiff_t *n_keys;        /* (n_joints,) */
    double *rotation_rows;    /* (n_joints, n_frames, 3) each key's rotation tangent */
    double *translation_rows; /* (n_joints, n_frames, 3) and translation tangent */
    double *max_position;     /* (n_joints,) worst distance of the joint's points */
    double *max_angle;        /* (n_joints,) worst local rotation error */
    double *max_distance;     /* (n_joints,) worst local translation error (0 unless moves) */
    double scale;             /* the scale of the pass that held; 0 where none did */
} kb_swept_keys;

/*
 * The world-space search with tangent keys: every joint's swept keys
 * (kb_reduce_sweep) at its tolerances times scales[0], then scales[1]...
 * until a pass keeps every point of every frame within position_tolerance
 * (forward kinematics, each joint's curves rebuilt from those it built
 * last); then for each of factors in turn, and last once more at no
 * factor, every joint with more than two keys, most keys first (ties:
 * joint order), has its keys dropped under its own scale times the factor
 * (kb_reduce_drop, with a memory per joint kept through the search), and
 * its fewer keys are kept where every point stays within the tolerance
 * (only it and the joints below it placed again: kb_world_trial), else
 * the pieces of them that hold (kb_reduce_merge) where those are fewer
 * and hold; a joint whose keys are kept has its scale times the factor.
 * With n_threads > 1, a pass's sweeps and a round's drops run on that
 * many threads, the checks in order after them: the same keys, bit for
 * bit.  progress (NULL: none) is called after pass k with k (k <=
 * n_scales), after the pass that held with n_scales + 1, and after each
 * round with one more.  Writes every output; where no pass held, only
 * scale (0).  KB_EBADSHAPE for counts or parents out of range (track: the
 * joint), KB_ERANGE for a position_tolerance that is negative or not
 * finite, a scale or factor that is not positive and finite, or a
 * tolerance or cap that is not positive (NaN included; track: the joint).
 * Allocates about 75 n_frames doubles and 9 n_frames indices a joint,
 * besides what each sweep, drop and rebuild allocates.
 */
kb_status kb_reduce_world_swept(const kb_world_clip *clip, double position_tolerance,
                                const double *scales, int n_scales, const double *factors,
                                int n_factors, kb_progress_fn progress, void *progress_ctx,
                                int n_threads, kb_swept_keys *out, kb_error *err);

#ifdef __cplusplus
}
#endif
#endif /* KBSPLINE_H */
