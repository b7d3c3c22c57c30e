/* reduce.c -- key reduction of one joint: greedy keys, fits, drops,
 * sweeps, merges and rebuilds. */
#include "ext.h"
#include "motion/reduce/reduce_internal.h"

/* The frames of joint j of a clip: times (F,), rotations (J, F, 4),
 * translations (J, F, 3), checked by the caller. */
static kb_reduce_joint joint_frames(PyArrayObject *times, PyArrayObject *rot,
                                    PyArrayObject *tr, npy_intp j, double angle_tolerance,
                                    double distance_tolerance, int tangent_keys)
{
    npy_intp F = PyArray_DIM(times, 0);
    kb_reduce_joint jt = {F, (const double *)PyArray_DATA(times),
                          (const double *)PyArray_DATA(rot) + j * F * 4,
                          (const double *)PyArray_DATA(tr) + j * F * 3, angle_tolerance,
                          distance_tolerance, tangent_keys};
    return jt;
}

/* Checks a float64 array of shape (rows, cols) (or None where allow_none) into *arr. */
int check_rows(PyObject *obj, const char *name, npy_intp rows, npy_intp cols,
               int allow_none, PyArrayObject **arr)
{
    return check_array(obj, name, 2, allow_none, 0, 0, arr) &&
           (!*arr || (expect_dim(*arr, 0, rows, name) && expect_dim(*arr, 1, cols, name)));
}

int check_clip(PyObject *const o[3], PyArrayObject *a[3])
{
    if (!check_array(o[0], "times", 1, 0, 0, 0, &a[0]) ||
        !check_array(o[1], "rotations", 3, 0, 0, 0, &a[1]) ||
        !check_array(o[2], "translations", 3, 0, 0, 0, &a[2]))
        return 0;
    npy_intp J = PyArray_DIM(a[1], 0), F = PyArray_DIM(a[0], 0);
    return expect_dim(a[1], 1, F, "rotations") && expect_dim(a[1], 2, 4, "rotations") &&
           expect_dim(a[2], 0, J, "translations") && expect_dim(a[2], 1, F, "translations") &&
           expect_dim(a[2], 2, 3, "translations");
}

PyDoc_STRVAR(reduce_greedy_doc,
"reduce_greedy(times, rotations, translations, angle_tolerance, distance_tolerance)\n"
"-> (keys, angle, distance)\n\n"
"Greedy keys of each joint: times (F,), rotations (J, F, 4), translations\n"
"(J, F, 3), tolerances (J,); keys a list of J intp arrays, angle and\n"
"distance (J, F) the final errors.  Private: see kbspline.motion.reduce.");

static PyObject *reduce_greedy(PyObject *self, PyObject *args)
{
    PyObject *o[5], *result = NULL, *list = NULL;
    PyArrayObject *a[5];
    ptrdiff_t *keys = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOO", &o[0], &o[1], &o[2], &o[3], &o[4]) ||
        !check_clip(o, a) ||
        !check_array(o[3], "angle_tolerance", 1, 0, 0, 0, &a[3]) ||
        !check_array(o[4], "distance_tolerance", 1, 0, 0, 0, &a[4]) ||
        !expect_dim(a[3], 0, PyArray_DIM(a[1], 0), "angle_tolerance") ||
        !expect_dim(a[4], 0, PyArray_DIM(a[1], 0), "distance_tolerance"))
        return NULL;
    npy_intp J = PyArray_DIM(a[1], 0), F = PyArray_DIM(a[0], 0), dims[2] = {J, F};
    PyObject *angle = new_array(2, dims), *distance = new_array(2, dims);
    list = PyList_New(J);
    keys = PyMem_Malloc((size_t)(F > 0 ? F : 1) * sizeof(ptrdiff_t));
    if (!angle || !distance || !list || !keys) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (npy_intp j = 0; j < J; j++) {
        kb_reduce_joint jt = joint_frames(a[0], a[1], a[2], j,
                                          ((const double *)PyArray_DATA(a[3]))[j],
                                          ((const double *)PyArray_DATA(a[4]))[j], 0);
        ptrdiff_t n = 0;
        kb_error err;
        kb_status status;
        Py_BEGIN_ALLOW_THREADS
        status = kb_reduce_greedy(&jt, keys, &n,
                                  (double *)PyArray_DATA((PyArrayObject *)angle) + j * F,
                                  (double *)PyArray_DATA((PyArrayObject *)distance) + j * F,
                                  &err);
        Py_END_ALLOW_THREADS
        if (status != KB_OK) {
            err.track = j;
            raise_core_error(status, &err);
            goto done;
        }
        npy_intp size = n;
        PyObject *row = PyArray_SimpleNew(1, &size, NPY_INTP);
        if (!row)
            goto done;
        memcpy(PyArray_DATA((PyArrayObject *)row), keys, (size_t)n * sizeof(ptrdiff_t));
        PyList_SET_ITEM(list, j, row);
    }
    result = Py_BuildValue("(OOO)", list, angle, distance);
done:
    PyMem_Free(keys);
    Py_XDECREF(list);
    Py_XDECREF(angle);
    Py_XDECREF(distance);
    return result;
}

/* An array of frame indices as a 1-D C-contiguous intp array (a new
 * reference), or NULL with an exception.  With `private`, an array no one
 * else holds (the conversion's own, else a copy of it): the core reads it
 * with the GIL released (another thread could change the caller's array
 * between the core's check of the keys and its reads of them), or after
 * later arguments' conversions ran Python code (__array__) that could, or
 * beside outputs a view of the caller's could alias.  Without, the very
 * array where it is one already: for callers that copy the keys at once,
 * holding the GIL (a copy bought nothing: the reduction's ~200 calls a
 * pass each copied theirs). */
static PyArrayObject *key_frames(PyObject *obj, int private)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_INTP, 1, 1,
                                                        NPY_ARRAY_C_CONTIGUOUS |
                                                        NPY_ARRAY_ALIGNED);
    if (!a || !private || (Py_REFCNT(a) == 1 && PyArray_CHKFLAGS(a, NPY_ARRAY_OWNDATA)))
        return a;  /* (a conversion's new array: no one else holds it) */
    npy_intp n = PyArray_DIM(a, 0);
    PyArrayObject *copy = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INTP);
    if (copy)
        memcpy(PyArray_DATA(copy), PyArray_DATA(a), (size_t)n * sizeof(npy_intp));
    Py_DECREF(a);
    return copy;
}

PyDoc_STRVAR(reduce_greedy_order_doc,
"reduce_greedy_order(times, rotations, translations, angle_tolerance,\n"
"                    distance_tolerance, floor, keyed=None) -> (order, score)\n\n"
"The frames the greedy selection keys, in turn, until no score is above\n"
"floor, and each one's score when keyed, for the joint in rotations\n"
"(1, F, 4), translations (1, F, 3); after `keyed`, the order an earlier\n"
"call gave at a higher floor, where given (the frames after it only).\n"
"Private: see kbspline.motion.reduce.");

static PyObject *reduce_greedy_order(PyObject *self, PyObject *args)
{
    PyObject *o[3], *keyed_obj = Py_None, *order = NULL, *score = NULL, *result = NULL;
    PyArrayObject *a[3], *keyed = NULL;
    double angle_tolerance, distance_tolerance, floor;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOddd|O", &o[0], &o[1], &o[2], &angle_tolerance,
                          &distance_tolerance, &floor, &keyed_obj) ||
        !check_clip(o, a) || !expect_dim(a[1], 0, 1, "rotations"))
        return NULL;
    if (keyed_obj != Py_None && !(keyed = key_frames(keyed_obj, 0)))
        return NULL;
    npy_intp F = PyArray_DIM(a[0], 0), capacity = F > 2 ? F - 2 : 0;
    ptrdiff_t n = keyed ? PyArray_DIM(keyed, 0) : 0, first = n;
    if (n > capacity) {
        PyErr_SetString(PyExc_ValueError, "keyed: more frames than the clip's interior ones");
        goto done;
    }
    order = PyArray_SimpleNew(1, &capacity, NPY_INTP);
    score = new_array(1, &capacity);
    if (order && score) {
        if (n)
            memcpy(PyArray_DATA((PyArrayObject *)order), PyArray_DATA(keyed),
                   (size_t)n * sizeof(ptrdiff_t));
        kb_reduce_joint jt = joint_frames(a[0], a[1], a[2], 0, angle_tolerance,
                                          distance_tolerance, 0);
        kb_error err;
        kb_status status;
        Py_BEGIN_ALLOW_THREADS
        status = kb_reduce_greedy_order(&jt, floor,
                                        (ptrdiff_t *)PyArray_DATA((PyArrayObject *)order),
                                        (double *)PyArray_DATA((PyArrayObject *)score), &n, &err);
        Py_END_ALLOW_THREADS
        if (status != KB_OK)
            raise_core_error(status, &err);
        else
            result = Py_BuildValue("(NN)", PySequence_GetSlice(order, first, n),
                                   PySequence_GetSlice(score, first, n));
    }
done:
    Py_XDECREF(keyed);
    Py_XDECREF(order);
    Py_XDECREF(score);
    return result;
}

PyDoc_STRVAR(reduce_drop_doc,
"reduce_drop(times, rotations, translations, angle_tolerance, distance_tolerance, keys,\n"
"            rotation_rows, translation_rows, errors=True)\n"
"-> (keys, rotation_rows, translation_rows, angle, distance)\n\n"
"Fewer keys of one joint from tangent keys, keys (K,) with each key's\n"
"tangent (K, 3) per channel, by kb_reduce_drop; without errors, angle and\n"
"distance are None (not evaluated).  Private: see kbspline.motion.reduce.");

/* reduce_drop (tcb_args 2). */
static PyObject *reduce_joint(PyObject *args, int tcb_args)
{
    PyObject *o[6] = {NULL}, *out[4] = {NULL, NULL, NULL, NULL}, *result = NULL;
    PyArrayObject *a[3], *keys = NULL, *tcb[2] = {NULL, NULL};
    double angle_tolerance, distance_tolerance;
    int errors = 1;
    if (!PyArg_ParseTuple(args, "OOOddOOO|p", &o[0], &o[1], &o[2], &angle_tolerance,
                          &distance_tolerance, &o[3], &o[4], &o[5], &errors) ||
        !check_clip(o, a) || !expect_dim(a[1], 0, 1, "rotations") ||
        !(keys = key_frames(o[3], 0)))
        return NULL;
    npy_intp F = PyArray_DIM(a[0], 0), rows[2] = {F, 3};
    ptrdiff_t n = PyArray_DIM(keys, 0);
    if (n > F) {
        PyErr_SetString(PyExc_ValueError, "more keys than frames");
        goto done;
    }
    const char *names[2] = {"rotation_tcb", "translation_tcb"};
    for (int c = 0; c < tcb_args; c++)
        if (!check_rows(o[4 + c], names[c], n, 3, 0, &tcb[c]))
            goto done;
    PyArrayObject *capacity = (PyArrayObject *)PyArray_SimpleNew(1, &F, NPY_INTP);
    if (!capacity)
        goto done;
    memcpy(PyArray_DATA(capacity), PyArray_DATA(keys), (size_t)n * sizeof(ptrdiff_t));
    Py_SETREF(keys, capacity);
    out[0] = new_array(2, rows);
    out[1] = new_array(2, rows);
    out[2] = errors ? new_array(1, &F) : (Py_INCREF(Py_None), Py_None);
    out[3] = errors ? new_array(1, &F) : (Py_INCREF(Py_None), Py_None);
    if (!out[0] || !out[1] || !out[2] || !out[3])
        goto done;
    for (int c = 0; c < tcb_args; c++)
        memcpy(PyArray_DATA((PyArrayObject *)out[c]), PyArray_DATA(tcb[c]),
               (size_t)(3 * n) * sizeof(double));
    kb_reduce_joint jt = joint_frames(a[0], a[1], a[2], 0, angle_tolerance, distance_tolerance, 1);
    kb_error err;
    kb_status status;
    double *outputs[4];
    for (int i = 0; i < 4; i++)
        outputs[i] = out[i] == Py_None ? NULL : (double *)PyArray_DATA((PyArrayObject *)out[i]);
    Py_BEGIN_ALLOW_THREADS
    status = kb_reduce_drop(&jt, (ptrdiff_t *)PyArray_DATA(keys), &n, outputs[0], outputs[1],
                            outputs[2], outputs[3], &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK) {
        raise_core_error(status, &err);
        goto done;
    }
    if (cut_rows((PyObject *)keys, n) && cut_rows(out[0], n) && cut_rows(out[1], n))
        result = Py_BuildValue("(OOOOO)", keys, out[0], out[1], out[2], out[3]);
done:
    Py_XDECREF(keys);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(out[i]);
    return result;
}

static PyObject *reduce_drop(PyObject *self, PyObject *args)
{
    (void)self;
    return reduce_joint(args, 2);
}

PyDoc_STRVAR(reduce_merge_doc,
"reduce_merge(old_keys, old_rotation_rows, old_translation_rows, new_keys,\n"
"             new_rotation_rows, new_translation_rows, frame_worst, limit)\n"
"-> (keys, rotation_rows, translation_rows) or None\n\n"
"The pieces of a joint's new tangent keys (K, rows (K, 3) each) where every\n"
"frame's squared world error, frame_worst (F,), is at most limit squared,\n"
"the old keys elsewhere (kb_reduce_merge); None where no piece that\n"
"differs holds.  Private: see kbspline.motion.reduce.");

static PyObject *reduce_merge(PyObject *self, PyObject *args)
{
    PyObject *o[6], *worst_obj, *out[3] = {NULL, NULL, NULL};
    PyObject *result = NULL;
    PyArrayObject *keys[2] = {NULL, NULL}, *rows[4], *worst;
    double limit;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOd", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &worst_obj, &limit) ||
        !check_array(worst_obj, "frame_worst", 1, 0, 0, 0, &worst))
        return NULL;
    npy_intp F = PyArray_DIM(worst, 0), dims[2] = {F, 3};
    const char *names[4] = {"old_rotation_rows", "old_translation_rows", "new_rotation_rows",
                            "new_translation_rows"};
    for (int side = 0; side < 2; side++) {
        if (!(keys[side] = key_frames(o[3 * side], 1)))
            goto done;
        npy_intp K = PyArray_DIM(keys[side], 0);
        const ptrdiff_t *k = (const ptrdiff_t *)PyArray_DATA(keys[side]);
        int ascending = K >= 2;
        for (npy_intp i = 0; i < K && ascending; i++)
            ascending = k[i] >= 0 && k[i] < F && (!i || k[i] > k[i - 1]);
        if (!ascending) {
            PyErr_Format(PyExc_ValueError, "%s must be two or more ascending frames of the %zd",
                         side ? "new_keys" : "old_keys", (Py_ssize_t)F);
            goto done;
        }
        for (int c = 0; c < 2; c++)
            if (!check_rows(o[3 * side + 1 + c], names[2 * side + c], K, 3, 0,
                            &rows[2 * side + c]))
                goto done;
    }
    for (int i = 0; i < 3; i++)
        if (!(out[i] = i ? new_array(2, dims)
                         : PyArray_SimpleNew(1, &F, NPY_INTP)))
            goto done;
    const double *old_rows[2] = {PyArray_DATA(rows[0]), PyArray_DATA(rows[1])};
    const double *new_rows[2] = {PyArray_DATA(rows[2]), PyArray_DATA(rows[3])};
    double *merged_rows[2] = {PyArray_DATA((PyArrayObject *)out[1]),
                              PyArray_DATA((PyArrayObject *)out[2])};
    ptrdiff_t n = 0;
    kb_error err;
    kb_status status = kb_reduce_merge(
        F, PyArray_DATA(keys[0]), PyArray_DIM(keys[0], 0), old_rows, PyArray_DATA(keys[1]),
        PyArray_DIM(keys[1], 0), new_rows, PyArray_DATA(worst), limit,
        PyArray_DATA((PyArrayObject *)out[0]), &n, merged_rows, &err);
    if (status != KB_OK)
        raise_core_error(status, &err);
    else if (!n)
        result = (Py_INCREF(Py_None), Py_None);
    else if (cut_rows(out[0], n) && cut_rows(out[1], n) && cut_rows(out[2], n))
        result = Py_BuildValue("(OOO)", out[0], out[1], out[2]);
done:
    for (int side = 0; side < 2; side++)
        Py_XDECREF(keys[side]);
    for (int i = 0; i < 3; i++)
        Py_XDECREF(out[i]);
    return result;
}

PyDoc_STRVAR(reduce_sweep_doc,
"reduce_sweep(times, rotations, translations, angle_tolerance, distance_tolerance)\n"
"-> (keys, rotation_rows, translation_rows)\n\n"
"Tangent keys of one joint in one forward sweep (kb_reduce_sweep): times\n"
"(F,), rotations (1, F, 4), translations (1, F, 3); keys (K,) and each\n"
"key's tangent, (K, 3) per channel, the rows reduce_rebuild takes with\n"
"tangent_keys.  Every frame within the tolerances (either may be inf: that\n"
"channel unconstrained).  Private: see kbspline.motion.reduce.");

static PyObject *reduce_sweep(PyObject *self, PyObject *args)
{
    PyObject *o[3], *keys = NULL, *out[2] = {NULL, NULL}, *result = NULL;
    PyArrayObject *a[3];
    double angle_tolerance, distance_tolerance;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOdd", &o[0], &o[1], &o[2], &angle_tolerance,
                          &distance_tolerance) ||
        !check_clip(o, a) || !expect_dim(a[1], 0, 1, "rotations"))
        return NULL;
    npy_intp F = PyArray_DIM(a[0], 0), rows[2] = {F, 3};
    keys = PyArray_SimpleNew(1, &F, NPY_INTP);
    out[0] = new_array(2, rows);
    out[1] = new_array(2, rows);
    if (!keys || !out[0] || !out[1])
        goto done;
    kb_reduce_joint jt = joint_frames(a[0], a[1], a[2], 0, angle_tolerance, distance_tolerance,
                                      1);
    kb_error err;
    kb_status status;
    ptrdiff_t n = 0;
    Py_BEGIN_ALLOW_THREADS
    status = kb_reduce_sweep(&jt, (ptrdiff_t *)PyArray_DATA((PyArrayObject *)keys), &n,
                             (double *)PyArray_DATA((PyArrayObject *)out[0]),
                             (double *)PyArray_DATA((PyArrayObject *)out[1]), &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK) {
        raise_core_error(status, &err);
        goto done;
    }
    if (cut_rows(keys, n) && cut_rows(out[0], n) && cut_rows(out[1], n))
        result = Py_BuildValue("(OOO)", keys, out[0], out[1]);
done:
    Py_XDECREF(keys);
    Py_XDECREF(out[0]);
    Py_XDECREF(out[1]);
    return result;
}

PyDoc_STRVAR(reduce_rebuild_doc,
"reduce_rebuild(times, rotations, translations, keys, rotation_tcb,\n"
"               translation_tcb, errors=True, translation=True, since=None,\n"
"               tangent_keys=False)\n"
"-> (rotations, translations, angle, distance)\n\n"
"The curves through keys (K,) with TCB (K, 3) or None of the joint in\n"
"rotations (1, F, 4), translations (1, F, 3), at every frame (the\n"
"translations None unless translation), and their errors (None for both\n"
"unless errors).  since must be None (its place in the arguments is\n"
"kept; the partial rebuild it asked for went).  Private: see\n"
"kbspline.motion.reduce.");

/* An output array's data, or NULL for None (an output not asked for). */
static double *skipped_or_data(PyObject *out)
{
    return out == Py_None ? NULL : (double *)PyArray_DATA((PyArrayObject *)out);
}

static const double *tcb_data(PyArrayObject *tcb)
{
    return tcb ? (const double *)PyArray_DATA(tcb) : NULL;
}

/* Checks a channel's TCB, (K, 3) or None, into *tcb. */
static int check_tcb(PyObject *obj, const char *name, npy_intp K, PyArrayObject **tcb)
{
    return check_rows(obj, name, K, 3, 1, tcb);
}

static PyObject *reduce_rebuild(PyObject *self, PyObject *args)
{
    PyObject *o[6], *out[4] = {NULL, NULL, NULL, NULL}, *result = NULL, *since = Py_None;
    PyArrayObject *a[3], *tcb[2] = {NULL, NULL}, *keys = NULL;
    int errors = 1, translation = 1, tangent_keys = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOO|ppOp", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &errors, &translation, &since, &tangent_keys) ||
        !check_clip(o, a) || !expect_dim(a[1], 0, 1, "rotations") ||
        !(keys = key_frames(o[3], 1)))
        return NULL;
    npy_intp F = PyArray_DIM(a[0], 0), K = PyArray_DIM(keys, 0);
    if (!check_tcb(o[4], "rotation_tcb", K, &tcb[0]) ||
        !check_tcb(o[5], "translation_tcb", K, &tcb[1]))
        goto done;
    npy_intp rotation_dims[2] = {F, 4}, translation_dims[2] = {F, 3};
    if (since != Py_None) {
        PyErr_SetString(PyExc_ValueError, "since must be None");
        goto done;
    }
    out[0] = new_array(2, rotation_dims);
    out[1] = translation ? new_array(2, translation_dims) : (Py_INCREF(Py_None), Py_None);
    for (int i = 2; i < 4; i++)
        out[i] = errors ? new_array(1, &F) : (Py_INCREF(Py_None), Py_None);
    if (!out[0] || !out[1] || !out[2] || !out[3])
        goto done;
    kb_reduce_joint jt = joint_frames(a[0], a[1], a[2], 0, 1.0, 1.0, tangent_keys);
    kb_error err;
    kb_status status;
    const ptrdiff_t *key_data = (const ptrdiff_t *)PyArray_DATA(keys);
    double *rotations = (double *)PyArray_DATA((PyArrayObject *)out[0]);
    Py_BEGIN_ALLOW_THREADS
    status = kb_reduce_rebuild(&jt, key_data, K, tcb_data(tcb[0]), tcb_data(tcb[1]), rotations,
                               skipped_or_data(out[1]), skipped_or_data(out[2]),
                               skipped_or_data(out[3]), &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        raise_core_error(status, &err);
    else
        result = Py_BuildValue("(OOOO)", out[0], out[1], out[2], out[3]);
done:
    Py_XDECREF(keys);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(out[i]);
    return result;
}

PyDoc_STRVAR(reduce_errors_doc,
"reduce_errors(times, rotations, translations, curve_rotations,\n"
"              curve_translations) -> (angle, distance)\n\n"
"The errors at every frame of the curves (F, 4) and (F, 3) (or None: then\n"
"distance None) from the joint in rotations (1, F, 4), translations\n"
"(1, F, 3), as reduce_rebuild gives them.  Private: see\n"
"kbspline.motion.reduce.");

static PyObject *reduce_errors(PyObject *self, PyObject *args)
{
    PyObject *o[5], *out[2] = {NULL, NULL}, *result = NULL;
    PyArrayObject *a[3], *curve[2];
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOO", &o[0], &o[1], &o[2], &o[3], &o[4]) ||
        !check_clip(o, a) || !expect_dim(a[1], 0, 1, "rotations"))
        return NULL;
    npy_intp F = PyArray_DIM(a[0], 0);
    if (!check_rows(o[3], "curve_rotations", F, 4, 0, &curve[0]) ||
        !check_rows(o[4], "curve_translations", F, 3, 1, &curve[1]))
        return NULL;
    out[0] = new_array(1, &F);
    out[1] = curve[1] ? new_array(1, &F) : (Py_INCREF(Py_None), Py_None);
    if (!out[0] || !out[1])
        goto done;
    kb_reduce_joint jt = joint_frames(a[0], a[1], a[2], 0, 1.0, 1.0, 0);
    kb_error err;
    kb_status status;
    Py_BEGIN_ALLOW_THREADS
    status = kb_reduce_errors(&jt, (const double *)PyArray_DATA(curve[0]),
                              curve[1] ? (const double *)PyArray_DATA(curve[1]) : NULL,
                              skipped_or_data(out[0]), skipped_or_data(out[1]), &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        raise_core_error(status, &err);
    else
        result = Py_BuildValue("(OO)", out[0], out[1]);
done:
    Py_XDECREF(out[0]);
    Py_XDECREF(out[1]);
    return result;
}
PyMethodDef kbpy_reduce_methods[] = {
    {"reduce_greedy", reduce_greedy, METH_VARARGS, reduce_greedy_doc},
    {"reduce_greedy_order", reduce_greedy_order, METH_VARARGS, reduce_greedy_order_doc},
    {"reduce_drop", reduce_drop, METH_VARARGS, reduce_drop_doc},
    {"reduce_merge", reduce_merge, METH_VARARGS, reduce_merge_doc},
    {"reduce_sweep", reduce_sweep, METH_VARARGS, reduce_sweep_doc},
    {"reduce_rebuild", reduce_rebuild, METH_VARARGS, reduce_rebuild_doc},
    {"reduce_errors", reduce_errors, METH_VARARGS, reduce_errors_doc},
    {NULL, NULL, 0, NULL},
};
