/* kb_reduce_drop.c -- fewer tangent keys: keys dropped a few apart at once, their
 * neighbours refitted, each drop kept whose frames stay within tolerance. */
#include <float.h>
#include <stdlib.h>

#include "motion/reduce/reduce_internal.h"

#define DROP_NEAR 1
#define DROP_SPACING (2 * DROP_NEAR + 7)
#define DROP_MODEL_MARGIN 1.05

int kb_reduce_shortcuts = 1;

/* The worst score (NaN at a NaN) of the frames keys lo .. hi's tangents shape (key
 * lo - 1 to hi + 1), on the window of keys one beyond them (a tangent key's tangent
 * hangs on no neighbour): the whole spline there where its signs follow. */
static kb_status worst_score(joint_fit *j, ptrdiff_t lo, ptrdiff_t hi, double *worst,
                             kb_error *err)
{
    const ptrdiff_t K = j->K;
    ptrdiff_t first = j->keys[lo > 0 ? lo - 1 : 0], last = j->keys[hi + 1 < K ? hi + 1 : K - 1];
    ptrdiff_t a = lo > 1 ? lo - 1 : 0, b = hi + 1 < K - 1 ? hi + 1 : K - 1;
    j->s.signs_follow = 1;
    kb_status status = kb_rd_joint_errors(j->jt, j->keys + a, b - a + 1, j->tcb[0] + 3 * a,
                                          j->channels > 1 ? j->tcb[1] + 3 * a : NULL, first, last,
                                          NULL, &j->s, err);
    if (status == KB_OK && !j->s.signs_follow)  /* see kb_rd_signs_follow */
        status = kb_rd_joint_errors(j->jt, j->keys, K, j->tcb[0],
                                    j->channels > 1 ? j->tcb[1] : NULL, first, last, NULL, &j->s,
                                    err);
    *worst = kb_rd_worst(j->s.score + first, last - first + 1);
    return status;
}

/* Keys and their rows (each channel's), n of them, copied from one set to another. */
static void copy_keys(const joint_fit *j, ptrdiff_t n, const ptrdiff_t *from_keys,
                      double *const from[2], ptrdiff_t *to_keys, double *const to[2])
{
    memcpy(to_keys, from_keys, (size_t)n * sizeof(ptrdiff_t));
    for (int c = 0; c < j->channels; c++)
        memcpy(to[c], from[c], (size_t)(3 * n) * sizeof(double));
}

/* The K backup keys but those dropped and not restored, through the spares: a restored
 * key's rows from the backup, another's from the keys now (the backup's not dropped). */
static void keep_keys(joint_fit *j, ptrdiff_t K, const unsigned char *drop)
{
    ptrdiff_t n = 0;
    for (ptrdiff_t o = 0, p = 0; o < K; p += !drop[o], o++) {
        if (drop[o] && !j->restore[o])
            continue;
        j->spare_keys[n] = j->backup_keys[o];
        for (int c = 0; c < j->channels; c++)
            memcpy(j->spare_tcb[c] + 3 * n,
                   j->restore[o] ? j->backup_tcb[c] + 3 * o : j->tcb[c] + 3 * p,
                   3 * sizeof(double));
        n++;
    }
    copy_keys(j, n, j->spare_keys, j->spare_tcb, j->keys, j->tcb);
    j->K = n;
}

/* Drops keys DROP_SPACING apart at once, refits the DROP_NEAR keys each side, keeps
 * each drop whose changed frames stay within tolerance (a failed one gets its key and
 * neighbours' rows back); every phase of the spacing in turn. */
static kb_status drop_refitted(joint_fit *j, unsigned char *drop, kb_error *err)
{
    kb_status status = KB_OK;
    for (int phase = 0; phase < DROP_SPACING && status == KB_OK && j->K > 2; phase++) {
        const ptrdiff_t K = j->K;
        if (1 + phase >= K - 1)
            continue;
        memset(drop, 0, (size_t)K);
        for (ptrdiff_t i = 1 + phase; i < K - 1; i += DROP_SPACING)
            drop[i] = 1;
        copy_keys(j, K, j->keys, j->tcb, j->backup_keys, j->backup_tcb);
        ptrdiff_t n = 0;  /* the keys left, moved down in place */
        for (ptrdiff_t o = 0; o < K; o++) {
            if (drop[o])
                continue;
            j->keys[n] = j->keys[o];
            for (int c = 0; c < j->channels; c++)
                memmove(j->tcb[c] + 3 * n, j->tcb[c] + 3 * o, 3 * sizeof(double));
            n++;
        }
        j->K = n;
        memset(j->mark, 0, (size_t)n);
        for (ptrdiff_t o = 1 + phase, d = 0; o < K - 1; o += DROP_SPACING) {
            ptrdiff_t m = o - 1 - d++;  /* the left neighbour's index now */
            j->mark[m] = j->mark[m + 1] = 1;
            kb_rd_restart_far(j, m);
        }
        status = kb_rd_refit_near(j, j->tcb, j->mark, DROP_NEAR, j->model_worst, err);
        memset(j->restore, 0, (size_t)K);
        int failed = 0;
        for (ptrdiff_t o = 1 + phase, d = 0; o < K - 1 && status == KB_OK; o += DROP_SPACING) {
            ptrdiff_t m = o - 1 - d++;
            const double *model = j->model_worst + 2 * m;  /* 0 / inf: 0 */
            double worst = fmax(model[0] / j->jt->angle_tolerance / DROP_MODEL_MARGIN,
                                model[1] / j->jt->distance_tolerance);
            if (!kb_reduce_shortcuts)
                worst = 0.0;
            if (worst <= 1.0)  /* else failed by the model */
                status = worst_score(j, m > DROP_NEAR ? m - DROP_NEAR : 0,
                                     m + 1 + DROP_NEAR < n - 1 ? m + 1 + DROP_NEAR : n - 1,
                                     &worst, err);
            if (!(worst <= 1.0)) {  /* back: the key, and its neighbours' rows */
                failed = 1;
                for (ptrdiff_t k = o - 1 - DROP_NEAR; k <= o + 1 + DROP_NEAR; k++)
                    if (k >= 0 && k < K)
                        j->restore[k] = 1;
            }
        }
        if (status == KB_OK && failed)
            keep_keys(j, K, drop);
        double worst = 0.0;  /* orthogonal neighbours: a change can move far frames */
        if (status == KB_OK && kb_rd_orthogonal_neighbours(j->jt, j->keys, j->K) &&
            (status = worst_score(j, 0, j->K - 1, &worst, err)) == KB_OK &&
            !(worst <= 1.0)) {
            copy_keys(j, K, j->backup_keys, j->backup_tcb, j->keys, j->tcb);  /* undone */
            j->K = K;
        }
    }
    return status;
}

kb_status kb_reduce_drop(const kb_reduce_joint *jt, ptrdiff_t *keys, ptrdiff_t *n_keys,
                         double *rotation_tcb, double *translation_tcb, double *angle,
                         double *distance, kb_error *err)
{
    kb_status status = kb_rd_check_keys(jt, keys, *n_keys, err);
    if (status != KB_OK)
        return status;
    ptrdiff_t F = jt->n_frames, K = *n_keys;
    int channels = isfinite(jt->distance_tolerance) ? 2 : 1;
    for (ptrdiff_t i = 0; i < 3 * K; i++)
        for (int c = 0; c < channels; c++)
            if (!(fabs((c ? translation_tcb : rotation_tcb)[i]) <= DBL_MAX))
                return kb_fail(err, KB_ENONFINITE, KB_ARG_TANGENTS, c, i / 3);
    joint_fit j = {.jt = jt, .keys = keys, .K = K, .tcb = {rotation_tcb, translation_tcb},
                   .channels = channels};
    /* the spare and backup keys and rows, the drops' model errors, the
     * fit's space, and per key the drop, mark and restore flags */
    size_t n = (size_t)F;
    void *block = kb_rd_space_alloc(&j.s, F, 14 * n * sizeof(double) + kb_rd_fit_bytes(F) +
                                                 2 * n * sizeof(ptrdiff_t) + 3 * n);
    if (!block)
        return kb_fail(err, KB_ENOMEM, KB_ARG_NONE, -1, -1);
    double *d = (double *)(j.s.kind + F + (8 - n % 8) % 8);  /* after the space, aligned */
    j.spare_tcb[0] = d;
    j.spare_tcb[1] = d + 3 * n;
    j.backup_tcb[0] = d + 6 * n;
    j.backup_tcb[1] = d + 9 * n;
    j.model_worst = d + 12 * n;
    kb_rd_fit_place(&j.w, F, d + 14 * n);
    ptrdiff_t *x = (ptrdiff_t *)((char *)(d + 14 * n) + kb_rd_fit_bytes(F));
    j.spare_keys = x;
    j.backup_keys = x + n;
    unsigned char *drop = (unsigned char *)(x + 2 * n);
    j.mark = drop + n;
    j.restore = j.mark + n;
    if (channels == 1)
        memset(translation_tcb, 0, (size_t)(3 * F) * sizeof(double));
    status = drop_refitted(&j, drop, err);
    if (status == KB_OK && (angle || distance))  /* only where they are asked for */
        status = kb_rd_final_errors(jt, j.keys, j.K, j.tcb[0], j.tcb[1], angle, distance, &j.s,
                                    err);
    if (status == KB_OK) {
        *n_keys = j.K;
        /* the rows of keys dropped; a channel not scored (c >= channels)
         * was zeroed whole above and never written since */
        for (int c = 0; c < j.channels; c++)
            memset(j.tcb[c] + 3 * j.K, 0, (size_t)(3 * (F - j.K)) * sizeof(double));
    }
    free(block);
    return status == KB_OK ? kb_ok(err) : status;
}
