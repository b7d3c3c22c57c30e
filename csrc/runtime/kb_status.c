/* kb_status.c -- error strings and the counts that follow from an end condition. */
#include "kbspline/kbspline.h"

const char *kb_strerror(kb_status status)
{
    switch (status) {
    case KB_OK: return "success";
    case KB_EBADSHAPE: return "size out of range";
    case KB_ENOTSORTED: return "must be strictly increasing";
    case KB_ENONFINITE: return "must be finite";
    case KB_ENOMEM: return "out of memory";
    case KB_EBADOPTION: return "unknown option";
    case KB_ETOOFEW: return "too few keys for the end condition";
    case KB_ENOTCLOSED: return "the last key must repeat the first for ends='closed'";
    case KB_EDOMAIN: return "outside the domain";
    case KB_ERANGE: return "out of range";
    case KB_EZERONORM: return "must have a nonzero norm";
    case KB_ESTOPPED: return "stopped by its progress function";
    }
    return "unknown error";
}

ptrdiff_t kb_min_keys(kb_ends ends)
{
    switch (ends) {
    case KB_ENDS_PHANTOM: return 4;
    case KB_ENDS_CLOSED: return 3;
    default: return 2;
    }
}

ptrdiff_t kb_num_segments(kb_ends ends, ptrdiff_t n_keys)
{
    return ends == KB_ENDS_PHANTOM ? n_keys - 3 : n_keys - 1;
}

ptrdiff_t kb_first_segment_key(kb_ends ends)
{
    return ends == KB_ENDS_PHANTOM ? 1 : 0;
}
