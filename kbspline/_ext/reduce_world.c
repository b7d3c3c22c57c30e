/* reduce_world.c -- key reduction in world space (kb_reduce_clip) and the
 * trials its search makes. */
#include "ext.h"
#include "kbspline/reduce.h"
#include "motion/reduce/reduce_internal.h"

PyDoc_STRVAR(reduce_clip_doc,
"reduce_clip(rotations, translations, frame_time, parents, moves, offsets,\n"
"            n_sites, sites, position_tolerance, angle_tolerance,\n"
"            distance_tolerance, virtual_distance, greedy, n_threads, progress)\n"
"-> (keys, rotation_rows, translation_rows, max_position, max_angle,\n"
"    max_distance)\n\n"
"Key reduction in world space (kb_reduce_clip) of the clip rotations\n"
"(J, F, 4), translations (J, F, 3), parents, n_sites intp (J,), moves bool\n"
"(J,), offsets (J, 3), sites (sum of n_sites, 3); the caps and\n"
"virtual_distance 0 for none.  progress(done, total) is called as passes\n"
"end (None: none), and an exception from it, or a signal's (Ctrl-C),\n"
"stops the search and propagates; n_threads search the joints.  Returns\n"
"per joint its keys and each key's tangent rows (lists of J arrays; the\n"
"rows None for greedy keys), worst world-space error, angle and distance.\n"
"ValueError names a tolerance below what every frame keyed reproduces.\n"
"Private: see kbspline.motion.reduce.");

/* Calls a Python progress(done, total) from the core, which runs without
 * the GIL, or with none (ctx NULL) checks for signals, so that Ctrl-C
 * stops a long search between passes. */
static int call_progress(void *ctx, int done, int total)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    int stop;
    if (ctx) {
        PyObject *r = PyObject_CallFunction((PyObject *)ctx, "ii", done, total);
        Py_XDECREF(r);
        stop = r == NULL;
    } else
        stop = PyErr_CheckSignals() < 0;
    PyGILState_Release(gil);
    return stop;  /* its exception stays set: the search stops */
}

/* A C-contiguous copy of obj as a 1-D array of `type` with n entries, or
 * NULL: a copy even where obj is one already, as the core reads these
 * indices on every pass and the progress callback runs Python between. */
static PyArrayObject *vector_of(PyObject *obj, int type, npy_intp n, const char *name)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(
        obj, type, 1, 1,
        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST | NPY_ARRAY_ENSURECOPY);
    if (a && !expect_dim(a, 0, n, name))
        Py_CLEAR(a);
    return a;
}

/* A list of J 1-D intp arrays: counts[j] keys from keys + j * F. */
static PyObject *keys_of(npy_intp J, npy_intp F, const ptrdiff_t *keys, const ptrdiff_t *counts)
{
    PyObject *list = PyList_New(J);
    for (npy_intp j = 0; list && j < J; j++) {
        npy_intp n = counts[j];
        PyObject *row = PyArray_SimpleNew(1, &n, NPY_INTP);
        if (!row) {
            Py_CLEAR(list);
            break;
        }
        memcpy(PyArray_DATA((PyArrayObject *)row), keys + j * F, (size_t)n * sizeof *keys);
        PyList_SET_ITEM(list, j, row);
    }
    return list;
}

/* A list of J arrays (counts[j], 3): joint j's rows from data + j * F * 3;
 * None where data is NULL. */
static PyObject *table_rows_of(npy_intp J, const double *data, npy_intp F,
                               const ptrdiff_t *counts)
{
    if (!data)
        Py_RETURN_NONE;
    PyObject *list = PyList_New(J);
    for (npy_intp j = 0; list && j < J; j++) {
        npy_intp dims[2] = {counts[j], 3};
        PyObject *rows = new_array(2, dims);
        if (!rows) {
            Py_CLEAR(list);
            break;
        }
        memcpy(PyArray_DATA((PyArrayObject *)rows), data + j * F * 3,
               (size_t)(3 * counts[j]) * sizeof(double));
        PyList_SET_ITEM(list, j, rows);
    }
    return list;
}

/* A (J,) float64 array of values. */
static PyObject *vector_copy(npy_intp J, const double *values)
{
    PyObject *a = new_array(1, &J);
    if (a)
        memcpy(PyArray_DATA((PyArrayObject *)a), values, (size_t)J * sizeof(double));
    return a;
}

/* reduce_clip's result from a reduction. */
static PyObject *reduction_tuple(const kb_reduction *r)
{
    const npy_intp J = r->n_joints, F = r->n_frames;
    PyObject *items[6] = {
        keys_of(J, F, r->keys, r->n_keys), table_rows_of(J, r->rotation_tangents, F, r->n_keys),
        table_rows_of(J, r->translation_tangents, F, r->n_keys),
        vector_copy(J, r->max_position), vector_copy(J, r->max_angle),
        vector_copy(J, r->max_distance)};
    PyObject *result = NULL;
    if (items[0] && items[1] && items[2] && items[3] && items[4] && items[5])
        result = PyTuple_Pack(6, items[0], items[1], items[2], items[3], items[4], items[5]);
    for (int i = 0; i < 6; i++)
        Py_XDECREF(items[i]);
    return result;
}

/* The exception of a failed kb_reduce_clip: a tolerance below what every
 * frame keyed reproduces named with its value, else the core's error. */
static void raise_reduce_error(kb_status status, const kb_error *err, const double bounds[3])
{
    static const char *names[3] = {"position_tolerance", "angle_tolerance",
                                   "distance_tolerance"};
    if (status == KB_ESTOPPED && PyErr_Occurred())
        return;  /* progress's exception, or the signal's */
    if (status != KB_ERANGE || err->track < 0 || err->index < 0 || err->index > 2) {
        raise_core_error(status, err);
        return;
    }
    PyObject *value = PyFloat_FromDouble(bounds[err->index]);
    if (value)
        PyErr_Format(PyExc_ValueError, "%s=%R is below what the splines reproduce even "
                     "keyed at every frame (joint %zd): give a larger one",
                     names[err->index], value, (Py_ssize_t)err->track);
    Py_XDECREF(value);
}

static PyObject *reduce_clip(PyObject *self, PyObject *args)
{
    PyObject *o[8], *progress, *result = NULL;
    PyArrayObject *a[5] = {NULL}, *sites;  /* rotations, translations, parents, moves, n_sites */
    kb_reduce_options options = {0};
    double frame_time;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOdOOOOOddddpiO", &o[0], &o[1], &frame_time, &o[2], &o[3],
                          &o[4], &o[5], &o[6], &options.position_tolerance,
                          &options.angle_cap, &options.distance_cap,
                          &options.virtual_distance, &options.greedy, &options.n_threads,
                          &progress))
        return NULL;
    if (progress != Py_None && !PyCallable_Check(progress)) {
        PyErr_SetString(PyExc_TypeError, "progress must be callable or None");
        return NULL;
    }
    PyArrayObject *offsets;
    if (!check_array(o[0], "rotations", 3, 0, 0, 0, &a[0]) ||
        !check_array(o[1], "translations", 3, 0, 0, 0, &a[1]))
        return NULL;
    const npy_intp J = PyArray_DIM(a[0], 0), F = PyArray_DIM(a[0], 1);
    if (!expect_dim(a[0], 2, 4, "rotations") || !expect_dim(a[1], 0, J, "translations") ||
        !expect_dim(a[1], 1, F, "translations") || !expect_dim(a[1], 2, 3, "translations") ||
        !(a[2] = vector_of(o[2], NPY_INTP, J, "parents")) ||
        !(a[3] = vector_of(o[3], NPY_UINT8, J, "moves")) ||
        !check_rows(o[4], "offsets", J, 3, 0, &offsets) ||
        !(a[4] = vector_of(o[5], NPY_INTP, J, "n_sites")) ||
        !check_array(o[6], "sites", 2, 0, 0, 0, &sites) || !expect_dim(sites, 1, 3, "sites"))
        goto done;
    const ptrdiff_t *n_sites = PyArray_DATA(a[4]);
    npy_intp left = PyArray_DIM(sites, 0);
    for (npy_intp j = 0; j < J; j++) {
        if (n_sites[j] < 0 || n_sites[j] > left) {
            PyErr_SetString(PyExc_ValueError, "n_sites must count the rows of sites");
            goto done;
        }
        left -= n_sites[j];
    }
    if (left) {
        PyErr_SetString(PyExc_ValueError, "n_sites must count the rows of sites");
        goto done;
    }
    kb_motion_clip clip = {J, F, frame_time, PyArray_DATA(a[2]), PyArray_DATA(a[0]),
                           PyArray_DATA(a[1]), PyArray_DATA(a[3]), PyArray_DATA(offsets),
                           n_sites, PyArray_DATA(sites)};
    options.progress = call_progress;
    options.progress_data = progress == Py_None ? NULL : progress;
    kb_reduction reduction;
    kb_error err;
    kb_status status;
    Py_BEGIN_ALLOW_THREADS
    status = kb_reduce_clip(&clip, &options, &reduction, &err);
    Py_END_ALLOW_THREADS
    if (status == KB_OK) {
        result = reduction_tuple(&reduction);
        kb_reduction_free(&reduction);
    } else {
        const double bounds[3] = {options.position_tolerance, options.angle_cap,
                                  options.distance_cap};
        raise_reduce_error(status, &err, bounds);
    }
done:
    for (int i = 2; i < 5; i++)
        Py_XDECREF(a[i]);
    return result;
}

PyMethodDef kbpy_reduce_world_methods[] = {
    {"reduce_clip", reduce_clip, METH_VARARGS, reduce_clip_doc},
    {NULL, NULL, 0, NULL},
};
