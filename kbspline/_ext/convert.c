/* convert.c -- the binding's shared checks: arrays as the core expects
 * them, and core errors as CoreError. */
#include "ext.h"

PyObject *CoreError;

static const char *arg_names[] = {
    [KB_ARG_NONE] = "",           [KB_ARG_TIMES] = "times",
    [KB_ARG_VALUES] = "values",   [KB_ARG_TENSION] = "tension",
    [KB_ARG_CONTINUITY] = "continuity", [KB_ARG_BIAS] = "bias",
    [KB_ARG_EASE_FROM] = "ease_from", [KB_ARG_EASE_TO] = "ease_to",
    [KB_ARG_START_TANGENT] = "start_tangent", [KB_ARG_END_TANGENT] = "end_tangent",
    [KB_ARG_T] = "t",                 [KB_ARG_QUATERNIONS] = "quaternions",
    [KB_ARG_TANGENTS] = "tangents",
};

PyObject *raise_core_error(kb_status status, const kb_error *err)
{
    if (status == KB_ENOMEM)
        return PyErr_NoMemory();
    const char *arg = (err->arg >= KB_ARG_NONE && err->arg <= KB_ARG_TANGENTS)
                          ? arg_names[err->arg] : "";
    PyObject *args = Py_BuildValue("(ssnni)", kb_strerror(status), arg,
                                   (Py_ssize_t)err->track, (Py_ssize_t)err->index,
                                   (int)status);
    if (args) {
        PyErr_SetObject(CoreError, args);
        Py_DECREF(args);
    }
    return NULL;
}

/* Checks that array a has ndim dimensions and is C-contiguous, aligned,
 * native-endian and, if asked, writeable; 0 with a ValueError if not. */
int check_layout(PyArrayObject *a, const char *name, int ndim, int writeable)
{
    if (PyArray_NDIM(a) != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must have %d dimensions, not %d", name, ndim,
                     PyArray_NDIM(a));
        return 0;
    }
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a) ||
        !PyArray_ISNOTSWAPPED(a)) {
        PyErr_Format(PyExc_ValueError, "%s must be C-contiguous, aligned, native-endian",
                     name);
        return 0;
    }
    if (writeable && !PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s must be writeable", name);
        return 0;
    }
    return 1;
}

/* Checks that obj is a float64 array laid out as check_layout asks (or
 * None when allowed); 0 with an exception set if not.  Shapes are
 * compared by the callers. */
int check_array(PyObject *obj, const char *name, int ndim, int allow_none,
                int writeable, int float32_ok, PyArrayObject **arr)
{
    *arr = NULL;
    if (obj == Py_None && allow_none)
        return 1;
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a NumPy array", name);
        return 0;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int type = PyArray_TYPE(a);
    if (!(type == NPY_DOUBLE || (float32_ok && type == NPY_FLOAT))) {
        PyErr_Format(PyExc_TypeError, "%s must be float64%s", name,
                     float32_ok ? " or float32" : "");
        return 0;
    }
    if (!check_layout(a, name, ndim, writeable))
        return 0;
    *arr = a;
    return 1;
}

int expect_dim(PyArrayObject *a, int axis, npy_intp n, const char *name)
{
    if (PyArray_DIM(a, axis) != n) {
        PyErr_Format(PyExc_ValueError, "%s has %zd entries along axis %d, expected %zd",
                     name, (Py_ssize_t)PyArray_DIM(a, axis), axis, (Py_ssize_t)n);
        return 0;
    }
    return 1;
}

/* A float64 array of shape dims[0 .. ndim) (C-contiguous; writeable if
 * asked); its data, or NULL with an exception set. */
double *shaped(PyObject *obj, const char *name, int ndim, const npy_intp *dims,
               int writeable)
{
    PyArrayObject *a;
    if (!check_array(obj, name, ndim, 0, writeable, 0, &a))
        return NULL;
    for (int axis = 0; axis < ndim; axis++)
        if (!expect_dim(a, axis, dims[axis], name))
            return NULL;
    return PyArray_DATA(a);
}

/* A per-key or per-track row parameter: shape (n,) shared or (n_tracks, n). */
int as_param(PyObject *obj, const char *name, npy_intp n_tracks, npy_intp n,
             int allow_none, kb_param *p)
{
    PyArrayObject *a;
    p->data = NULL;
    p->stride = 0;
    if (obj == Py_None && allow_none)
        return 1;
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a NumPy array", name);
        return 0;
    }
    int ndim = PyArray_NDIM((PyArrayObject *)obj) == 1 ? 1 : 2;
    if (!check_array(obj, name, ndim, 0, 0, 0, &a))
        return 0;
    if (!expect_dim(a, ndim - 1, n, name) || (ndim == 2 && !expect_dim(a, 0, n_tracks, name)))
        return 0;
    p->data = (const double *)PyArray_DATA(a);
    p->stride = ndim == 2 ? n : 0;
    return 1;
}

/* The per-key rows shared by position and rotation keys: times, TCB, ease. */
int as_key_params(PyObject *const o[6], npy_intp B, npy_intp K, kb_param *p[6])
{
    static const char *names[6] = {"times", "tension", "continuity", "bias", "ease_from",
                                   "ease_to"};
    for (int i = 0; i < 6; i++)
        if (!as_param(o[i], names[i], B, K, 0, p[i]))
            return 0;
    return 1;
}

/* Given tangents (incoming, outgoing): None each, or (B, K, D) each. */
int as_given(PyObject *o_in, PyObject *o_out, npy_intp B, npy_intp K, npy_intp D,
             const double **given_in, const double **given_out)
{
    PyObject *const objs[2] = {o_in, o_out};
    const double **given[2] = {given_in, given_out};
    for (int i = 0; i < 2; i++) {
        PyArrayObject *a;
        if (!check_array(objs[i], "tangents", 3, 1, 0, 0, &a) ||
            (a && (!expect_dim(a, 0, B, "tangents") || !expect_dim(a, 1, K, "tangents") ||
                   !expect_dim(a, 2, D, "tangents"))))
            return 0;
        *given[i] = a ? (const double *)PyArray_DATA(a) : NULL;
    }
    return 1;
}

PyObject *new_array(int ndim, npy_intp *dims)
{
    return PyArray_SimpleNew(ndim, dims, NPY_DOUBLE);
}

/* Cuts out, a new array this call made and shares with nothing, down to
 * its first n rows in place (realloc'd: a slice's view of them cost each
 * call about as much as parsing its arguments); 0 with an exception. */
int cut_rows(PyObject *out, npy_intp n)
{
    PyArrayObject *a = (PyArrayObject *)out;
    npy_intp dims[2] = {n, PyArray_NDIM(a) > 1 ? PyArray_DIM(a, 1) : 0};
    PyArray_Dims shape = {dims, PyArray_NDIM(a)};
    PyObject *none = PyArray_Resize(a, &shape, 0, NPY_CORDER);
    Py_XDECREF(none);
    return none != NULL;
}
