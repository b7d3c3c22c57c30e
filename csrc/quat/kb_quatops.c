/* kb_quatops.c -- vectorised quaternion utilities (SPEC section 7).
 * Quaternions are (w, x, y, z); every array is C-contiguous, n elements.
 *
 * Any finite scale: inputs are scaled by a power of two (exact) before
 * anything is squared, so no norm overflows or underflows, from subnormal
 * components to 1e308.  Each element is read whole before its outputs are
 * written, so an output may be the very array of an input (in place). */
#include "kb_internal.h"
#include "quat/kb_quat.h"

#define KB_LN2 0.693147180559945309417232121458176568

static int all_finite(const double *v, int len)
{
    for (int j = 0; j < len; j++)
        if (!isfinite(v[j]))
            return 0;
    return 1;
}

/* v (len components) as 2^e s with the largest |s_j| in [1, 2), or s = v
 * and e = 0 when v is all zeros; returns e. */
static int split_scale(const double *v, int len, double *s)
{
    double big = 0.0;
    for (int j = 0; j < len; j++)
        big = fmax(big, fabs(v[j]));
    const int e = big > 0.0 ? ilogb(big) : 0;
    for (int j = 0; j < len; j++)
        s[j] = scalbn(v[j], -e);
    return e;
}

/* Unit copy u of q and, when log_norm is not NULL, ln|q|; or KB_ENONFINITE /
 * KB_EZERONORM for operand `which`. */
static kb_status unit(const double *q, double *u, double *log_norm, int which, ptrdiff_t i,
                      kb_error *err)
{
    if (!all_finite(q, 4))
        return kb_fail(err, KB_ENONFINITE, KB_ARG_QUATERNIONS, which, i);
    if (!log_norm && kb_quat_direct(q)) {  /* the rescaling below would change no bit */
        const double n = sqrt(kb_qdot(q, q));
        for (int j = 0; j < 4; j++)
            u[j] = q[j] / n;
        return KB_OK;
    }
    const int e = split_scale(q, 4, u);
    const double n = sqrt(kb_qdot(u, u));
    if (n == 0.0)
        return kb_fail(err, KB_EZERONORM, KB_ARG_QUATERNIONS, which, i);
    for (int j = 0; j < 4; j++)
        u[j] /= n;
    if (log_norm)
        *log_norm = log(n) + e * KB_LN2;
    return KB_OK;
}

/* Unit direction of the 3-vector v into axis ((1, 0, 0) for v = 0); returns |v|,
 * inf when it overflows. */
static double direction(const double *v, double *axis)
{
    const int e = split_scale(v, 3, axis);
    const double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (n == 0.0) {
        axis[0] = 1.0;
        axis[1] = axis[2] = 0.0;
        return 0.0;
    }
    for (int j = 0; j < 3; j++)
        axis[j] /= n;
    return scalbn(n, e);
}

/* The product of finite a and b, each scaled to [1, 2) first so that only a
 * product too large for a double overflows (KB_ERANGE). */
kb_status kb_quat_multiply(ptrdiff_t n, const double *a, const double *b, double *out,
                           kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *p = a + 4 * i, *q = b + 4 * i;
        double sp[4], sq[4], r[4];
        if (!all_finite(p, 4))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_QUATERNIONS, 0, i);
        if (!all_finite(q, 4))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_QUATERNIONS, 1, i);
        const int ep = split_scale(p, 4, sp), eq = split_scale(q, 4, sq);
        kb_qmul(sp, sq, r);
        for (int j = 0; j < 4; j++)
            r[j] = scalbn(r[j], ep + eq);
        if (!all_finite(r, 4))
            return kb_fail(err, KB_ERANGE, KB_ARG_QUATERNIONS, 0, i);
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = r[j];
    }
    return kb_ok(err);
}

kb_status kb_quat_conjugate(ptrdiff_t n, const double *q, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        if (!all_finite(q + 4 * i, 4))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_QUATERNIONS, 0, i);
        out[4 * i] = q[4 * i];
        for (int j = 1; j < 4; j++)
            out[4 * i + j] = -q[4 * i + j];
    }
    return kb_ok(err);
}

/* (ln|q|, theta n) with q = |q| (cos theta, sin theta n); a negative real q
 * has theta = pi and n = (1, 0, 0), the axis quat_to_axis_angle gives the
 * identity. */
kb_status kb_quat_log(ptrdiff_t n, const double *q, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double u[4], axis[3], log_norm;
        kb_status s = unit(q + 4 * i, u, &log_norm, 0, i, err);
        if (s != KB_OK)
            return s;
        const double theta = atan2(direction(u + 1, axis), u[0]);
        out[4 * i] = log_norm;
        for (int j = 0; j < 3; j++)
            out[4 * i + 1 + j] = theta * axis[j];
    }
    return kb_ok(err);
}

/* e^w (cos|v|, sin|v| v/|v|); KB_ERANGE where e^w or |v| overflows. */
kb_status kb_quat_exp(ptrdiff_t n, const double *q, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *v = q + 4 * i;
        double axis[3], sin_a, cos_a;
        if (!all_finite(v, 4))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_QUATERNIONS, 0, i);
        const double scale = exp(v[0]), a = direction(v + 1, axis);
        if (isinf(scale) || isinf(a))
            return kb_fail(err, KB_ERANGE, KB_ARG_QUATERNIONS, 0, i);
        kb_sincos(a, &sin_a, &cos_a);
        out[4 * i] = scale * cos_a;
        for (int j = 0; j < 3; j++)
            out[4 * i + 1 + j] = scale * sin_a * axis[j];
    }
    return kb_ok(err);
}

/* p exp(u log(p* q)) as kb_qslerp (no shorter arc; no turn where p* q is
 * real), turning by u theta whole: |u log(p* q)| would overflow at |u| > 1e154. */
static void slerp(double u, const double *p, const double *q, double *out)
{
    double r[4], axis[3], s, c;
    kb_qmul_conj_left(p, q, r);
    const double sin_angle = direction(r + 1, axis);
    kb_sincos(sin_angle > 0.0 ? u * atan2(sin_angle, r[0]) : 0.0, &s, &c);
    const double e[4] = {c, s * axis[0], s * axis[1], s * axis[2]};
    kb_qmul(p, e, out);
}

/* r into out, or KB_ERANGE for the parameter (operand `which`) when u times
 * an angle overflowed. */
static kb_status finite_result(const double *r, int which, ptrdiff_t i, double *out,
                               kb_error *err)
{
    if (!all_finite(r, 4))
        return kb_fail(err, KB_ERANGE, KB_ARG_T, which, i);
    for (int j = 0; j < 4; j++)
        out[j] = r[j];
    return KB_OK;
}

kb_status kb_quat_slerp(ptrdiff_t n, const double *p, const double *q, const double *u,
                        double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double a[4], b[4], r[4];
        kb_status s;
        if ((s = unit(p + 4 * i, a, NULL, 0, i, err)) != KB_OK ||
            (s = unit(q + 4 * i, b, NULL, 1, i, err)) != KB_OK)
            return s;
        if (!isfinite(u[i]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_T, 2, i);
        if (kb_qdot(a, b) < 0.0)  /* the shorter arc */
            for (int j = 0; j < 4; j++)
                b[j] = -b[j];
        slerp(u[i], a, b, r);
        if ((s = finite_result(r, 2, i, out + 4 * i, err)) != KB_OK)
            return s;
    }
    return kb_ok(err);
}

kb_status kb_quat_squad(ptrdiff_t n, const double *p, const double *a, const double *b,
                        const double *q, const double *u, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double c[4][4], s1[4], s2[4], r[4];
        const double *in[4] = {p + 4 * i, a + 4 * i, b + 4 * i, q + 4 * i};
        kb_status s;
        for (int k = 0; k < 4; k++)
            if ((s = unit(in[k], c[k], NULL, k, i, err)) != KB_OK)
                return s;
        if (!isfinite(u[i]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_T, 4, i);
        /* as in the spline: no slerp here takes a shorter arc */
        slerp(u[i], c[0], c[3], s1);
        slerp(u[i], c[1], c[2], s2);
        slerp(2.0 * u[i] * (1.0 - u[i]), s1, s2, r);
        if ((s = finite_result(r, 4, i, out + 4 * i, err)) != KB_OK)
            return s;
    }
    return kb_ok(err);
}

kb_status kb_quat_from_axis_angle(ptrdiff_t n, const double *axis, const double *angle,
                                  double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double ax[3], s, c;
        if (!all_finite(axis + 3 * i, 3))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, 0, i);
        if (!isfinite(angle[i]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, 1, i);
        if (direction(axis + 3 * i, ax) == 0.0)
            return kb_fail(err, KB_EZERONORM, KB_ARG_VALUES, 0, i);
        kb_sincos(0.5 * angle[i], &s, &c);
        out[4 * i] = c;
        for (int j = 0; j < 3; j++)
            out[4 * i + 1 + j] = s * ax[j];
    }
    return kb_ok(err);
}

kb_status kb_quat_to_axis_angle(ptrdiff_t n, const double *q, double *axis, double *angle,
                                kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double u[4], ax[3];
        kb_status s = unit(q + 4 * i, u, NULL, 0, i, err);
        if (s != KB_OK)
            return s;
        if (u[0] < 0.0)  /* angle in [0, pi] */
            for (int j = 0; j < 4; j++)
                u[j] = -u[j];
        angle[i] = 2.0 * atan2(direction(u + 1, ax), u[0]);
        for (int j = 0; j < 3; j++)
            axis[3 * i + j] = ax[j];
    }
    return kb_ok(err);
}

kb_status kb_quat_to_matrix(ptrdiff_t n, const double *q, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double u[4];
        kb_status s = unit(q + 4 * i, u, NULL, 0, i, err);
        if (s != KB_OK)
            return s;
        KB_QUAT_MATRIX(u[0], u[1], u[2], u[3], out + 9 * i);
    }
    return kb_ok(err);
}

/* Shepperd's method: divide by the largest of 4w^2, 4x^2, 4y^2, 4z^2. */
kb_status kb_quat_from_matrix(ptrdiff_t n, const double *matrix, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *m = matrix + 9 * i;
        double e = 0.0, det;
        for (int r = 0; r < 9; r++)
            if (!isfinite(m[r]))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, 0, i);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                double dot = m[r] * m[c] + m[3 + r] * m[3 + c] + m[6 + r] * m[6 + c];
                e = fmax(e, fabs(dot - (r == c)));
            }
        det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
              m[2] * (m[3] * m[7] - m[4] * m[6]);
        if (e > 1e-6 || det <= 0.0)
            return kb_fail(err, KB_ERANGE, KB_ARG_VALUES, 0, i);
        const double tr = m[0] + m[4] + m[8];
        double q[4];
        if (tr >= m[0] && tr >= m[4] && tr >= m[8]) {
            double r = sqrt(1.0 + tr);
            q[0] = 0.5 * r;
            q[1] = (m[7] - m[5]) / (2 * r);
            q[2] = (m[2] - m[6]) / (2 * r);
            q[3] = (m[3] - m[1]) / (2 * r);
        } else if (m[0] >= m[4] && m[0] >= m[8]) {
            double r = sqrt(1.0 + m[0] - m[4] - m[8]);
            q[1] = 0.5 * r;
            q[0] = (m[7] - m[5]) / (2 * r);
            q[2] = (m[1] + m[3]) / (2 * r);
            q[3] = (m[2] + m[6]) / (2 * r);
        } else if (m[4] >= m[8]) {
            double r = sqrt(1.0 - m[0] + m[4] - m[8]);
            q[2] = 0.5 * r;
            q[0] = (m[2] - m[6]) / (2 * r);
            q[1] = (m[1] + m[3]) / (2 * r);
            q[3] = (m[5] + m[7]) / (2 * r);
        } else {
            double r = sqrt(1.0 - m[0] - m[4] + m[8]);
            q[3] = 0.5 * r;
            q[0] = (m[3] - m[1]) / (2 * r);
            q[1] = (m[2] + m[6]) / (2 * r);
            q[2] = (m[5] + m[7]) / (2 * r);
        }
        const double len = sqrt(kb_qdot(q, q)), sign = q[0] < 0.0 ? -1.0 : 1.0;
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = sign * q[j] / len;
    }
    return kb_ok(err);
}

static int valid_axes(const int *axes)
{
    for (int k = 0; k < 3; k++)
        if (axes[k] < 0 || axes[k] > 2)
            return 0;
    return axes[0] != axes[1] && axes[1] != axes[2];
}

/* extrinsic: q = q2(c) q1(b) q0(a); intrinsic: q = q0(a) q1(b) q2(c). */
kb_status kb_quat_from_euler(ptrdiff_t n, const double *angles, const int *axes,
                             int extrinsic, double *out, kb_error *err)
{
    if (!valid_axes(axes))
        return kb_fail(err, KB_EBADOPTION, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t i = 0; i < n; i++) {
        double q[4] = {1, 0, 0, 0};
        for (int k = 0; k < 3; k++) {
            const double a = angles[3 * i + k];
            if (!isfinite(a))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, 0, i);
            double e[4] = {cos(0.5 * a), 0, 0, 0};
            e[1 + axes[k]] = sin(0.5 * a);
            if (extrinsic)
                kb_qmul(e, q, q);
            else
                kb_qmul(q, e, q);
        }
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = q[j];
    }
    return kb_ok(err);
}

static double wrap_pi(double a)
{
    if (a > KB_PI)
        a -= 2 * KB_PI;
    else if (a < -KB_PI)
        a += 2 * KB_PI;
    return a;
}

/*
 * Bernardes & Viollet (2022), "Quaternion to Euler angles conversion: A
 * direct, general and computationally efficient method", for extrinsic
 * sequences; an intrinsic sequence is the reversed extrinsic one with its
 * angles reversed.  At gimbal lock the third extrinsic angle is set to 0.
 */
kb_status kb_quat_to_euler(ptrdiff_t n, const double *q, const int *axes, int extrinsic,
                           double *out, kb_error *err)
{
    if (!valid_axes(axes))
        return kb_fail(err, KB_EBADOPTION, KB_ARG_NONE, -1, -1);
    int i = extrinsic ? axes[0] : axes[2], j = axes[1], k = extrinsic ? axes[2] : axes[0];
    const int symmetric = i == k;
    if (symmetric)
        k = 3 - i - j;
    const double sign = (double)((i - j) * (j - k) * (k - i) / 2);
    for (ptrdiff_t e = 0; e < n; e++) {
        double u[4], th[3];
        kb_status s = unit(q + 4 * e, u, NULL, 0, e, err);
        if (s != KB_OK)
            return s;
        double a = u[0], b = u[1 + i], c = u[1 + j], d = u[1 + k] * sign;
        if (!symmetric) {
            const double a2 = a - c, b2 = b + d, c2 = c + a, d2 = d - b;
            a = a2;
            b = b2;
            c = c2;
            d = d2;
        }
        th[1] = 2.0 * atan2(hypot(c, d), hypot(a, b));
        const double half_sum = atan2(b, a), half_diff = atan2(d, c);
        if (fabs(th[1]) <= 1e-7) {
            th[0] = 2.0 * half_sum;
            th[2] = 0.0;
        } else if (fabs(th[1] - KB_PI) <= 1e-7) {
            th[0] = -2.0 * half_diff;
            th[2] = 0.0;
        } else {
            th[0] = half_sum - half_diff;
            th[2] = half_sum + half_diff;
        }
        if (!symmetric) {
            th[2] *= sign;
            th[1] -= 0.5 * KB_PI;
        }
        double *o = out + 3 * e;
        for (int m = 0; m < 3; m++)
            o[extrinsic ? m : 2 - m] = wrap_pi(th[m]);
    }
    return kb_ok(err);
}
