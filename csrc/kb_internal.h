/* kb_internal.h -- private helpers of the kbspline core; never installed. */
#ifndef KB_INTERNAL_H
#define KB_INTERNAL_H

#include "kbspline.h"
#include <math.h>

static inline kb_status kb_fail(kb_error *err, kb_status status, kb_arg arg,
                                ptrdiff_t track, ptrdiff_t index)
{
    if (err) {
        err->status = status;
        err->arg = arg;
        err->track = track;
        err->index = index;
    }
    return status;
}

static inline kb_status kb_ok(kb_error *err)
{
    return kb_fail(err, KB_OK, KB_ARG_NONE, -1, -1);
}

static inline double kb_param_at(kb_param p, ptrdiff_t track, ptrdiff_t key)
{
    return p.data[track * p.stride + key];
}

#endif /* KB_INTERNAL_H */
