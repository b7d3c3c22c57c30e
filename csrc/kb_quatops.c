/* kb_quatops.c -- vectorised quaternion utilities (SPEC section 7).
 * Quaternions are (w, x, y, z); every array is C-contiguous, n elements. */
#include "kb_internal.h"
#include "kb_quat.h"

/* Unit copy of q, or KB_EZERONORM / KB_ENONFINITE for operand `which`. */
static kb_status unit(const double *q, double *out, int which, ptrdiff_t i, kb_error *err)
{
    for (int j = 0; j < 4; j++)
        if (!isfinite(q[j]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_QUATERNIONS, which, i);
    const double n = sqrt(kb_qdot(q, q));
    if (n == 0.0)
        return kb_fail(err, KB_EZERONORM, KB_ARG_QUATERNIONS, which, i);
    for (int j = 0; j < 4; j++)
        out[j] = q[j] / n;
    return KB_OK;
}

void kb_quat_multiply(ptrdiff_t n, const double *a, const double *b, double *out)
{
    for (ptrdiff_t i = 0; i < n; i++)
        kb_qmul(a + 4 * i, b + 4 * i, out + 4 * i);
}

void kb_quat_conjugate(ptrdiff_t n, const double *q, double *out)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        out[4 * i] = q[4 * i];
        for (int j = 1; j < 4; j++)
            out[4 * i + j] = -q[4 * i + j];
    }
}

kb_status kb_quat_log(ptrdiff_t n, const double *q, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double u[4];
        kb_status s = unit(q + 4 * i, u, 0, i, err);
        if (s != KB_OK)
            return s;
        out[4 * i] = log(sqrt(kb_qdot(q + 4 * i, q + 4 * i)));
        kb_qlog(u, out + 4 * i + 1);
    }
    return kb_ok(err);
}

void kb_quat_exp(ptrdiff_t n, const double *q, double *out)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *v = q + 4 * i;
        double *o = out + 4 * i;
        const double scale = exp(v[0]);
        kb_qexp(v + 1, o);
        for (int j = 0; j < 4; j++)
            o[j] *= scale;
    }
}

kb_status kb_quat_slerp(ptrdiff_t n, const double *p, const double *q, const double *u,
                        double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double a[4], b[4];
        kb_status s;
        if ((s = unit(p + 4 * i, a, 0, i, err)) != KB_OK ||
            (s = unit(q + 4 * i, b, 1, i, err)) != KB_OK)
            return s;
        if (!isfinite(u[i]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_T, 2, i);
        if (kb_qdot(a, b) < 0.0)  /* the shorter arc */
            for (int j = 0; j < 4; j++)
                b[j] = -b[j];
        kb_qslerp(u[i], a, b, out + 4 * i);
    }
    return kb_ok(err);
}

kb_status kb_quat_squad(ptrdiff_t n, const double *p, const double *a, const double *b,
                        const double *q, const double *u, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double c[4][4], s1[4], s2[4];
        const double *in[4] = {p + 4 * i, a + 4 * i, b + 4 * i, q + 4 * i};
        for (int k = 0; k < 4; k++) {
            kb_status s = unit(in[k], c[k], k, i, err);
            if (s != KB_OK)
                return s;
        }
        if (!isfinite(u[i]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_T, 4, i);
        /* as in the spline: no slerp here takes a shorter arc */
        kb_qslerp(u[i], c[0], c[3], s1);
        kb_qslerp(u[i], c[1], c[2], s2);
        kb_qslerp(2.0 * u[i] * (1.0 - u[i]), s1, s2, out + 4 * i);
    }
    return kb_ok(err);
}

kb_status kb_quat_from_axis_angle(ptrdiff_t n, const double *axis, const double *angle,
                                  double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *ax = axis + 3 * i;
        if (!isfinite(ax[0]) || !isfinite(ax[1]) || !isfinite(ax[2]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, 0, i);
        if (!isfinite(angle[i]))
            return kb_fail(err, KB_ENONFINITE, KB_ARG_VALUES, 1, i);
        const double len = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
        if (len == 0.0)
            return kb_fail(err, KB_EZERONORM, KB_ARG_VALUES, 0, i);
        const double s = sin(0.5 * angle[i]) / len;
        out[4 * i] = cos(0.5 * angle[i]);
        for (int j = 0; j < 3; j++)
            out[4 * i + 1 + j] = s * ax[j];
    }
    return kb_ok(err);
}

kb_status kb_quat_to_axis_angle(ptrdiff_t n, const double *q, double *axis, double *angle,
                                kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double u[4];
        kb_status s = unit(q + 4 * i, u, 0, i, err);
        if (s != KB_OK)
            return s;
        if (u[0] < 0.0)  /* angle in [0, pi] */
            for (int j = 0; j < 4; j++)
                u[j] = -u[j];
        const double len = sqrt(u[1] * u[1] + u[2] * u[2] + u[3] * u[3]);
        angle[i] = 2.0 * atan2(len, u[0]);
        for (int j = 0; j < 3; j++)
            axis[3 * i + j] = len > 0.0 ? u[1 + j] / len : (j == 0 ? 1.0 : 0.0);
    }
    return kb_ok(err);
}

kb_status kb_quat_to_matrix(ptrdiff_t n, const double *q, double *out, kb_error *err)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double u[4];
        kb_status s = unit(q + 4 * i, u, 0, i, err);
        if (s != KB_OK)
            return s;
        const double w = u[0], x = u[1], y = u[2], z = u[3];
        double *m = out + 9 * i;
        m[0] = 1 - 2 * (y * y + z * z);
        m[1] = 2 * (x * y - w * z);
        m[2] = 2 * (x * z + w * y);
        m[3] = 2 * (x * y + w * z);
        m[4] = 1 - 2 * (x * x + z * z);
        m[5] = 2 * (y * z - w * x);
        m[6] = 2 * (x * z - w * y);
        m[7] = 2 * (y * z + w * x);
        m[8] = 1 - 2 * (x * x + y * y);
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
        kb_status s = unit(q + 4 * e, u, 0, e, err);
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
