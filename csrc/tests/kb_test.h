/* kb_test.h -- a tiny test harness for the kbspline C core. */
#ifndef KB_TEST_H
#define KB_TEST_H

#include <math.h>
#include <stdio.h>

extern int kb_test_failed;  /* set by a failing assertion in the current test */

#define KB_TEST(name) void name(void)

#define KB_ASSERT(cond)                                                         \
    do {                                                                        \
        if (!(cond)) {                                                          \
            printf("  %s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
            kb_test_failed = 1;                                                 \
            return;                                                             \
        }                                                                       \
    } while (0)

#define KB_ASSERT_NEAR(a, b, tol)                                               \
    do {                                                                        \
        double a_ = (a), b_ = (b);                                              \
        if (!(fabs(a_ - b_) <= (tol))) {                                        \
            printf("  %s:%d: %s = %.17g, %s = %.17g (tolerance %g)\n", __FILE__, \
                   __LINE__, #a, a_, #b, b_, (double)(tol));                    \
            kb_test_failed = 1;                                                 \
            return;                                                             \
        }                                                                       \
    } while (0)

#endif
