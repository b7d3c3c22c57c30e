/* test_main.c -- runs the C tests: `kbtests` runs all, `kbtests NAME...` some,
 * `kbtests --list` names them.  Ends with the line "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L  /* setenv */
#include <stdlib.h>
#include <string.h>

#include "kb_test.h"
#include "kbspline/kbspline.h"

int kb_test_failed;

#define KB_TEST_ENTRY(name) KB_TEST(name);
#include "test_list.h"
#undef KB_TEST_ENTRY

static const struct {
    const char *name;
    void (*fn)(void);
} tests[] = {
#define KB_TEST_ENTRY(name) {#name, name},
#include "test_list.h"
#undef KB_TEST_ENTRY
};

static const int n_tests = (int)(sizeof tests / sizeof tests[0]);

static int selected(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;
    /* the streaming thresholds of a 24 MB last-level cache, whatever this
     * machine's (test_sweep's large cases are sized for them) */
    setenv("KBSPLINE_CACHE_BYTES", "25165824", 0);
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < n_tests; i++)
            puts(tests[i].name);
        return 0;
    }
    for (int i = 0; i < n_tests; i++) {
        if (!selected(tests[i].name, argc, argv))
            continue;
        kb_test_failed = 0;
        tests[i].fn();
        printf("%s %s\n", kb_test_failed ? "FAIL" : "PASS", tests[i].name);
        if (kb_test_failed)
            failed++;
        else
            passed++;
    }
    kb_threads_shutdown();  /* join the pool's workers: leak checkers see none running */
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0 || passed == 0;
}
