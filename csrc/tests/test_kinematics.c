/* test_kinematics.c -- one joint's forward kinematics on a chain whose
 * answer is known exactly: a root turned a quarter about z, a child turned
 * a quarter about x carrying a site; the error against a displaced truth,
 * whole and stopped at a limit; bad input refused. */
#include <math.h>

#include "kb_test.h"
#include "kbspline.h"

KB_TEST(test_joint_world_of_a_two_joint_chain)
{
    const double h = sqrt(0.5);
    const double root_q[8] = {h, 0, 0, h, 1, 0, 0, 0};  /* frame 0: z quarter; 1: identity */
    const double child_q[8] = {h, h, 0, 0, h, h, 0, 0};  /* x quarter in both */
    const double root_offset[6] = {1, 2, 3, 1, 2, 3}, child_offset[3] = {1, 0, 0};
    const double site[3] = {0, 1, 0};
    double rot[2][18], origin[2][6], points[12], error = -1.0;
    kb_error err;
    KB_ASSERT(kb_joint_world(2, NULL, NULL, root_q, root_offset, 3, 0, NULL, NULL, INFINITY,
                             rot[0], origin[0], NULL, NULL, &err) == KB_OK);
    KB_ASSERT(kb_joint_world(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, NULL,
                             INFINITY, rot[1], origin[1], points, NULL, &err) == KB_OK);
    /* frame 0: origin (1,2,3) + Rz (1,0,0) = (1,3,3); site + Rz Rx (0,1,0) = Rz (0,0,1) */
    const double want[12] = {1, 3, 3, 1, 3, 4, 2, 2, 3, 2, 2, 4};
    for (int i = 0; i < 12; i++)
        KB_ASSERT_NEAR(points[i], want[i], 1e-15);
    double truth[12];
    for (int i = 0; i < 12; i++)
        truth[i] = want[i];
    truth[7] += 0.25;  /* frame 1's origin, y */
    truth[3] -= 0.5;   /* frame 0's site, x */
    KB_ASSERT(kb_joint_world(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, truth,
                             INFINITY, rot[1], origin[1], NULL, &error, &err) == KB_OK);
    KB_ASSERT_NEAR(error, 0.5, 1e-15);
    /* a limit stops at the first frame past it: frame 1's larger error unseen */
    truth[9] += 2.0;  /* frame 1's site, x */
    KB_ASSERT(kb_joint_world(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, truth,
                             INFINITY, rot[1], origin[1], NULL, &error, &err) == KB_OK);
    KB_ASSERT_NEAR(error, 2.0, 1e-15);
    KB_ASSERT(kb_joint_world(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, truth,
                             0.1, rot[1], origin[1], NULL, &error, &err) == KB_OK);
    KB_ASSERT_NEAR(error, 0.5, 1e-15);
    KB_ASSERT(kb_joint_world(2, rot[0], origin[0], child_q, child_offset, 0, 1, site, truth,
                             2.5, rot[1], origin[1], NULL, &error, &err) == KB_OK);
    KB_ASSERT_NEAR(error, 2.0, 1e-15);
}

KB_TEST(test_joint_world_bad_input)
{
    const double q[4] = {1, 0, 0, 0}, zero_q[4] = {0, 0, 0, 0}, offset[3] = {0, 0, 0};
    double rot[9], origin[3], error;
    kb_error err;
    KB_ASSERT(kb_joint_world(0, NULL, NULL, q, offset, 0, 0, NULL, NULL, INFINITY, rot, origin,
                             NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world(1, rot, NULL, q, offset, 0, 0, NULL, NULL, INFINITY, rot, origin,
                             NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world(1, NULL, NULL, q, offset, 1, 0, NULL, NULL, INFINITY, rot, origin,
                             NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world(1, NULL, NULL, q, offset, 0, 1, NULL, NULL, INFINITY, rot, origin,
                             NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world(1, NULL, NULL, q, offset, 0, 0, NULL, origin, INFINITY, rot, origin,
                             NULL, NULL, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_joint_world(1, NULL, NULL, zero_q, offset, 0, 0, NULL, NULL, INFINITY, rot,
                             origin, NULL, &error, &err) != KB_OK);
}
