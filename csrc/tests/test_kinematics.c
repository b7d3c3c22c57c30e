/* test_kinematics.c -- one joint's forward kinematics on a chain whose
 * answer is known exactly: a root turned a quarter about z, a child turned
 * a quarter about x carrying a site; the error against a displaced truth,
 * whole and stopped at a limit; bad input refused.  Longer clips (four
 * frames a lane, and the frames after) bit for bit as the scalar
 * arithmetic, stopped inside a block, with a quaternion off the direct
 * path, and refused at a late frame with the outputs left as
 * kb_quat_to_matrix leaves them. */
#include <math.h>
#include <string.h>

#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "kb_internal.h"  /* kb_joint_reach */

#define LONG_F 11 /* two blocks of four and three frames after */
#define LONG_SITES 2
#define LONG_POINTS (3 * (1 + LONG_SITES))

/* kb_joint_world as the scalar code computes it, in its order: returns the
 * frames placed (up to the first past stop) and *worst, the square of the
 * largest distance. */
static ptrdiff_t reference_world(const double *parent_rot, const double *parent_origin,
                                       const double *q, const double *offsets, ptrdiff_t stride,
                                       const double *sites, const double *truth, double stop,
                                       double *rot, double *origin, double *points, double *worst)
{
    kb_error err;
    if (kb_quat_to_matrix(LONG_F, q, rot, &err) != KB_OK)
        return -1;
    *worst = 0.0;
    for (ptrdiff_t f = 0; f < LONG_F; f++) {
        double *m = rot + 9 * f, *o = origin + 3 * f, t[9];
        const double *v = offsets + stride * f;
        memcpy(t, m, sizeof t);
        for (int i = 0; i < 3; i++) {
            if (!parent_rot) {
                o[i] = v[i];
                continue;
            }
            const double *a = parent_rot + 9 * f + 3 * i;
            for (int j = 0; j < 3; j++)
                m[3 * i + j] = a[0] * t[j] + a[1] * t[3 + j] + a[2] * t[6 + j];
            o[i] = parent_origin[3 * f + i] + (a[0] * v[0] + a[1] * v[1] + a[2] * v[2]);
        }
        for (int p = 0; p <= LONG_SITES; p++) {
            double *at = points + LONG_POINTS * f + 3 * p, d[3];
            for (int i = 0; i < 3; i++) {
                at[i] = p == 0 ? o[i]
                                     : o[i] + (m[3 * i] * sites[3 * p - 3] +
                                               m[3 * i + 1] * sites[3 * p - 2] +
                                               m[3 * i + 2] * sites[3 * p - 1]);
                d[i] = at[i] - truth[LONG_POINTS * f + 3 * p + i];
            }
            const double e = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if (e > *worst || isnan(e))
                *worst = e;
        }
        if (!(*worst <= stop))
            return f + 1;
    }
    return LONG_F;
}

/* A pseudo-random value in [-1, 1). */
static double next_value(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return *state / 4294967296.0 * 2.0 - 1.0;
}

/* A parent's rotations and origins, a child's quaternions (not unit) and
 * offsets, two sites and a truth near the answer. */
static void long_clip(double *parent_rot, double *parent_origin, double *q, double *offsets,
                      double *sites, double *truth)
{
    unsigned state = 12345u;
    kb_error err;
    for (int k = 0; k < 4 * LONG_F; k++)
        q[k] = next_value(&state);
    (void)kb_quat_to_matrix(LONG_F, q, parent_rot, &err);  /* any rotations */
    for (int k = 0; k < 4 * LONG_F; k++)
        q[k] = 3.0 * next_value(&state);
    for (int k = 0; k < 3 * LONG_F; k++) {
        parent_origin[k] = 10.0 * next_value(&state);
        offsets[k] = next_value(&state);
    }
    for (int k = 0; k < 3 * LONG_SITES; k++)
        sites[k] = next_value(&state);
    for (int k = 0; k < LONG_POINTS * LONG_F; k++)
        truth[k] = 1e-3 * next_value(&state);
}

/* kb_joint_world against reference_world on the long clip: the same bits
 * in every output up to the frame that stops it (past it they are
 * unfinished). */
static int same_as_reference(const double *parent_rot, const double *parent_origin,
                                   const double *q, const double *offsets, ptrdiff_t stride,
                                   const double *sites, const double *truth, double limit)
{
    double rot[2][9 * LONG_F], origin[2][3 * LONG_F], points[2][LONG_POINTS * LONG_F], worst;
    double error = -1.0;
    kb_error err;
    const double stop = isfinite(limit) ? limit * limit : INFINITY;
    const ptrdiff_t placed = reference_world(parent_rot, parent_origin, q, offsets, stride,
                                                   sites, truth, stop, rot[0], origin[0], points[0],
                                                   &worst);
    if (placed < 1)
        return 0;
    if (kb_joint_world_error(LONG_F, parent_rot, parent_origin, q, offsets, stride, LONG_SITES,
                             sites, truth, limit, rot[1], origin[1], points[1], &error,
                             NULL, &err) != KB_OK)
        return 0;
    const double want = sqrt(worst);
    return memcmp(rot[0], rot[1], (size_t)placed * 9 * sizeof(double)) == 0 &&
           memcmp(origin[0], origin[1], (size_t)placed * 3 * sizeof(double)) == 0 &&
           memcmp(points[0], points[1], (size_t)placed * LONG_POINTS * sizeof(double)) == 0 &&
           memcmp(&error, &want, sizeof error) == 0;
}

KB_TEST(test_joint_world_of_a_two_joint_chain)
{
    const double h = sqrt(0.5);
    const double root_q[8] = {h, 0, 0, h, 1, 0, 0, 0};  /* frame 0: z quarter; 1: identity */
    const double child_q[8] = {h, h, 0, 0, h, h, 0, 0};  /* x quarter in both */
    const double root_offset[6] = {1, 2, 3, 1, 2, 3}, child_offset[3] = {1, 0, 0};
    const double site[3] = {0, 1, 0};
    double rot[2][18], origin[2][6], points[12], error = -1.0;
    kb_error err;
    /* the public call, no truth */
    KB_ASSERT(kb_joint_world(2, NULL, NULL, root_q, root_offset, 3, 0, NULL, rot[0], origin[0],
                             NULL, &err) == KB_OK);
    KB_ASSERT(kb_joint_world(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, rot[1],
                             origin[1], points, &err) == KB_OK);
    /* frame 0: origin (1,2,3) + Rz (1,0,0) = (1,3,3); site + Rz Rx (0,1,0) = Rz (0,0,1) */
    const double want[12] = {1, 3, 3, 1, 3, 4, 2, 2, 3, 2, 2, 4};
    for (int i = 0; i < 12; i++)
        KB_ASSERT_NEAR(points[i], want[i], 1e-15);
    double truth[12];
    for (int i = 0; i < 12; i++)
        truth[i] = want[i];
    truth[7] += 0.25;  /* frame 1's origin, y */
    truth[3] -= 0.5;   /* frame 0's site, x */
    KB_ASSERT(kb_joint_world_error(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, truth,
                                   INFINITY, rot[1], origin[1], NULL, &error, NULL, &err) == KB_OK);
    KB_ASSERT_NEAR(error, 0.5, 1e-15);
    /* a limit stops at the first frame past it: frame 1's larger error unseen */
    truth[9] += 2.0;  /* frame 1's site, x */
    KB_ASSERT(kb_joint_world_error(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, truth,
                                   INFINITY, rot[1], origin[1], NULL, &error, NULL, &err) == KB_OK);
    KB_ASSERT_NEAR(error, 2.0, 1e-15);
    KB_ASSERT(kb_joint_world_error(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, truth,
                                   0.1, rot[1], origin[1], NULL, &error, NULL, &err) == KB_OK);
    KB_ASSERT_NEAR(error, 0.5, 1e-15);
    KB_ASSERT(kb_joint_world_error(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, truth,
                                   2.5, rot[1], origin[1], NULL, &error, NULL, &err) == KB_OK);
    KB_ASSERT_NEAR(error, 2.0, 1e-15);

    /* longer: whole, and stopped at frames 1, 3, 6 (in the blocks of four) and 9 (after them) */
    double parent_rot[9 * LONG_F], parent_origin[3 * LONG_F], qs[4 * LONG_F];
    double offsets[3 * LONG_F], sites[3 * LONG_SITES], far[LONG_POINTS * LONG_F];
    long_clip(parent_rot, parent_origin, qs, offsets, sites, far);
    for (int stride = 0; stride <= 3; stride += 3) {
        KB_ASSERT(same_as_reference(parent_rot, parent_origin, qs, offsets, stride, sites, far,
                                          INFINITY));
        KB_ASSERT(same_as_reference(NULL, NULL, qs, offsets, stride, sites, far, INFINITY));
    }
    const int stops[4] = {1, 3, 6, 9};
    for (int k = 0; k < 4; k++) {
        far[LONG_POINTS * stops[k] + 4] += 1.0;  /* a site past the limit */
        KB_ASSERT(same_as_reference(parent_rot, parent_origin, qs, offsets, 3, sites, far, 0.5));
        KB_ASSERT(same_as_reference(NULL, NULL, qs, offsets, 3, sites, far, 0.5));
        far[LONG_POINTS * stops[k] + 4] = NAN;  /* or NaN */
        KB_ASSERT(same_as_reference(parent_rot, parent_origin, qs, offsets, 3, sites, far, 0.5));
        KB_ASSERT(same_as_reference(parent_rot, parent_origin, qs, offsets, 3, sites, far,
                                          INFINITY));
        far[LONG_POINTS * stops[k] + 4] = 0.0;
    }
    /* a quaternion kb_quat_to_matrix rescales (off the direct path), in a block and after */
    for (int f = 2; f <= 9; f += 7) {
        const double saved[4] = {qs[4 * f], qs[4 * f + 1], qs[4 * f + 2], qs[4 * f + 3]};
        qs[4 * f] *= 1e-250;
        qs[4 * f + 1] *= 1e-250;
        qs[4 * f + 2] = 0x1p-1060;  /* subnormal */
        qs[4 * f + 3] = 0.0;
        KB_ASSERT(same_as_reference(parent_rot, parent_origin, qs, offsets, 3, sites, far,
                                          INFINITY));
        memcpy(qs + 4 * f, saved, sizeof saved);
    }
}

/* frame_worst: each frame's largest squared distance of the joint's
 * points, written in where larger than what it holds (or NaN), up to a
 * NaN, which stops it as without it, else every frame (in the blocks of
 * four and in the frames after them); refused without truth. */
KB_TEST(test_joint_world_frame_worst_folds_each_frames_largest)
{
    double parent_rot[9 * LONG_F], parent_origin[3 * LONG_F], qs[4 * LONG_F];
    double offsets[3 * LONG_F], sites[3 * LONG_SITES], truth[LONG_POINTS * LONG_F];
    long_clip(parent_rot, parent_origin, qs, offsets, sites, truth);
    truth[LONG_POINTS * 5 + 1] = NAN;  /* frame 5's origin, in the second block */
    double rot[9 * LONG_F], origin[3 * LONG_F], points[LONG_POINTS * LONG_F], error;
    double frame_worst[LONG_F], held[LONG_F];
    kb_error err;
    KB_ASSERT(kb_joint_world_error(LONG_F, parent_rot, parent_origin, qs, offsets, 3, LONG_SITES,
                                   sites, NULL, INFINITY, rot, origin, points, NULL, NULL,
                                   &err) == KB_OK);
    for (int f = 0; f < LONG_F; f++)  /* a value to keep in the even frames */
        frame_worst[f] = held[f] = f % 2 ? 0.0 : 4.0;
    KB_ASSERT(kb_joint_world_error(LONG_F, parent_rot, parent_origin, qs, offsets, 3, LONG_SITES,
                                   sites, truth, INFINITY, rot, origin, NULL, &error, frame_worst,
                                   &err) == KB_OK);
    for (int f = 0; f < LONG_F; f++) {
        double largest = 0.0;
        for (int p = 0; p <= LONG_SITES; p++) {
            double e = 0.0;
            for (int i = 0; i < 3; i++) {
                const double d = points[LONG_POINTS * f + 3 * p + i] -
                                       truth[LONG_POINTS * f + 3 * p + i];
                e += d * d;
            }
            largest = e > largest || isnan(e) ? e : largest;
        }
        if (f == 5)
            KB_ASSERT(isnan(frame_worst[f]));
        else if (f > 5)  /* a NaN stops it, as without frame_worst */
            KB_ASSERT(frame_worst[f] == held[f]);
        else
            KB_ASSERT_NEAR(frame_worst[f], fmax(largest, held[f]), 1e-12 * fmax(largest, 1.0));
    }
    KB_ASSERT(isnan(error));
    /* no limit stops it: every frame folded in */
    for (int f = 0; f < LONG_F; f++)
        frame_worst[f] = 0.0;
    truth[LONG_POINTS * 5 + 1] = 0.0;
    KB_ASSERT(kb_joint_world_error(LONG_F, parent_rot, parent_origin, qs, offsets, 3, LONG_SITES,
                                   sites, truth, INFINITY, rot, origin, NULL, &error, frame_worst,
                                   &err) == KB_OK);
    double largest = 0.0;
    for (int f = 0; f < LONG_F; f++)
        largest = fmax(largest, frame_worst[f]);
    KB_ASSERT(frame_worst[LONG_F - 1] > 0.0 && sqrt(largest) == error);
    KB_ASSERT(kb_joint_world_error(LONG_F, parent_rot, parent_origin, qs, offsets, 3, LONG_SITES,
                                   sites, NULL, INFINITY, rot, origin, points, NULL, frame_worst,
                                   &err) == KB_EBADSHAPE);
}

KB_TEST(test_joint_world_bad_input)
{
    const double q[4] = {1, 0, 0, 0}, zero_q[4] = {0, 0, 0, 0}, offset[3] = {0, 0, 0};
    double rot[9], origin[3], error;
    kb_error err;
    KB_ASSERT(kb_joint_world_error(0, NULL, NULL, q, offset, 0, 0, NULL, NULL, INFINITY, rot, origin,
                                   NULL, NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world_error(1, rot, NULL, q, offset, 0, 0, NULL, NULL, INFINITY, rot, origin,
                                   NULL, NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world_error(1, NULL, NULL, q, offset, 1, 0, NULL, NULL, INFINITY, rot, origin,
                                   NULL, NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world_error(1, NULL, NULL, q, offset, 0, 1, NULL, NULL, INFINITY, rot, origin,
                                   NULL, NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world_error(1, NULL, NULL, q, offset, 0, 0, NULL, origin, INFINITY, rot, origin,
                                   NULL, NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world_error(1, NULL, NULL, zero_q, offset, 0, 0, NULL, NULL, INFINITY, rot,
                                   origin, NULL, &error, NULL, &err) != KB_OK);

    /* refused at a late frame, zero or not finite (in a block of four, or
     * after them): kb_quat_to_matrix's error, its rotations before that
     * frame, nothing else written */
    double parent_rot[9 * LONG_F], parent_origin[3 * LONG_F], qs[4 * LONG_F];
    double offsets[3 * LONG_F], sites[3 * LONG_SITES], truth[LONG_POINTS * LONG_F];
    long_clip(parent_rot, parent_origin, qs, offsets, sites, truth);
    const int at[4] = {6, 9, 2, 10};
    for (int k = 0; k < 4; k++) {
        double rots[2][9 * LONG_F], origins[3 * LONG_F], untouched[3 * LONG_F], saved[4];
        kb_error want_err;
        memcpy(saved, qs + 4 * at[k], sizeof saved);
        if (k < 2)
            memset(qs + 4 * at[k], 0, sizeof saved);
        else
            qs[4 * at[k] + 1] = k == 2 ? INFINITY : NAN;
        memset(rots, 0x5a, sizeof rots);
        memset(origins, 0x5a, sizeof origins);
        memset(untouched, 0x5a, sizeof untouched);
        error = -1.0;
        const kb_status want = kb_quat_to_matrix(LONG_F, qs, rots[0], &want_err);
        KB_ASSERT(want == (k < 2 ? KB_EZERONORM : KB_ENONFINITE) && want_err.index == at[k]);
        KB_ASSERT(kb_joint_world_error(LONG_F, parent_rot, parent_origin, qs, offsets, 3, LONG_SITES,
                                       sites, truth, INFINITY, rots[1], origins, NULL, &error,
                                       NULL, &err) == want);
        KB_ASSERT(err.status == want_err.status && err.arg == want_err.arg &&
                  err.track == want_err.track && err.index == want_err.index);
        KB_ASSERT(memcmp(rots[0], rots[1], sizeof rots[0]) == 0);
        KB_ASSERT(memcmp(origins, untouched, sizeof origins) == 0 && error == -1.0);
        memcpy(qs + 4 * at[k], saved, sizeof saved);
    }
}

/* kb_joint_reach on a chain of three and a sibling off the root: each
 * joint's reach covers its own points and every point below it, not its
 * siblings'; a NaN point makes it and every joint above it NaN; parents
 * not before their children and negative site counts are refused. */
KB_TEST(test_joint_reach_of_a_chain)
{
    enum { J = 4, F = 2 };
    const ptrdiff_t parents[J] = {-1, 0, 1, 0}, n_sites[J] = {0, 1, 0, 0};
    /* joint 0 (F, 1, 3), joint 1 (F, 2, 3), joint 2 (F, 1, 3), joint 3 (F, 1, 3) */
    double points[3 * F * 5] = {
        0, 0, 0,  0, 0, 0,                          /* joint 0 at the origin */
        1, 0, 0,  1, 0, 0,    1, 0, 0,  1, 5, 0,    /* joint 1 and its site */
        1, 0, 2,  1, 0, 3,                          /* joint 2 */
        0, 0, -7, 0, 0, -7,                         /* joint 3, a sibling of 1 */
    };
    double reach[J];
    kb_error err;
    KB_ASSERT(kb_joint_reach(J, F, parents, n_sites, points, reach, &err) == KB_OK);
    KB_ASSERT(reach[0] == 7.0 && reach[1] == 5.0 && reach[2] == 0.0 && reach[3] == 0.0);
    points[3 * F * 3] = NAN;  /* joint 2 in frame 0 */
    KB_ASSERT(kb_joint_reach(J, F, parents, n_sites, points, reach, &err) == KB_OK);
    KB_ASSERT(isnan(reach[0]) && isnan(reach[1]) && isnan(reach[2]) && reach[3] == 0.0);
    const ptrdiff_t ahead[J] = {-1, 2, 1, 0}, negative[J] = {0, -1, 0, 0};
    KB_ASSERT(kb_joint_reach(J, F, ahead, n_sites, points, reach, &err) == KB_EBADSHAPE);
    KB_ASSERT(err.track == 1);
    KB_ASSERT(kb_joint_reach(J, F, parents, negative, points, reach, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_reach(0, F, parents, n_sites, points, reach, &err) == KB_EBADSHAPE);
}
