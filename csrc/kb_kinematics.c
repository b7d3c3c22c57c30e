/*
 * kb_kinematics.c -- forward kinematics of one joint over a clip's frames,
 * and the largest distance of its points from where the clip puts them:
 * the check behind every world-space key reduction (kbspline.motion), run
 * for every joint of every trial, so a hot loop.
 */
#include <math.h>
#include <string.h>

#include "kbspline.h"
#include "kb_internal.h"

/* out = a b for row-major 3x3 matrices. */
static void mat_mul(const double *a, const double *b, double *out)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

/* out = base + m v */
static void mat_apply(const double *m, const double *v, const double *base, double *out)
{
    for (int i = 0; i < 3; i++)
        out[i] = base[i] + (m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2]);
}

kb_status kb_joint_world(ptrdiff_t n_frames, const double *parent_rot,
                         const double *parent_origin, const double *rotations,
                         const double *offsets, ptrdiff_t offset_stride, ptrdiff_t n_sites,
                         const double *sites, const double *truth, double limit,
                         double *world_rot, double *origin, double *points, double *max_error,
                         kb_error *err)
{
    if (n_frames < 1 || n_sites < 0 || (offset_stride != 0 && offset_stride != 3) ||
        !rotations || !offsets || (n_sites && !sites) || !world_rot || !origin ||
        (!parent_rot) != (!parent_origin) || (truth && !max_error))
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    kb_status status = kb_quat_to_matrix(n_frames, rotations, world_rot, err);
    if (status != KB_OK)
        return status;
    const ptrdiff_t per_frame = 3 * (1 + n_sites);
    double worst = 0.0;  /* squared: one square root at the end */
    const double stop = isfinite(limit) ? limit * limit : INFINITY;
    for (ptrdiff_t f = 0; f < n_frames; f++) {
        double *m = world_rot + 9 * f, *o = origin + 3 * f;
        const double *offset = offsets + offset_stride * f;
        if (parent_rot) {
            double turn[9];
            memcpy(turn, m, sizeof turn);
            mat_mul(parent_rot + 9 * f, turn, m);
            mat_apply(parent_rot + 9 * f, offset, parent_origin + 3 * f, o);
        } else {
            memcpy(o, offset, 3 * sizeof *o);
        }
        for (ptrdiff_t p = 0; p <= n_sites; p++) {
            double at[3];
            if (p == 0)
                memcpy(at, o, sizeof at);
            else
                mat_apply(m, sites + 3 * (p - 1), o, at);
            if (points)
                memcpy(points + f * per_frame + 3 * p, at, sizeof at);
            if (truth) {
                const double *want = truth + f * per_frame + 3 * p;
                const double d[3] = {at[0] - want[0], at[1] - want[1], at[2] - want[2]};
                const double e = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if (e > worst || isnan(e))  /* a NaN stays, so the check fails */
                    worst = e;
            }
        }
        if (!(worst <= stop))  /* past the limit, or NaN */
            break;
    }
    if (max_error)
        *max_error = sqrt(worst);  /* rounded correctly, so the root of the largest square */
    return kb_ok(err);
}
