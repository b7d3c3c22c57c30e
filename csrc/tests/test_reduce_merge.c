/* test_reduce_merge.c -- kb_reduce_merge on keys whose pieces are known:
 * drops each side of a key both keep with the same rows, a piece whose
 * frames stray keeping the old keys, pieces
 * that all stray, a NaN, and bad input refused. */
#include <math.h>
#include <string.h>

#include "kb_test.h"
#include "kbspline/kbspline.h"
#include "motion/reduce/reduce_internal.h"

#define F 13

/* Rows of K keys: key frame k's rotation row (k, 0, 0), translation (0, k, 0),
 * plus `moved` in both where changed[k] (a refitted neighbour). */
static void rows_of(const ptrdiff_t *keys, ptrdiff_t K, const int *changed, double moved,
                    double *rotation, double *translation)
{
    for (ptrdiff_t i = 0; i < K; i++) {
        const double k = (double)keys[i], add = changed && changed[keys[i]] ? moved : 0.0;
        const double r[3] = {k + add, 0.0, 0.0}, t[3] = {0.0, k + add, 0.0};
        memcpy(rotation + 3 * i, r, sizeof r);
        memcpy(translation + 3 * i, t, sizeof t);
    }
}

KB_TEST(test_reduce_merge_keeps_the_pieces_that_hold)
{
    /* old keys 0 2 4 6 8 10 12; new drop 2 (0 and 4 refitted) and 10 (8 and
     * 12 refitted): 6 keeps its rows, so [0, 6] and [6, 12] are pieces */
    const ptrdiff_t old_keys[7] = {0, 2, 4, 6, 8, 10, 12}, new_keys[5] = {0, 4, 6, 8, 12};
    int changed[F] = {0};
    changed[0] = changed[4] = changed[8] = changed[12] = 1;
    double old_r[21], old_t[21], new_r[15], new_t[15], out_r[3 * F], out_t[3 * F];
    rows_of(old_keys, 7, NULL, 0.0, old_r, old_t);
    rows_of(new_keys, 5, changed, 0.5, new_r, new_t);
    const double *old_rows[2] = {old_r, old_t}, *new_rows[2] = {new_r, new_t};
    double *rows[2] = {out_r, out_t};
    double worst[F];
    ptrdiff_t keys[F], n = -1;
    kb_error err;
    for (int f = 0; f < F; f++)
        worst[f] = 0.25;  /* squared: within a limit of 1 */
    /* all within: the new keys */
    KB_ASSERT(kb_reduce_merge(F, old_keys, 7, old_rows, new_keys, 5, new_rows, worst, 1.0,
                              keys, &n, rows, &err) == KB_OK);
    KB_ASSERT(n == 5 && memcmp(keys, new_keys, sizeof new_keys) == 0);
    KB_ASSERT(memcmp(out_r, new_r, sizeof new_r) == 0 && memcmp(out_t, new_t, sizeof new_t) == 0);
    /* frame 9 strays: the second piece keeps the old keys, 8 10 12 with
     * their old rows */
    worst[9] = 1.5;
    KB_ASSERT(kb_reduce_merge(F, old_keys, 7, old_rows, new_keys, 5, new_rows, worst, 1.0,
                              keys, &n, rows, &err) == KB_OK);
    const ptrdiff_t want[6] = {0, 4, 6, 8, 10, 12};
    KB_ASSERT(n == 6 && memcmp(keys, want, sizeof want) == 0);
    for (int i = 0; i < 6; i++) {
        const double *from = i < 3 ? new_r + 3 * i : old_r + 3 * (i + 1);
        KB_ASSERT(memcmp(out_r + 3 * i, from, 3 * sizeof(double)) == 0);
    }
    /* a NaN strays too; both pieces astray: nothing held, n 0 */
    worst[1] = NAN;
    KB_ASSERT(kb_reduce_merge(F, old_keys, 7, old_rows, new_keys, 5, new_rows, worst, 1.0,
                              keys, &n, rows, &err) == KB_OK);
    KB_ASSERT(n == 0);
    /* the same keys and rows: no piece differs, nothing to hold */
    KB_ASSERT(kb_reduce_merge(F, old_keys, 7, old_rows, old_keys, 7, old_rows, worst, 1.0,
                              keys, &n, rows, &err) == KB_OK);
    KB_ASSERT(n == 0);
}

KB_TEST(test_reduce_merge_without_a_shared_key_is_one_piece)
{
    /* every key refitted (the first and last too): one piece, whole or not at all */
    const ptrdiff_t old_keys[4] = {0, 3, 7, 12}, new_keys[3] = {0, 7, 12};
    int changed[F];
    for (int f = 0; f < F; f++)
        changed[f] = 1;
    double old_r[12], old_t[12], new_r[9], new_t[9], out_r[3 * F], out_t[3 * F], worst[F];
    rows_of(old_keys, 4, NULL, 0.0, old_r, old_t);
    rows_of(new_keys, 3, changed, 1.0, new_r, new_t);
    const double *old_rows[2] = {old_r, old_t}, *new_rows[2] = {new_r, new_t};
    double *rows[2] = {out_r, out_t};
    ptrdiff_t keys[F], n = -1;
    kb_error err;
    for (int f = 0; f < F; f++)
        worst[f] = f == 12 ? 1.0 : 0.0;  /* the last frame at the limit: within */
    KB_ASSERT(kb_reduce_merge(F, old_keys, 4, old_rows, new_keys, 3, new_rows, worst, 1.0,
                              keys, &n, rows, &err) == KB_OK);
    KB_ASSERT(n == 3 && memcmp(keys, new_keys, sizeof new_keys) == 0);
    worst[12] = 1.0000001;
    KB_ASSERT(kb_reduce_merge(F, old_keys, 4, old_rows, new_keys, 3, new_rows, worst, 1.0,
                              keys, &n, rows, &err) == KB_OK);
    KB_ASSERT(n == 0);
}

KB_TEST(test_reduce_merge_bad_input)
{
    const ptrdiff_t keys2[2] = {0, 12}, unsorted[3] = {0, 8, 4}, outside[2] = {0, F};
    const double r[9] = {0}, *rows_in[2] = {r, r};
    double out_r[3 * F], out_t[3 * F], worst[F] = {0};
    double *rows[2] = {out_r, out_t};
    ptrdiff_t keys[F], n;
    kb_error err;
    KB_ASSERT(kb_reduce_merge(F, keys2, 1, rows_in, keys2, 2, rows_in, worst, 1.0, keys, &n,
                              rows, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_merge(F, keys2, 2, rows_in, unsorted, 3, rows_in, worst, 1.0, keys, &n,
                              rows, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_merge(F, outside, 2, rows_in, keys2, 2, rows_in, worst, 1.0, keys, &n,
                              rows, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_merge(F, keys2, 2, rows_in, keys2, 2, rows_in, NULL, 1.0, keys, &n,
                              rows, &err) == KB_EBADSHAPE);
    KB_ASSERT(kb_reduce_merge(1, keys2, 2, rows_in, keys2, 2, rows_in, worst, 1.0, keys, &n,
                              rows, &err) == KB_EBADSHAPE);
}
