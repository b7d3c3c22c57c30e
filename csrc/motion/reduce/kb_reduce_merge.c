/* kb_reduce_merge.c -- the pieces of a joint's new tangent keys that keep
 * the world within its tolerance, the old keys elsewhere: keys both share
 * with the same rows cut the frames into pieces, each wholly old or new. */
#include "motion/reduce/reduce_internal.h"

/* Whether key o of the old keys and key n of the new have the same rows. */
static int same_rows(const double *const old_rows[2], ptrdiff_t o,
                     const double *const new_rows[2], ptrdiff_t n)
{
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 3; i++)
            if (old_rows[c][3 * o + i] != new_rows[c][3 * n + i])
                return 0;
    return 1;
}

/* Appends keys [from, to) of one side, with their rows, to the merge. */
static void take(const ptrdiff_t *keys, const double *const rows[2], ptrdiff_t from,
                 ptrdiff_t to, ptrdiff_t *out, double *const out_rows[2], ptrdiff_t *n)
{
    for (ptrdiff_t i = from; i < to; i++, (*n)++) {
        out[*n] = keys[i];
        for (int c = 0; c < 2; c++)
            memcpy(out_rows[c] + 3 * *n, rows[c] + 3 * i, 3 * sizeof(double));
    }
}

kb_status kb_reduce_merge(ptrdiff_t n_frames, const ptrdiff_t *old_keys, ptrdiff_t n_old,
                          const double *const old_rows[2], const ptrdiff_t *new_keys,
                          ptrdiff_t n_new, const double *const new_rows[2],
                          const double *frame_worst, double limit, ptrdiff_t *keys,
                          ptrdiff_t *n_keys, double *const rows[2], kb_error *err)
{
    if (n_frames < 2 || n_old < 2 || n_new < 2 || n_old > n_frames || n_new > n_frames ||
        !old_keys || !new_keys || !frame_worst || !keys || !n_keys || !rows[0] || !rows[1] ||
        !old_rows[0] || !old_rows[1] || !new_rows[0] || !new_rows[1])
        return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    for (ptrdiff_t i = 0; i < n_old + n_new; i++) {
        const ptrdiff_t *k = i < n_old ? old_keys + i : new_keys + (i - n_old);
        if (*k < 0 || *k >= n_frames || (i != 0 && i != n_old && k[0] <= k[-1]))
            return kb_fail(err, KB_EBADSHAPE, KB_ARG_NONE, -1, -1);
    }
    /* squared; a negative limit (as kb_joint_world's) or NaN holds no frame */
    const double limit2 = limit >= 0.0 ? limit * limit : NAN;
    ptrdiff_t n = 0, o = 0, w = 0;  /* keys written; the next old and new key */
    ptrdiff_t o0 = 0, w0 = 0, first = 0;  /* the piece's first old and new key and frame */
    int held = 0;  /* a piece that differs kept its new keys */
    while (o0 < n_old || w0 < n_new) {
        /* the piece ends at the next shared key with the same rows, or the last frame */
        ptrdiff_t last = n_frames - 1;
        o = o0;
        w = w0;
        while (o < n_old && w < n_new) {
            if (old_keys[o] < new_keys[w])
                o++;
            else if (new_keys[w] < old_keys[o])
                w++;
            else if (same_rows(old_rows, o, new_rows, w)) {
                last = old_keys[o];
                break;
            } else {
                o++;
                w++;
            }
        }
        int anchored = o < n_old && w < n_new && old_keys[o] == last;
        if (!anchored)
            o = n_old, w = n_new;
        int ok = o > o0 || w > w0;  /* it differs, and every frame in it is within */
        for (ptrdiff_t f = first; ok && f <= last; f++)
            ok = frame_worst[f] <= limit2;
        if (ok)
            take(new_keys, new_rows, w0, w, keys, rows, &n);
        else
            take(old_keys, old_rows, o0, o, keys, rows, &n);
        held |= ok;
        if (anchored)  /* the shared key, then the next piece from it */
            take(new_keys, new_rows, w, w + 1, keys, rows, &n);
        o0 = anchored ? o + 1 : n_old;
        w0 = anchored ? w + 1 : n_new;
        first = last;
    }
    *n_keys = held ? n : 0;
    return kb_ok(err);
}
