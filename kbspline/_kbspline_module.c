/*
 * _kbspline_module.c -- the CPython binding of the kbspline C core.
 *
 * Thin on purpose: the Python layer shapes and broadcasts arguments; this
 * file checks that every array it is handed is what the core expects
 * (float64, C-contiguous, aligned, the right shape), allocates results,
 * releases the GIL around the core, and turns a core error into
 * kbspline._kbspline.CoreError(status, argument, track, index), which the
 * Python layer rewords with the user's own names and indices.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#define NPY_NO_DEPRECATED_API NPY_1_25_API_VERSION
#include <numpy/arrayobject.h>

#include "kbspline.h"

static PyObject *CoreError;

static const char *arg_names[] = {
    [KB_ARG_NONE] = "",           [KB_ARG_TIMES] = "times",
    [KB_ARG_VALUES] = "values",   [KB_ARG_TENSION] = "tension",
    [KB_ARG_CONTINUITY] = "continuity", [KB_ARG_BIAS] = "bias",
    [KB_ARG_EASE_FROM] = "ease_from", [KB_ARG_EASE_TO] = "ease_to",
    [KB_ARG_START_TANGENT] = "start_tangent", [KB_ARG_END_TANGENT] = "end_tangent",
    [KB_ARG_T] = "t",                 [KB_ARG_QUATERNIONS] = "quaternions",
    [KB_ARG_TANGENTS] = "tangents",
};

static PyObject *raise_core_error(kb_status status, const kb_error *err)
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
static int check_layout(PyArrayObject *a, const char *name, int ndim, int writeable)
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
static int check_array(PyObject *obj, const char *name, int ndim, int allow_none,
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

static int expect_dim(PyArrayObject *a, int axis, npy_intp n, const char *name)
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
static double *shaped(PyObject *obj, const char *name, int ndim, const npy_intp *dims,
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
static int as_param(PyObject *obj, const char *name, npy_intp n_tracks, npy_intp n,
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
static int as_key_params(PyObject *const o[6], npy_intp B, npy_intp K, kb_param *p[6])
{
    static const char *names[6] = {"times", "tension", "continuity", "bias", "ease_from",
                                   "ease_to"};
    for (int i = 0; i < 6; i++)
        if (!as_param(o[i], names[i], B, K, 0, p[i]))
            return 0;
    return 1;
}

/* Given tangents (incoming, outgoing): None each, or (B, K, D) each. */
static int as_given(PyObject *o_in, PyObject *o_out, npy_intp B, npy_intp K, npy_intp D,
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

static PyObject *new_array(int ndim, npy_intp *dims)
{
    return PyArray_SimpleNew(ndim, dims, NPY_DOUBLE);
}

/* Cuts out, a new array this call made and shares with nothing, down to
 * its first n rows in place (realloc'd: a slice's view of them cost each
 * call about as much as parsing its arguments); 0 with an exception. */
static int cut_rows(PyObject *out, npy_intp n)
{
    PyArrayObject *a = (PyArrayObject *)out;
    npy_intp dims[2] = {n, PyArray_NDIM(a) > 1 ? PyArray_DIM(a, 1) : 0};
    PyArray_Dims shape = {dims, PyArray_NDIM(a)};
    PyObject *none = PyArray_Resize(a, &shape, 0, NPY_CORDER);
    Py_XDECREF(none);
    return none != NULL;
}

PyDoc_STRVAR(tcb_build_doc,
"tcb_build(times, values, tension, continuity, bias, ease_from, ease_to,\n"
"          start_tangent, end_tangent, timing, ends, with_ease, with_tangents,\n"
"          n_threads, given_in, given_out)\n"
"-> (tan_in or None, tan_out or None, coef, ease or None)\n\n"
"values (B, K, D); times and the per-key parameters (K,) or (B, K);\n"
"start/end tangents None, (D,) or (B, D); given_in, given_out None or\n"
"(B, K, D), the tangents per time.  Private: use PositionSpline.");

static PyObject *tcb_build(PyObject *self, PyObject *args)
{
    PyObject *o_times, *o_values, *o_t, *o_c, *o_b, *o_ef, *o_et, *o_st, *o_en, *o_gin,
             *o_gout;
    int timing, ends, with_ease, with_tangents, n_threads;
    PyArrayObject *values;
    PyObject *tan_in = NULL, *tan_out = NULL, *coef = NULL, *ease = NULL;
    kb_tcb_keys k;
    kb_error err;
    kb_status status;
    (void)self;

    if (!PyArg_ParseTuple(args, "OOOOOOOOOiippiOO", &o_times, &o_values, &o_t, &o_c, &o_b,
                          &o_ef, &o_et, &o_st, &o_en, &timing, &ends, &with_ease,
                          &with_tangents, &n_threads, &o_gin, &o_gout))
        return NULL;
    if (!check_array(o_values, "values", 3, 0, 0, 0, &values))
        return NULL;
    const npy_intp B = PyArray_DIM(values, 0), K = PyArray_DIM(values, 1),
                   D = PyArray_DIM(values, 2);
    k.n_tracks = B;
    k.n_keys = K;
    k.dim = D;
    k.values = (const double *)PyArray_DATA(values);
    k.timing = (kb_timing)timing;
    k.ends = (kb_ends)ends;
    PyObject *const rows[6] = {o_times, o_t, o_c, o_b, o_ef, o_et};
    kb_param *params[6] = {&k.times, &k.tension, &k.continuity, &k.bias, &k.ease_from,
                           &k.ease_to};
    if (!as_key_params(rows, B, K, params) ||
        !as_param(o_st, "start_tangent", B, D, 1, &k.start_tangent) ||
        !as_param(o_en, "end_tangent", B, D, 1, &k.end_tangent) ||
        !as_given(o_gin, o_gout, B, K, D, &k.given_in, &k.given_out))
        return NULL;

    /* Counts, options and sizes are checked before allocating, on a view
     * without tracks (cheap); the build validates every track before
     * writing, with the GIL released. */
    kb_tcb_keys counts = k;
    counts.n_tracks = 0;
    if ((status = kb_tcb_validate(&counts, &err)) != KB_OK)
        return raise_core_error(status, &err);
    const npy_intp S = kb_num_segments(k.ends, K);
    npy_intp dims_keys[3] = {B, K, D}, dims_coef[4] = {B, S, 4, D}, dims_ease[3] = {B, S, 2};
    tan_in = with_tangents ? new_array(3, dims_keys) : (Py_INCREF(Py_None), Py_None);
    tan_out = with_tangents ? new_array(3, dims_keys) : (Py_INCREF(Py_None), Py_None);
    coef = new_array(4, dims_coef);
    ease = with_ease ? new_array(3, dims_ease) : (Py_INCREF(Py_None), Py_None);
    if (!tan_in || !tan_out || !coef || !ease)
        goto fail;

    double *p_in = with_tangents ? PyArray_DATA((PyArrayObject *)tan_in) : NULL;
    double *p_out = with_tangents ? PyArray_DATA((PyArrayObject *)tan_out) : NULL;
    double *p_coef = PyArray_DATA((PyArrayObject *)coef);
    double *p_ease = with_ease ? PyArray_DATA((PyArrayObject *)ease) : NULL;
    Py_BEGIN_ALLOW_THREADS
    status = kb_tcb_build_threaded(&k, p_in, p_out, p_coef, p_ease, n_threads, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK) {
        raise_core_error(status, &err);
        goto fail;
    }
    return Py_BuildValue("(NNNN)", tan_in, tan_out, coef, ease);

fail:
    Py_XDECREF(tan_in);
    Py_XDECREF(tan_out);
    Py_XDECREF(coef);
    Py_XDECREF(ease);
    return NULL;
}

PyDoc_STRVAR(alpha_times_doc,
"alpha_times(values, alpha) -> times\n\n"
"values (B, K, D) -> times (B, K): cumulative key distances ** alpha.  Private.");

static PyObject *alpha_times(PyObject *self, PyObject *args)
{
    PyObject *o_values, *times;
    PyArrayObject *values;
    double alpha;
    kb_error err;
    kb_status status;
    (void)self;

    if (!PyArg_ParseTuple(args, "Od", &o_values, &alpha) ||
        !check_array(o_values, "values", 3, 0, 0, 0, &values))
        return NULL;
    npy_intp dims[2] = {PyArray_DIM(values, 0), PyArray_DIM(values, 1)};
    times = new_array(2, dims);
    if (!times)
        return NULL;
    const double *x = PyArray_DATA(values);
    double *t = PyArray_DATA((PyArrayObject *)times);
    Py_BEGIN_ALLOW_THREADS
    status = kb_alpha_times(dims[0], dims[1], PyArray_DIM(values, 2), x, alpha, t, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK) {
        Py_DECREF(times);
        return raise_core_error(status, &err);
    }
    return times;
}

PyDoc_STRVAR(curve_eval_doc,
"curve_eval(knots, coef, ease, extrap, nu, n_threads, t, out) -> None\n\n"
"knots (S+1,) or (B, S+1); coef (B, S, 4, D); ease None or (B, S, 2);\n"
"t (M,) or (B, M); out (B, M, D) float64 or float32, written in place.\n"
"Private: use PositionSpline.");

/* The arrays of a built position spline, checked and viewed as a curve. */
static int parse_pos_curve(PyObject *o_knots, PyObject *o_coef, PyObject *o_ease, int extrap,
                           kb_curve *c)
{
    PyArrayObject *coef, *ease;
    kb_param knots;
    if (!check_array(o_coef, "coef", 4, 0, 0, 0, &coef) ||
        !check_array(o_ease, "ease", 3, 1, 0, 0, &ease))
        return 0;
    const npy_intp B = PyArray_DIM(coef, 0), S = PyArray_DIM(coef, 1);
    if (!expect_dim(coef, 2, 4, "coef") ||
        (ease && (!expect_dim(ease, 0, B, "ease") || !expect_dim(ease, 1, S, "ease") ||
                  !expect_dim(ease, 2, 2, "ease"))) ||
        !as_param(o_knots, "knots", B, S + 1, 0, &knots))
        return 0;
    c->n_tracks = B;
    c->n_seg = S;
    c->dim = PyArray_DIM(coef, 3);
    c->knots = knots.data;
    c->knots_stride = knots.stride;
    c->coef = (const double *)PyArray_DATA(coef);
    c->ease = ease ? (const double *)PyArray_DATA(ease) : NULL;
    c->extrap = (kb_extrap)extrap;
    return 1;
}

/* Query times (M,) or (B, M) as a parameter row. */
static int parse_queries(PyObject *o_t, const char *name, npy_intp B, kb_param *t, npy_intp *M)
{
    if (!PyArray_Check(o_t)) {
        PyErr_Format(PyExc_TypeError, "%s must be a NumPy array", name);
        return 0;
    }
    const int ndim = PyArray_NDIM((PyArrayObject *)o_t);
    *M = ndim >= 1 ? PyArray_DIM((PyArrayObject *)o_t, ndim - 1) : 0;
    return as_param(o_t, name, B, *M, 0, t);
}

static PyObject *curve_eval(PyObject *self, PyObject *args)
{
    PyObject *o_knots, *o_coef, *o_ease, *o_t, *o_out;
    int extrap, nu, n_threads;
    PyArrayObject *out;
    kb_curve c;
    kb_param t;
    npy_intp M;
    kb_error err;
    kb_status status;
    (void)self;

    if (!PyArg_ParseTuple(args, "OOOiiiOO", &o_knots, &o_coef, &o_ease, &extrap, &nu,
                          &n_threads, &o_t, &o_out) ||
        !parse_pos_curve(o_knots, o_coef, o_ease, extrap, &c) ||
        !check_array(o_out, "out", 3, 0, 1, 1, &out) ||
        !parse_queries(o_t, "t", c.n_tracks, &t, &M))
        return NULL;
    if (!expect_dim(out, 0, c.n_tracks, "out") || !expect_dim(out, 1, M, "out") ||
        !expect_dim(out, 2, c.dim, "out"))
        return NULL;
    const int f32 = PyArray_TYPE(out) == NPY_FLOAT;
    double *out64 = f32 ? NULL : (double *)PyArray_DATA(out);
    float *out32 = f32 ? (float *)PyArray_DATA(out) : NULL;
    Py_BEGIN_ALLOW_THREADS
    status = kb_curve_eval_threaded(&c, nu, t.data, M, t.stride, n_threads, out64, out32, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(rot_build_doc,
"rot_build(times, quats, tension, continuity, bias, ease_from, ease_to,\n"
"          start_omega, end_omega, timing, ends, with_ease, n_threads, chords,\n"
"          with_ctrl, given_in, given_out)\n"
"-> (tan_in, tan_out, seg, ctrl or None, kind, ease or None)\n\n"
"quats (B, K, 4) scalar first; times and per-key parameters (K,) or (B, K);\n"
"start/end omega None, (3,) or (B, 3); chords None or (B, K - 1, 3), the\n"
"segments' logs of multi-turn keys; given_in, given_out None or (B, K, 3),\n"
"the log-space tangents per time.  Private: use RotationSpline.");

static PyObject *rot_build(PyObject *self, PyObject *args)
{
    PyObject *o_times, *o_quats, *o_t, *o_c, *o_b, *o_ef, *o_et, *o_st, *o_en, *o_chords,
             *o_gin, *o_gout;
    int timing, ends, with_ease, n_threads, with_ctrl;
    PyArrayObject *quats, *chords;
    PyObject *tan_in = NULL, *tan_out = NULL, *seg = NULL, *ctrl = NULL, *kind = NULL,
             *ease = NULL;
    kb_rot_keys k;
    kb_error err;
    kb_status status;
    (void)self;

    if (!PyArg_ParseTuple(args, "OOOOOOOOOiipiOpOO", &o_times, &o_quats, &o_t, &o_c, &o_b,
                          &o_ef, &o_et, &o_st, &o_en, &timing, &ends, &with_ease,
                          &n_threads, &o_chords, &with_ctrl, &o_gin, &o_gout))
        return NULL;
    if (!check_array(o_quats, "quaternions", 3, 0, 0, 0, &quats) ||
        !expect_dim(quats, 2, 4, "quaternions") ||
        !check_array(o_chords, "chords", 3, 1, 0, 0, &chords))
        return NULL;
    const npy_intp B = PyArray_DIM(quats, 0), K = PyArray_DIM(quats, 1);
    if (chords && (!expect_dim(chords, 0, B, "chords") ||
                   !expect_dim(chords, 1, K > 0 ? K - 1 : 0, "chords") ||
                   !expect_dim(chords, 2, 3, "chords")))
        return NULL;
    k.chords = chords ? (const double *)PyArray_DATA(chords) : NULL;
    k.n_tracks = B;
    k.n_keys = K;
    k.quats = (const double *)PyArray_DATA(quats);
    k.timing = (kb_timing)timing;
    k.ends = (kb_ends)ends;
    PyObject *const rows[6] = {o_times, o_t, o_c, o_b, o_ef, o_et};
    kb_param *params[6] = {&k.times, &k.tension, &k.continuity, &k.bias, &k.ease_from,
                           &k.ease_to};
    if (!as_key_params(rows, B, K, params) ||
        !as_param(o_st, "start_angular_velocity", B, 3, 1, &k.start_omega) ||
        !as_param(o_en, "end_angular_velocity", B, 3, 1, &k.end_omega) ||
        !as_given(o_gin, o_gout, B, K, 3, &k.given_in, &k.given_out))
        return NULL;

    /* as in tcb_build */
    kb_rot_keys counts = k;
    counts.n_tracks = 0;
    if ((status = kb_rot_validate(&counts, &err)) != KB_OK)
        return raise_core_error(status, &err);
    const npy_intp S = kb_num_segments(k.ends, K);
    npy_intp dims_tan[3] = {B, K, 3}, dims_seg[3] = {B, S, KB_ROT_SEG};
    npy_intp dims_ctrl[4] = {B, S, 4, 4}, dims_kind[2] = {B, S}, dims_ease[3] = {B, S, 2};
    tan_in = new_array(3, dims_tan);
    tan_out = new_array(3, dims_tan);
    seg = new_array(3, dims_seg);
    ctrl = with_ctrl ? new_array(4, dims_ctrl) : (Py_INCREF(Py_None), Py_None);
    kind = PyArray_SimpleNew(2, dims_kind, NPY_UINT8);
    ease = with_ease ? new_array(3, dims_ease) : (Py_INCREF(Py_None), Py_None);
    if (!tan_in || !tan_out || !seg || !ctrl || !kind || !ease)
        goto fail;

    double *p_in = PyArray_DATA((PyArrayObject *)tan_in);
    double *p_out = PyArray_DATA((PyArrayObject *)tan_out);
    double *p_seg = PyArray_DATA((PyArrayObject *)seg);
    double *p_ctrl = with_ctrl ? PyArray_DATA((PyArrayObject *)ctrl) : NULL;
    unsigned char *p_kind = PyArray_DATA((PyArrayObject *)kind);
    double *p_ease = with_ease ? PyArray_DATA((PyArrayObject *)ease) : NULL;
    Py_BEGIN_ALLOW_THREADS
    status = kb_rot_build_threaded(&k, p_in, p_out, p_seg, p_ctrl, p_kind, p_ease, n_threads,
                                   &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK) {
        raise_core_error(status, &err);
        goto fail;
    }
    return Py_BuildValue("(NNNNNN)", tan_in, tan_out, seg, ctrl, kind, ease);

fail:
    Py_XDECREF(tan_in);
    Py_XDECREF(tan_out);
    Py_XDECREF(seg);
    Py_XDECREF(ctrl);
    Py_XDECREF(kind);
    Py_XDECREF(ease);
    return NULL;
}

PyDoc_STRVAR(rot_eval_doc,
"rot_eval(knots, seg, kind, ease, extrap, nu, body, scalar_first, n_threads, t, out)\n\n"
"knots (S+1,) or (B, S+1); seg (B, S, 16); kind (B, S) uint8; ease None or\n"
"(B, S, 2); t (M,) or (B, M); out (B, M, 4) for nu = 0 else (B, M, 3),\n"
"float64 or float32, written in place.  Private: use RotationSpline.");

/* The arrays of a built rotation spline, checked and viewed as a curve. */
static int parse_rot_curve(PyObject *o_knots, PyObject *o_seg, PyObject *o_kind,
                           PyObject *o_ease, int extrap, kb_rot_curve *c)
{
    PyArrayObject *seg, *ease;
    kb_param knots;
    if (!check_array(o_seg, "seg", 3, 0, 0, 0, &seg) ||
        !check_array(o_ease, "ease", 3, 1, 0, 0, &ease))
        return 0;
    const npy_intp B = PyArray_DIM(seg, 0), S = PyArray_DIM(seg, 1);
    if (!expect_dim(seg, 2, KB_ROT_SEG, "seg") ||
        (ease && (!expect_dim(ease, 0, B, "ease") || !expect_dim(ease, 1, S, "ease") ||
                  !expect_dim(ease, 2, 2, "ease"))) ||
        !as_param(o_knots, "knots", B, S + 1, 0, &knots))
        return 0;
    if (!PyArray_Check(o_kind) || PyArray_TYPE((PyArrayObject *)o_kind) != NPY_UINT8 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o_kind) ||
        PyArray_NDIM((PyArrayObject *)o_kind) != 2 ||
        PyArray_DIM((PyArrayObject *)o_kind, 0) != B ||
        PyArray_DIM((PyArrayObject *)o_kind, 1) != S) {
        PyErr_SetString(PyExc_ValueError, "kind must be a C-contiguous uint8 array (B, S)");
        return 0;
    }
    c->kind = (const unsigned char *)PyArray_DATA((PyArrayObject *)o_kind);
    c->n_tracks = B;
    c->n_seg = S;
    c->knots = knots.data;
    c->knots_stride = knots.stride;
    c->seg = (const double *)PyArray_DATA(seg);
    c->ease = ease ? (const double *)PyArray_DATA(ease) : NULL;
    c->extrap = (kb_extrap)extrap;
    return 1;
}

static PyObject *rot_eval(PyObject *self, PyObject *args)
{
    PyObject *o_knots, *o_seg, *o_kind, *o_ease, *o_t, *o_out;
    int extrap, nu, body, scalar_first, n_threads;
    PyArrayObject *out;
    kb_rot_curve c;
    kb_param t;
    npy_intp M;
    kb_error err;
    kb_status status;
    (void)self;

    if (!PyArg_ParseTuple(args, "OOOOiippiOO", &o_knots, &o_seg, &o_kind, &o_ease, &extrap,
                          &nu, &body, &scalar_first, &n_threads, &o_t, &o_out) ||
        !parse_rot_curve(o_knots, o_seg, o_kind, o_ease, extrap, &c) ||
        !check_array(o_out, "out", 3, 0, 1, 1, &out) ||
        !parse_queries(o_t, "t", c.n_tracks, &t, &M))
        return NULL;
    if (!expect_dim(out, 0, c.n_tracks, "out") || !expect_dim(out, 1, M, "out") ||
        !expect_dim(out, 2, nu == 0 ? 4 : 3, "out"))
        return NULL;
    const int f32 = PyArray_TYPE(out) == NPY_FLOAT;
    double *out64 = f32 ? NULL : (double *)PyArray_DATA(out);
    float *out32 = f32 ? (float *)PyArray_DATA(out) : NULL;
    Py_BEGIN_ALLOW_THREADS
    status = kb_rot_eval_threaded(&c, nu, body, scalar_first, t.data, M, t.stride, n_threads,
                                  out64, out32, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    Py_RETURN_NONE;
}

/* A table handed back by Python: seg_start (B * S + 1,) intp, ascending
 * from 0 to n_panels, and panels (n_panels, 4) float64. */
static int parse_table(PyObject *o_start, PyObject *o_panels, npy_intp B, npy_intp S,
                       kb_table *tab)
{
    PyArrayObject *start, *panels;
    if (!PyArray_Check(o_start) || PyArray_TYPE((PyArrayObject *)o_start) != NPY_INTP ||
        PyArray_NDIM((PyArrayObject *)o_start) != 1 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o_start) ||
        PyArray_DIM((PyArrayObject *)o_start, 0) != B * S + 1) {
        PyErr_SetString(PyExc_ValueError, "seg_start must be intp of shape (B * S + 1,)");
        return 0;
    }
    start = (PyArrayObject *)o_start;
    if (!check_array(o_panels, "panels", 2, 0, 0, 0, &panels) ||
        !expect_dim(panels, 1, 4, "panels"))
        return 0;
    const npy_intp *st = PyArray_DATA(start), n = PyArray_DIM(panels, 0);
    for (npy_intp i = 0; i < B * S; i++)
        if (st[i] < 0 || st[i + 1] <= st[i] || st[i + 1] > n) {
            PyErr_SetString(PyExc_ValueError, "seg_start is not a table of these panels");
            return 0;
        }
    if (B * S > 0 && (st[0] != 0 || st[B * S] != n)) {
        PyErr_SetString(PyExc_ValueError, "seg_start is not a table of these panels");
        return 0;
    }
    tab->n_tracks = B;
    tab->n_seg = S;
    tab->n_panels = n;
    tab->seg_start = (ptrdiff_t *)st;
    tab->panels = (double *)PyArray_DATA(panels);
    return 1;
}

/* A table built by the core, copied into NumPy arrays and freed. */
static PyObject *table_to_arrays(kb_table *tab)
{
    npy_intp n_start = tab->n_tracks * tab->n_seg + 1, dims[2] = {tab->n_panels, 4};
    PyObject *start = PyArray_SimpleNew(1, &n_start, NPY_INTP);
    PyObject *panels = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (start && panels) {
        memcpy(PyArray_DATA((PyArrayObject *)start), tab->seg_start,
               (size_t)n_start * sizeof(ptrdiff_t));
        if (tab->n_panels > 0)  /* an empty batch has no panels: NULL, not to be copied */
            memcpy(PyArray_DATA((PyArrayObject *)panels), tab->panels,
                   (size_t)tab->n_panels * 4 * sizeof(double));
    }
    kb_table_free(tab);
    if (!start || !panels) {
        Py_XDECREF(start);
        Py_XDECREF(panels);
        return NULL;
    }
    return Py_BuildValue("(NN)", start, panels);
}

/* Integral queries: op 1 the integral at times q, op 2 the times at values q;
 * out (B, M) float64. */
static int parse_integral_query(PyObject *o_q, PyObject *o_out, int op, npy_intp B,
                                kb_param *q, npy_intp *M, double **out)
{
    PyArrayObject *a;
    if (op != 1 && op != 2) {
        PyErr_SetString(PyExc_ValueError, "op must be 1 or 2");
        return 0;
    }
    if (!parse_queries(o_q, op == 1 ? "t" : "s", B, q, M) ||
        !check_array(o_out, "out", 2, 0, 1, 0, &a) || !expect_dim(a, 0, B, "out") ||
        !expect_dim(a, 1, *M, "out"))
        return 0;
    *out = PyArray_DATA(a);
    return 1;
}

PyDoc_STRVAR(angle_table_doc,
"angle_table(knots, seg, kind, ease, extrap) -> (seg_start, panels)\n\n"
"The swept-angle table of a rotation spline.  Private.");

static PyObject *angle_table(PyObject *self, PyObject *args)
{
    PyObject *o_knots, *o_seg, *o_kind, *o_ease;
    int extrap;
    kb_rot_curve c;
    kb_table tab;
    kb_error err;
    kb_status status;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOi", &o_knots, &o_seg, &o_kind, &o_ease, &extrap) ||
        !parse_rot_curve(o_knots, o_seg, o_kind, o_ease, extrap, &c))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    status = kb_rot_angle_table(&c, &tab, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    return table_to_arrays(&tab);
}

PyDoc_STRVAR(angle_query_doc,
"angle_query(knots, seg, kind, ease, extrap, op, seg_start, panels, q, out)\n\n"
"op 1: out <- angle at times q; op 2: out <- times at angles q.  Private.");

static PyObject *angle_query(PyObject *self, PyObject *args)
{
    PyObject *o_knots, *o_seg, *o_kind, *o_ease, *o_start, *o_panels, *o_q, *o_out;
    int extrap, op;
    kb_rot_curve c;
    kb_table tab;
    kb_param q;
    npy_intp M;
    double *out;
    kb_error err;
    kb_status status;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOiiOOOO", &o_knots, &o_seg, &o_kind, &o_ease, &extrap,
                          &op, &o_start, &o_panels, &o_q, &o_out) ||
        !parse_rot_curve(o_knots, o_seg, o_kind, o_ease, extrap, &c) ||
        !parse_table(o_start, o_panels, c.n_tracks, c.n_seg, &tab) ||
        !parse_integral_query(o_q, o_out, op, c.n_tracks, &q, &M, &out))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    if (op == 1)
        status = kb_rot_angle(&c, &tab, q.data, M, q.stride, 0, c.n_tracks, out, &err);
    else
        status = kb_rot_time_at_angle(&c, &tab, q.data, M, q.stride, 0, c.n_tracks, out, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(length_table_doc,
"length_table(knots, coef, ease, extrap) -> (seg_start, panels)\n\n"
"The arc-length table of a position spline.  Private.");

static PyObject *length_table(PyObject *self, PyObject *args)
{
    PyObject *o_knots, *o_coef, *o_ease;
    int extrap;
    kb_curve c;
    kb_table tab;
    kb_error err;
    kb_status status;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOi", &o_knots, &o_coef, &o_ease, &extrap) ||
        !parse_pos_curve(o_knots, o_coef, o_ease, extrap, &c))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    status = kb_pos_length_table(&c, &tab, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    return table_to_arrays(&tab);
}

PyDoc_STRVAR(length_query_doc,
"length_query(knots, coef, ease, extrap, op, seg_start, panels, q, out)\n\n"
"op 1: out <- length at times q; op 2: out <- times at lengths q.  Private.");

static PyObject *length_query(PyObject *self, PyObject *args)
{
    PyObject *o_knots, *o_coef, *o_ease, *o_start, *o_panels, *o_q, *o_out;
    int extrap, op;
    kb_curve c;
    kb_table tab;
    kb_param q;
    npy_intp M;
    double *out;
    kb_error err;
    kb_status status;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOiiOOOO", &o_knots, &o_coef, &o_ease, &extrap, &op,
                          &o_start, &o_panels, &o_q, &o_out) ||
        !parse_pos_curve(o_knots, o_coef, o_ease, extrap, &c) ||
        !parse_table(o_start, o_panels, c.n_tracks, c.n_seg, &tab) ||
        !parse_integral_query(o_q, o_out, op, c.n_tracks, &q, &M, &out))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    if (op == 1)
        status = kb_pos_length(&c, &tab, q.data, M, q.stride, 0, c.n_tracks, out, &err);
    else
        status = kb_pos_time_at_length(&c, &tab, q.data, M, q.stride, 0, c.n_tracks, out,
                                       &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    Py_RETURN_NONE;
}

/* The quaternion utilities: widths of each input and output per element. */
enum { Q_MULTIPLY, Q_CONJUGATE, Q_LOG, Q_EXP, Q_SLERP, Q_SQUAD, Q_FROM_AXIS_ANGLE,
       Q_TO_AXIS_ANGLE, Q_TO_MATRIX, Q_FROM_MATRIX, Q_FROM_EULER, Q_TO_EULER, Q_COUNT };
static const struct {
    const char *name;
    int n_in, n_out, in[5], out[2];
} q_ops[Q_COUNT] = {
    [Q_MULTIPLY] = {"MULTIPLY", 2, 1, {4, 4}, {4}},
    [Q_CONJUGATE] = {"CONJUGATE", 1, 1, {4}, {4}},
    [Q_LOG] = {"LOG", 1, 1, {4}, {4}},
    [Q_EXP] = {"EXP", 1, 1, {4}, {4}},
    [Q_SLERP] = {"SLERP", 3, 1, {4, 4, 1}, {4}},
    [Q_SQUAD] = {"SQUAD", 5, 1, {4, 4, 4, 4, 1}, {4}},
    [Q_FROM_AXIS_ANGLE] = {"FROM_AXIS_ANGLE", 2, 1, {3, 1}, {4}},
    [Q_TO_AXIS_ANGLE] = {"TO_AXIS_ANGLE", 1, 2, {4}, {3, 1}},
    [Q_TO_MATRIX] = {"TO_MATRIX", 1, 1, {4}, {9}},
    [Q_FROM_MATRIX] = {"FROM_MATRIX", 1, 1, {9}, {4}},
    [Q_FROM_EULER] = {"FROM_EULER", 1, 1, {3}, {4}},
    [Q_TO_EULER] = {"TO_EULER", 1, 1, {4}, {3}},
};

/* A float64 C-contiguous array of exactly n * width elements. */
static double *flat_data(PyObject *obj, npy_intp n, int width, int writeable)
{
    PyArrayObject *a;
    if (!PyArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "quaternion utility arrays must be NumPy arrays");
        return NULL;
    }
    a = (PyArrayObject *)obj;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(a) ||
        !PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a) ||
        (writeable && !PyArray_ISWRITEABLE(a)) || n > NPY_MAX_INTP / width ||
        PyArray_SIZE(a) != n * width) {
        PyErr_SetString(PyExc_ValueError,
                        "quaternion utility arrays must be float64, C-contiguous, of n * width");
        return NULL;
    }
    return (double *)PyArray_DATA(a);
}

/* Whether n elements of width wa at a and n of width wb at b share memory. */
static int overlap(const double *a, int wa, const double *b, int wb, npy_intp n)
{
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    const uintptr_t a1 = a0 + (uintptr_t)(n * wa) * sizeof(double);
    const uintptr_t b1 = b0 + (uintptr_t)(n * wb) * sizeof(double);
    return n > 0 && a0 < b1 && b0 < a1;
}

PyDoc_STRVAR(quat_util_doc,
"quat_util(op, n, inputs, outputs, axes, extrinsic) -> None\n\n"
"One of the quaternion utilities over n elements of flat float64 arrays;\n"
"an output may be an input of the same width, and overlap no other way.\n"
"Private: use the functions of kbspline.");

static PyObject *quat_util(PyObject *self, PyObject *args)
{
    int op, extrinsic;
    Py_ssize_t n;
    PyObject *ins, *outs;
    int axes[3];
    double *in[5] = {NULL}, *out[2] = {NULL};
    kb_error err = {KB_OK, KB_ARG_NONE, -1, -1};
    kb_status status = KB_OK;
    (void)self;

    if (!PyArg_ParseTuple(args, "inO!O!(iii)p", &op, &n, &PyTuple_Type, &ins, &PyTuple_Type,
                          &outs, &axes[0], &axes[1], &axes[2], &extrinsic))
        return NULL;
    if (op < 0 || op >= Q_COUNT || n < 0 || PyTuple_GET_SIZE(ins) != q_ops[op].n_in ||
        PyTuple_GET_SIZE(outs) != q_ops[op].n_out) {
        PyErr_SetString(PyExc_ValueError, "quat_util: bad operation or argument count");
        return NULL;
    }
    for (int i = 0; i < q_ops[op].n_in; i++)
        if (!(in[i] = flat_data(PyTuple_GET_ITEM(ins, i), n, q_ops[op].in[i], 0)))
            return NULL;
    for (int i = 0; i < q_ops[op].n_out; i++)
        if (!(out[i] = flat_data(PyTuple_GET_ITEM(outs, i), n, q_ops[op].out[i], 1)))
            return NULL;
    for (int i = 0; i < q_ops[op].n_out; i++) {
        const int w = q_ops[op].out[i];
        int bad = i > 0 && overlap(out[0], q_ops[op].out[0], out[i], w, n);
        for (int j = 0; j < q_ops[op].n_in; j++)  /* the same array is computed in place */
            bad |= overlap(out[i], w, in[j], q_ops[op].in[j], n) &&
                   !(out[i] == in[j] && w == q_ops[op].in[j]);
        if (bad) {
            PyErr_Format(PyExc_ValueError, "quat_util: output %d overlaps an input or output "
                         "other than as the same array", i);
            return NULL;
        }
    }

    Py_BEGIN_ALLOW_THREADS
    switch (op) {
    case Q_MULTIPLY: status = kb_quat_multiply(n, in[0], in[1], out[0], &err); break;
    case Q_CONJUGATE: status = kb_quat_conjugate(n, in[0], out[0], &err); break;
    case Q_LOG: status = kb_quat_log(n, in[0], out[0], &err); break;
    case Q_EXP: status = kb_quat_exp(n, in[0], out[0], &err); break;
    case Q_SLERP: status = kb_quat_slerp(n, in[0], in[1], in[2], out[0], &err); break;
    case Q_SQUAD:
        status = kb_quat_squad(n, in[0], in[1], in[2], in[3], in[4], out[0], &err);
        break;
    case Q_FROM_AXIS_ANGLE:
        status = kb_quat_from_axis_angle(n, in[0], in[1], out[0], &err);
        break;
    case Q_TO_AXIS_ANGLE:
        status = kb_quat_to_axis_angle(n, in[0], out[0], out[1], &err);
        break;
    case Q_TO_MATRIX: status = kb_quat_to_matrix(n, in[0], out[0], &err); break;
    case Q_FROM_MATRIX: status = kb_quat_from_matrix(n, in[0], out[0], &err); break;
    case Q_FROM_EULER:
        status = kb_quat_from_euler(n, in[0], axes, extrinsic, out[0], &err);
        break;
    case Q_TO_EULER:
        status = kb_quat_to_euler(n, in[0], axes, extrinsic, out[0], &err);
        break;
    }
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(playback_check_doc,
"playback_check(samples, u, rotation) -> (err_max, bend_max, swept)\n\n"
"samples (n, m, width) of n intervals at fractions u (m,) against linear\n"
"playback between their float32 ends (slerp when rotation, width 4).\n"
"Private: see kbspline.formats.adaptive.");

static PyObject *playback_check(PyObject *self, PyObject *args)
{
    PyObject *o_samples, *o_u, *result = NULL;
    PyArrayObject *samples, *u;
    int rotation;
    kb_error err;
    kb_status status;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOp", &o_samples, &o_u, &rotation) ||
        !check_array(o_samples, "samples", 3, 0, 0, 0, &samples) ||
        !check_array(o_u, "u", 1, 0, 0, 0, &u) ||
        !expect_dim(u, 0, PyArray_DIM(samples, 1), "u"))
        return NULL;
    npy_intp n = PyArray_DIM(samples, 0);
    PyObject *out[3] = {new_array(1, &n), new_array(1, &n), new_array(1, &n)};
    if (out[0] && out[1] && out[2]) {
        Py_BEGIN_ALLOW_THREADS
        status = kb_playback_check(n, PyArray_DIM(samples, 1), PyArray_DIM(samples, 2),
                                   rotation, (const double *)PyArray_DATA(samples),
                                   (const double *)PyArray_DATA(u),
                                   (double *)PyArray_DATA((PyArrayObject *)out[0]),
                                   (double *)PyArray_DATA((PyArrayObject *)out[1]),
                                   (double *)PyArray_DATA((PyArrayObject *)out[2]), &err);
        Py_END_ALLOW_THREADS
        if (status != KB_OK)
            raise_core_error(status, &err);
        else
            result = Py_BuildValue("(OOO)", out[0], out[1], out[2]);
    }
    Py_XDECREF(out[0]);
    Py_XDECREF(out[1]);
    Py_XDECREF(out[2]);
    return result;
}

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
static int check_rows(PyObject *obj, const char *name, npy_intp rows, npy_intp cols,
                      int allow_none, PyArrayObject **arr)
{
    return check_array(obj, name, 2, allow_none, 0, 0, arr) &&
           (!*arr || (expect_dim(*arr, 0, rows, name) && expect_dim(*arr, 1, cols, name)));
}

static int check_clip(PyObject *const o[3], PyArrayObject *a[3])
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
"            rotation_tcb, translation_tcb, memory=None, tangent_keys=False,\n"
"            errors=True)\n"
"-> (keys, rotation_tcb, translation_tcb, angle, distance)\n\n"
"Fewer keys of one joint from fitted ones, keys (K,) with TCB (K, 3) each,\n"
"by kb_reduce_drop; memory = (needed, around, least, context), float64\n"
"(F, 2), intp (F, 4), float64 (F, 2) and intp (F,), the drops that failed,\n"
"read and written (see kb_drop_memory; None: a memory of this call\n"
"alone); the rows are each key's tangent (tangent_keys is read and\n"
"ignored: fitted keys are tangent keys); without errors, angle and\n"
"distance are None (not evaluated).  Private: see kbspline.motion.reduce.");

/* One array of reduce_drop's memory: float64 (or intp) of shape (F, columns)
 * ((F,) for columns 0), C-contiguous and writeable; its data, or NULL with
 * an exception set. */
static void *memory_array(PyObject *obj, const char *name, int intp, npy_intp F,
                          npy_intp columns)
{
    PyArrayObject *a;
    int ndim = columns ? 2 : 1;
    if (!intp && !check_array(obj, name, ndim, 0, 1, 0, &a))
        return NULL;
    if (intp && (!PyArray_Check(obj) || PyArray_TYPE((PyArrayObject *)obj) != NPY_INTP)) {
        PyErr_Format(PyExc_TypeError, "%s must be an intp array", name);
        return NULL;
    }
    if (intp && !check_layout(a = (PyArrayObject *)obj, name, ndim, 1))
        return NULL;
    if (!expect_dim(a, 0, F, name) || (columns && !expect_dim(a, 1, columns, name)))
        return NULL;
    return PyArray_DATA(a);
}

/* reduce_drop's memory: None (*memory NULL: the call keeps its own), or
 * (needed, around, least, context), float64 (F, 2), intp (F, 4), float64
 * (F, 2) and intp (F,), into *store, and *memory then points to it. */
static int drop_memory(PyObject *obj, npy_intp F, kb_drop_memory *store,
                       kb_drop_memory **memory)
{
    *memory = NULL;
    if (obj == Py_None)
        return 1;
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "memory must be None or a tuple (needed, around, least, context)");
        return 0;
    }
    void *data[4];
    const char *names[4] = {"needed", "around", "least", "context"};
    const npy_intp columns[4] = {2, 4, 2, 0};
    for (int i = 0; i < 4; i++)
        if (!(data[i] = memory_array(PyTuple_GET_ITEM(obj, i), names[i], i % 2, F,
                                     columns[i])))
            return 0;
    *store = (kb_drop_memory){data[0], data[1], data[2], data[3]};
    *memory = store;
    return 1;
}

/* reduce_drop (tcb_args 2). */
static PyObject *reduce_joint(PyObject *args, int tcb_args)
{
    PyObject *o[6] = {NULL}, *out[4] = {NULL, NULL, NULL, NULL}, *result = NULL;
    PyObject *memory_obj = Py_None;
    PyArrayObject *a[3], *keys = NULL, *tcb[2] = {NULL, NULL};
    double angle_tolerance, distance_tolerance;
    int tangent_keys = 0, errors = 1;
    kb_drop_memory store, *memory;
    if (!PyArg_ParseTuple(args, "OOOddOOO|Opp", &o[0], &o[1], &o[2], &angle_tolerance,
                          &distance_tolerance, &o[3], &o[4], &o[5], &memory_obj, &tangent_keys,
                          &errors) ||
        !check_clip(o, a) || !expect_dim(a[1], 0, 1, "rotations") ||
        !drop_memory(memory_obj, PyArray_DIM(a[0], 0), &store, &memory) ||
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
    kb_reduce_joint jt = joint_frames(a[0], a[1], a[2], 0, angle_tolerance, distance_tolerance,
                                      tangent_keys);
    kb_error err;
    kb_status status;
    double *outputs[4];
    for (int i = 0; i < 4; i++)
        outputs[i] = out[i] == Py_None ? NULL : (double *)PyArray_DATA((PyArrayObject *)out[i]);
    Py_BEGIN_ALLOW_THREADS
    status = kb_reduce_drop(&jt, (ptrdiff_t *)PyArray_DATA(keys), &n, outputs[0], outputs[1],
                            outputs[2], outputs[3], memory, &err);
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
"             new_rotation_rows, new_translation_rows, frame_worst, limit,\n"
"             memory=None) -> (keys, rotation_rows, translation_rows) or None\n\n"
"The pieces of a joint's new tangent keys (K, rows (K, 3) each) where every\n"
"frame's squared world error, frame_worst (F,), is at most limit squared,\n"
"the old keys elsewhere (kb_reduce_merge); None where no piece that\n"
"differs holds.  memory as reduce_drop's: the drops of pieces that failed\n"
"are recorded there.  Private: see kbspline.motion.reduce.");

static PyObject *reduce_merge(PyObject *self, PyObject *args)
{
    PyObject *o[6], *worst_obj, *memory_obj = Py_None, *out[3] = {NULL, NULL, NULL};
    PyObject *result = NULL;
    PyArrayObject *keys[2] = {NULL, NULL}, *rows[4], *worst;
    double limit;
    kb_drop_memory store, *memory;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOd|O", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &worst_obj, &limit, &memory_obj) ||
        !check_array(worst_obj, "frame_worst", 1, 0, 0, 0, &worst) ||
        !drop_memory(memory_obj, PyArray_DIM(worst, 0), &store, &memory))
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
        PyArray_DATA((PyArrayObject *)out[0]), &n, merged_rows, memory, &err);
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

PyDoc_STRVAR(joint_world_doc,
"joint_world(parent_rot, parent_origin, rotations, offsets, sites, truth,\n"
"            limit=inf, frame_worst=None, out=None)\n"
"-> (world_rot, origin, points, max_error)\n\n"
"One joint in the world: parent_rot (F, 3, 3) and parent_origin (F, 3), or\n"
"None for a root; rotations (F, 4); offsets (F, 3) or (3,); sites (n, 3);\n"
"truth (F, 1 + n, 3) or None.  points is None and max_error the largest\n"
"distance from truth where truth is given, else points (F, 1 + n, 3) and\n"
"max_error None; with a limit, it stops at the first point farther than\n"
"that from truth, or a NaN (max_error its distance, above the limit; the\n"
"rest left undone).  frame_worst, float64 (F,), with truth: each frame's\n"
"largest squared distance is written in where larger (or NaN).  out:\n"
"(world_rot, origin), float64, writeable, to write them into instead of\n"
"new arrays.  Private: see kbspline.motion.world_error.");

static PyObject *joint_world(PyObject *self, PyObject *args)
{
    PyObject *o[7] = {NULL, NULL, NULL, NULL, NULL, NULL, Py_None}, *o_out = Py_None;
    PyObject *out[3] = {NULL, NULL, NULL}, *result = NULL;
    PyArrayObject *a[7];
    double limit = INFINITY;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOO|dOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &limit,
                          &o[6], &o_out) ||
        !check_array(o[2], "rotations", 2, 0, 0, 0, &a[2]) ||
        !expect_dim(a[2], 1, 4, "rotations") ||
        !check_array(o[0], "parent_rot", 3, 1, 0, 0, &a[0]) ||
        !check_array(o[1], "parent_origin", 2, 1, 0, 0, &a[1]) ||
        !check_array(o[4], "sites", 2, 0, 0, 0, &a[4]) || !expect_dim(a[4], 1, 3, "sites") ||
        !check_array(o[5], "truth", 3, 1, 0, 0, &a[5]) ||
        !check_array(o[6], "frame_worst", 1, 1, 1, 0, &a[6]))
        return NULL;
    npy_intp F = PyArray_DIM(a[2], 0), n = PyArray_DIM(a[4], 0);
    if (a[6] && (!a[5] || !expect_dim(a[6], 0, F, "frame_worst"))) {
        if (!a[5])
            PyErr_SetString(PyExc_ValueError, "frame_worst needs truth");
        return NULL;
    }
    if (!PyArray_Check(o[3])) {
        PyErr_SetString(PyExc_TypeError, "offsets must be a NumPy array");
        return NULL;
    }
    if (PyArray_NDIM((PyArrayObject *)o[3]) != 1 && PyArray_NDIM((PyArrayObject *)o[3]) != 2) {
        PyErr_SetString(PyExc_ValueError, "offsets must be an array of shape (F, 3) or (3,)");
        return NULL;
    }
    int shared = PyArray_NDIM((PyArrayObject *)o[3]) == 1;
    if (!check_array(o[3], "offsets", shared ? 1 : 2, 0, 0, 0, &a[3]) ||
        !expect_dim(a[3], shared ? 0 : 1, 3, "offsets") ||
        (!shared && !expect_dim(a[3], 0, F, "offsets")))
        return NULL;
    if ((a[0] == NULL) != (a[1] == NULL)) {
        PyErr_SetString(PyExc_ValueError, "parent_rot and parent_origin: both or neither");
        return NULL;
    }
    if ((a[0] && (!expect_dim(a[0], 0, F, "parent_rot") || !expect_dim(a[0], 1, 3, "parent_rot") ||
                  !expect_dim(a[0], 2, 3, "parent_rot") ||
                  !expect_dim(a[1], 0, F, "parent_origin") ||
                  !expect_dim(a[1], 1, 3, "parent_origin"))) ||
        (a[5] && (!expect_dim(a[5], 0, F, "truth") || !expect_dim(a[5], 1, 1 + n, "truth") ||
                  !expect_dim(a[5], 2, 3, "truth"))))
        return NULL;
    npy_intp rot_dims[3] = {F, 3, 3}, origin_dims[2] = {F, 3}, point_dims[3] = {F, 1 + n, 3};
    if (o_out != Py_None) {  /* the caller's arrays */
        if (!PyTuple_Check(o_out) || PyTuple_GET_SIZE(o_out) != 2) {
            PyErr_SetString(PyExc_TypeError, "out must be (world_rot, origin) or None");
            return NULL;
        }
        for (int i = 0; i < 2; i++) {
            out[i] = PyTuple_GET_ITEM(o_out, i);
            if (!shaped(out[i], i ? "origin" : "world_rot", 3 - i, i ? origin_dims : rot_dims,
                        1))
                return NULL;
            Py_INCREF(out[i]);
        }
    } else {
        out[0] = new_array(3, rot_dims);
        out[1] = new_array(2, origin_dims);
    }
    out[2] = a[5] ? (Py_INCREF(Py_None), Py_None) : new_array(3, point_dims);
    if (!out[0] || !out[1] || !out[2])
        goto done;
    double max_error = 0.0;
    kb_error err;
    kb_status status;
#define KB_DATA(x) ((x) ? (double *)PyArray_DATA(x) : NULL)
    Py_BEGIN_ALLOW_THREADS
    status = kb_joint_world(F, KB_DATA(a[0]), KB_DATA(a[1]), KB_DATA(a[2]), KB_DATA(a[3]),
                            shared ? 0 : 3, n, KB_DATA(a[4]), KB_DATA(a[5]), limit,
                            KB_DATA((PyArrayObject *)out[0]), KB_DATA((PyArrayObject *)out[1]),
                            a[5] ? NULL : KB_DATA((PyArrayObject *)out[2]),
                            a[5] ? &max_error : NULL, KB_DATA(a[6]), &err);
    Py_END_ALLOW_THREADS
#undef KB_DATA
    if (status != KB_OK)
        raise_core_error(status, &err);
    else if (a[5])
        result = Py_BuildValue("(OOOd)", out[0], out[1], out[2], max_error);
    else
        result = Py_BuildValue("(OOOO)", out[0], out[1], out[2], Py_None);
done:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(out[i]);
    return result;
}

PyDoc_STRVAR(reduce_world_greedy_doc,
"reduce_world_greedy(times, rotations, translations, parents, moves, offsets,\n"
"                    n_sites, sites, truth, tolerances, caps, position_tolerance,\n"
"                    first_scale, search_passes, factors, progress, n_threads)\n"
"-> (keys, scales, max_position, max_angle, max_distance, orders, scores,\n"
"    floors, good_scale, best_scale)\n\n"
"The world-space search with greedy keys (kb_reduce_world_greedy) on the\n"
"clip times (F,), rotations (J, F, 4), translations (J, F, 3); parents,\n"
"n_sites intp (J,), moves bool (J,), offsets (J, 3), sites (S, 3), truth\n"
"float64 (every joint's (F, 1 + n_sites, 3) points, raveled one after\n"
"the other), tolerances and caps (J, 2), factors (N,).  progress(passes)\n"
"is called after each pass (None: none), and an exception from it, or a\n"
"signal's (Ctrl-C), stops the search and propagates; n_threads carry the\n"
"greedy orders on.  Returns per joint its keys (a list of J arrays; None\n"
"where no pass held, best_scale then 0), final scale, worst world-space\n"
"error, angle and distance; its greedy order so far, each frame's score\n"
"when keyed (lists of J arrays) and the order's floor; the largest scale\n"
"that held and the scale of the pass the keys came from.  Private: see\n"
"kbspline.motion.reduce.");

/* Calls a Python progress(passes) from the core, which runs without the
 * GIL, or with none (ctx NULL) checks for signals, so that Ctrl-C stops a
 * long search between passes. */
static int call_progress(void *ctx, int passes)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    int stop;
    if (ctx) {
        PyObject *r = PyObject_CallFunction((PyObject *)ctx, "i", passes);
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

/* A list of J 1-D arrays: counts[j] items of `type` from data + j * stride. */
static PyObject *rows_of(npy_intp J, const void *data, npy_intp stride, const ptrdiff_t *counts,
                         int type, size_t item)
{
    PyObject *list = PyList_New(J);
    for (npy_intp j = 0; list && j < J; j++) {
        npy_intp n = counts[j];
        PyObject *row = PyArray_SimpleNew(1, &n, type);
        if (!row) {
            Py_CLEAR(list);
            break;
        }
        memcpy(PyArray_DATA((PyArrayObject *)row), (const char *)data + j * stride * item,
               (size_t)n * item);
        PyList_SET_ITEM(list, j, row);
    }
    return list;
}

/* A list of J arrays (counts[j], 3): joint j's rows from data + j * F * 3. */
static PyObject *table_rows_of(npy_intp J, const double *data, npy_intp F,
                               const ptrdiff_t *counts)
{
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

/* reduce_world_greedy's outputs and its call of the core on a checked clip. */
static PyObject *world_greedy_call(const kb_world_clip *clip, double position_tolerance,
                                   double first_scale, int search_passes,
                                   PyArrayObject *factors, PyObject *progress, int n_threads)
{
    npy_intp J = clip->n_joints, F = clip->n_frames, capacity = F - 2;
    npy_intp JF[2] = {J, F}, JC[2] = {J, capacity};
    PyObject *result = NULL, *out[10] = {
        PyArray_SimpleNew(2, JF, NPY_INTP), PyArray_SimpleNew(1, &J, NPY_INTP),
        new_array(1, &J), new_array(1, &J), new_array(1, &J), new_array(1, &J),
        PyArray_SimpleNew(2, JC, NPY_INTP), new_array(2, JC),
        PyArray_SimpleNew(1, &J, NPY_INTP), new_array(1, &J)};
    int made = 1;
    for (int i = 0; i < 10; i++)
        made = made && out[i];
    if (made) {
        void *data[10];
        for (int i = 0; i < 10; i++)
            data[i] = PyArray_DATA((PyArrayObject *)out[i]);
        kb_world_keys keys = {data[0], data[1], data[2], data[3], data[4], data[5],
                              data[6], data[7], data[8], data[9], 0.0, 0.0};
        kb_error err;
        kb_status status;
        Py_BEGIN_ALLOW_THREADS
        status = kb_reduce_world_greedy(clip, position_tolerance, first_scale, search_passes,
                                        (const double *)PyArray_DATA(factors),
                                        (int)PyArray_DIM(factors, 0),
                                        call_progress, progress == Py_None ? NULL : progress,
                                        n_threads, &keys, &err);
        Py_END_ALLOW_THREADS
        if (status == KB_OK) {
            PyObject *key_rows = keys.best_scale == 0.0
                ? (Py_INCREF(Py_None), Py_None)
                : rows_of(J, keys.keys, F, keys.n_keys, NPY_INTP, sizeof(ptrdiff_t));
            PyObject *order_rows = rows_of(J, keys.order, capacity, keys.n_order, NPY_INTP,
                                           sizeof(ptrdiff_t));
            PyObject *score_rows = rows_of(J, keys.order_score, capacity, keys.n_order,
                                           NPY_DOUBLE, sizeof(double));
            if (key_rows && order_rows && score_rows)
                result = Py_BuildValue("(OOOOOOOOdd)", key_rows, out[2], out[3], out[4],
                                       out[5], order_rows, score_rows, out[9],
                                       keys.good_scale, keys.best_scale);
            Py_XDECREF(key_rows);
            Py_XDECREF(order_rows);
            Py_XDECREF(score_rows);
        } else if (status != KB_ESTOPPED)  /* stopped: progress's exception is set */
            raise_core_error(status, &err);
    } else if (!PyErr_Occurred())
        PyErr_NoMemory();
    for (int i = 0; i < 10; i++)
        Py_XDECREF(out[i]);
    return result;
}

/* The clip of a world search's first arguments, o = (times, rotations,
 * translations, parents, moves, offsets, n_sites, sites, truth, tolerances,
 * caps), checked, into *clip; copies[3] the copies it reads parents, moves
 * and n_sites from (the caller's to release, NULL where not made). */
static int parse_world_clip(PyObject *const o[11], PyArrayObject *copies[3],
                            kb_world_clip *clip)
{
    PyArrayObject *a[3], *sites, *truth, *tolerances, *caps, *offsets;
    copies[0] = copies[1] = copies[2] = NULL;
    if (!check_clip(o, a))
        return 0;
    npy_intp J = PyArray_DIM(a[1], 0), F = PyArray_DIM(a[0], 0);
    if (J < 1 || F < 2) {
        PyErr_SetString(PyExc_ValueError, "need at least one joint and two frames");
        return 0;
    }
    if (!(copies[0] = vector_of(o[3], NPY_INTP, J, "parents")) ||
        !(copies[1] = vector_of(o[4], NPY_UINT8, J, "moves")) ||
        !(copies[2] = vector_of(o[6], NPY_INTP, J, "n_sites")) ||
        !check_rows(o[5], "offsets", J, 3, 0, &offsets) ||
        !check_array(o[7], "sites", 2, 0, 0, 0, &sites) || !expect_dim(sites, 1, 3, "sites") ||
        !check_array(o[8], "truth", 1, 0, 0, 0, &truth) ||
        !check_rows(o[9], "tolerances", J, 2, 0, &tolerances) ||
        !check_rows(o[10], "caps", J, 2, 0, &caps))
        return 0;
    for (npy_intp i = 0; i < 2 * J; i++)
        if (!(((const double *)PyArray_DATA(tolerances))[i] > 0.0) ||
            !(((const double *)PyArray_DATA(caps))[i] > 0.0)) {
            PyErr_SetString(PyExc_ValueError, "tolerances and caps must be positive "
                                              "(infinite for none)");
            return 0;
        }
    const ptrdiff_t *site_counts = (const ptrdiff_t *)PyArray_DATA(copies[2]);
    npy_intp total_sites = 0, points = 0;
    for (npy_intp j = 0; j < J; j++) {
        if (site_counts[j] < 0 || site_counts[j] > PyArray_DIM(sites, 0) - total_sites) {
            PyErr_SetString(PyExc_ValueError, "n_sites must count the rows of sites");
            return 0;
        }
        total_sites += site_counts[j];
    }
    points = J + total_sites;  /* each joint's origin and its sites */
    if (points > PY_SSIZE_T_MAX / 3 / F) {
        PyErr_SetString(PyExc_ValueError, "truth: too many points");
        return 0;
    }
    if (!expect_dim(sites, 0, total_sites, "sites") ||
        !expect_dim(truth, 0, 3 * F * points, "truth"))
        return 0;
    *clip = (kb_world_clip){J, F, (const double *)PyArray_DATA(a[0]),
                            (const double *)PyArray_DATA(a[1]),
                            (const double *)PyArray_DATA(a[2]),
                            (const ptrdiff_t *)PyArray_DATA(copies[0]),
                            (const unsigned char *)PyArray_DATA(copies[1]),
                            (const double *)PyArray_DATA(offsets), site_counts,
                            (const double *)PyArray_DATA(sites),
                            (const double *)PyArray_DATA(truth),
                            (const double *)PyArray_DATA(tolerances),
                            (const double *)PyArray_DATA(caps)};
    return 1;
}

/* Checks a world search's progress (a callable or None). */
static int check_progress(PyObject *progress)
{
    if (progress == Py_None || PyCallable_Check(progress))
        return 1;
    PyErr_SetString(PyExc_TypeError, "progress must be callable or None");
    return 0;
}

/* Checks a world search's scales or factors: a 1-D float64 array of at
 * most INT_MAX entries, each positive and finite (min_n of them at least). */
static int check_scales(PyObject *obj, const char *name, npy_intp min_n, PyArrayObject **a)
{
    if (!check_array(obj, name, 1, 0, 0, 0, a))
        return 0;
    npy_intp n = PyArray_DIM(*a, 0);
    const double *v = (const double *)PyArray_DATA(*a);
    int good = n >= min_n && n <= INT_MAX;
    for (npy_intp i = 0; i < n && good; i++)
        good = v[i] > 0.0 && v[i] < INFINITY;
    if (!good)
        PyErr_Format(PyExc_ValueError, "%s must be %s of positive finite numbers", name,
                     min_n ? "a non-empty array" : "an array");
    return good;
}

static PyObject *reduce_world_greedy(PyObject *self, PyObject *args)
{
    PyObject *o[12], *progress = Py_None, *result = NULL;
    PyArrayObject *copies[3], *factors;
    double position_tolerance, first_scale;
    int search_passes, n_threads;
    kb_world_clip clip;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOddiOOi", &o[0], &o[1], &o[2], &o[3], &o[4],
                          &o[5], &o[6], &o[7], &o[8], &o[9], &o[10], &position_tolerance,
                          &first_scale, &search_passes, &o[11], &progress, &n_threads) ||
        !check_progress(progress))
        return NULL;
    if (n_threads < 1 || search_passes < 1) {
        PyErr_SetString(PyExc_ValueError, "n_threads and search_passes must be at least 1");
        return NULL;
    }
    if (!(position_tolerance >= 0.0 && position_tolerance < INFINITY) ||
        !(first_scale > 0.0 && first_scale < INFINITY)) {
        PyErr_SetString(PyExc_ValueError, "position_tolerance must be finite and not negative, "
                                          "first_scale finite and positive");
        return NULL;
    }
    if (parse_world_clip(o, copies, &clip) &&
        check_array(o[11], "factors", 1, 0, 0, 0, &factors)) {
        if (PyArray_DIM(factors, 0) > INT_MAX)
            PyErr_SetString(PyExc_ValueError, "factors: too many");
        else
            result = world_greedy_call(&clip, position_tolerance, first_scale, search_passes,
                                       factors, progress, n_threads);
    }
    for (int i = 0; i < 3; i++)
        Py_XDECREF(copies[i]);
    return result;
}

PyDoc_STRVAR(reduce_world_swept_doc,
"reduce_world_swept(times, rotations, translations, parents, moves, offsets,\n"
"                   n_sites, sites, truth, tolerances, caps, position_tolerance,\n"
"                   scales, factors, progress, n_threads)\n"
"-> (keys, rotation_rows, translation_rows, max_position, max_angle,\n"
"    max_distance, scale) or None\n\n"
"The world-space search with tangent keys (kb_reduce_world_swept) on the\n"
"clip as reduce_world_greedy takes it; scales (S,) the passes' scales in\n"
"turn, factors (N,) the loosening rounds'.  progress(passes) is called as\n"
"kb_reduce_world_swept says (None: none), and an exception from it, or a\n"
"signal's (Ctrl-C), stops the search and propagates; n_threads sweep and\n"
"drop the joints.  Returns per joint its keys and each key's tangent rows\n"
"(lists of J arrays), worst world-space error, angle and distance, and the\n"
"scale of the pass that held; None where none did.  Private: see\n"
"kbspline.motion.reduce.");

/* reduce_world_swept's outputs and its call of the core on a checked clip. */
static PyObject *world_swept_call(const kb_world_clip *clip, double position_tolerance,
                                  PyArrayObject *scales, PyArrayObject *factors,
                                  PyObject *progress, int n_threads)
{
    npy_intp J = clip->n_joints, F = clip->n_frames, JF[2] = {J, F}, JF3[3] = {J, F, 3};
    PyObject *result = NULL, *out[7] = {
        PyArray_SimpleNew(2, JF, NPY_INTP), PyArray_SimpleNew(1, &J, NPY_INTP),
        new_array(3, JF3), new_array(3, JF3), new_array(1, &J), new_array(1, &J),
        new_array(1, &J)};
    int made = 1;
    for (int i = 0; i < 7; i++)
        made = made && out[i];
    if (made) {
        void *data[7];
        for (int i = 0; i < 7; i++)
            data[i] = PyArray_DATA((PyArrayObject *)out[i]);
        kb_swept_keys keys = {data[0], data[1], data[2], data[3], data[4], data[5], data[6],
                              0.0};
        kb_error err;
        kb_status status;
        Py_BEGIN_ALLOW_THREADS
        status = kb_reduce_world_swept(clip, position_tolerance,
                                       (const double *)PyArray_DATA(scales),
                                       (int)PyArray_DIM(scales, 0),
                                       (const double *)PyArray_DATA(factors),
                                       (int)PyArray_DIM(factors, 0), call_progress,
                                       progress == Py_None ? NULL : progress, n_threads,
                                       &keys, &err);
        Py_END_ALLOW_THREADS
        if (status == KB_OK && keys.scale == 0.0) {
            result = (Py_INCREF(Py_None), Py_None);
        } else if (status == KB_OK) {
            PyObject *rows[3] = {
                rows_of(J, keys.keys, F, keys.n_keys, NPY_INTP, sizeof(ptrdiff_t)),
                table_rows_of(J, keys.rotation_rows, F, keys.n_keys),
                table_rows_of(J, keys.translation_rows, F, keys.n_keys)};
            if (rows[0] && rows[1] && rows[2])
                result = Py_BuildValue("(OOOOOOd)", rows[0], rows[1], rows[2], out[4],
                                       out[5], out[6], keys.scale);
            for (int i = 0; i < 3; i++)
                Py_XDECREF(rows[i]);
        } else if (status != KB_ESTOPPED)  /* stopped: progress's exception is set */
            raise_core_error(status, &err);
    } else if (!PyErr_Occurred())
        PyErr_NoMemory();
    for (int i = 0; i < 7; i++)
        Py_XDECREF(out[i]);
    return result;
}

static PyObject *reduce_world_swept(PyObject *self, PyObject *args)
{
    PyObject *o[13], *progress = Py_None, *result = NULL;
    PyArrayObject *copies[3], *scales, *factors;
    double position_tolerance;
    int n_threads;
    kb_world_clip clip;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOdOOOi", &o[0], &o[1], &o[2], &o[3], &o[4],
                          &o[5], &o[6], &o[7], &o[8], &o[9], &o[10], &position_tolerance,
                          &o[11], &o[12], &progress, &n_threads) ||
        !check_progress(progress))
        return NULL;
    if (n_threads < 1) {
        PyErr_SetString(PyExc_ValueError, "n_threads must be at least 1");
        return NULL;
    }
    if (!(position_tolerance >= 0.0 && position_tolerance < INFINITY)) {
        PyErr_SetString(PyExc_ValueError, "position_tolerance must be finite and not negative");
        return NULL;
    }
    if (parse_world_clip(o, copies, &clip) && check_scales(o[11], "scales", 1, &scales) &&
        check_scales(o[12], "factors", 0, &factors))
        result = world_swept_call(&clip, position_tolerance, scales, factors, progress,
                                  n_threads);
    for (int i = 0; i < 3; i++)
        Py_XDECREF(copies[i]);
    return result;
}

/* A copy (the core reads it without the GIL) of a 1-D array of integers as
 * intp, refusing floats and other casts that would change its values. */
static PyArrayObject *index_vector(PyObject *obj, const char *name)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(
        obj, NPY_INTP, 1, 1, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_ENSURECOPY);
    if (!a && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a 1-D array of integers", name);
    }
    return a;
}

PyDoc_STRVAR(joint_reach_doc,
"joint_reach(parents, n_sites, points) -> reach\n\n"
"(J,) the farthest any point each joint carries (its own and those of the\n"
"joints below it) gets from its origin in any frame (kb_joint_reach):\n"
"parents (J,), each in [-1, j); n_sites (J,); points every joint's points\n"
"(F, 1 + n_sites[j], 3), origin first, one joint after another, flat.\n"
"Private: see kbspline.motion.world_error.");

static PyObject *joint_reach(PyObject *self, PyObject *args)
{
    PyObject *o[3], *result = NULL;
    PyArrayObject *parents = NULL, *n_sites = NULL, *points;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO", &o[0], &o[1], &o[2]) ||
        !check_array(o[2], "points", 1, 0, 0, 0, &points) ||
        !(parents = index_vector(o[0], "parents")))
        return NULL;
    npy_intp J = PyArray_DIM(parents, 0), per_frame = 0;
    if (!(n_sites = index_vector(o[1], "n_sites")) || !expect_dim(n_sites, 0, J, "n_sites"))
        goto done;
    const ptrdiff_t *parent = PyArray_DATA(parents), *sites = PyArray_DATA(n_sites);
    for (npy_intp j = 0; j < J; j++) {
        if (parent[j] < -1 || parent[j] >= j) {
            PyErr_Format(PyExc_ValueError, "parents[%zd] must be in [-1, %zd), not %zd",
                         (Py_ssize_t)j, (Py_ssize_t)j, (Py_ssize_t)parent[j]);
            goto done;
        }
        if (sites[j] < 0 || sites[j] > (PY_SSIZE_T_MAX - per_frame) / 3 - 1) {
            PyErr_Format(PyExc_ValueError, "n_sites[%zd] must be a count of sites, not %zd",
                         (Py_ssize_t)j, (Py_ssize_t)sites[j]);
            goto done;
        }
        per_frame += 3 * (1 + sites[j]);
    }
    npy_intp size = PyArray_DIM(points, 0);
    if (J < 1 || size < per_frame || size % per_frame) {
        PyErr_Format(PyExc_ValueError, "points must hold %zd numbers per frame for %zd joints "
                     "(at least one), not %zd in all", (Py_ssize_t)per_frame, (Py_ssize_t)J,
                     (Py_ssize_t)size);
        goto done;
    }
    npy_intp dims[1] = {J};
    result = new_array(1, dims);
    if (!result)
        goto done;
    kb_error err;
    kb_status status;
    Py_BEGIN_ALLOW_THREADS
    status = kb_joint_reach(J, size / per_frame, parent, sites, PyArray_DATA(points),
                            PyArray_DATA((PyArrayObject *)result), &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK) {
        Py_CLEAR(result);
        raise_core_error(status, &err);
    }
done:
    Py_XDECREF(parents);
    Py_XDECREF(n_sites);
    return result;
}

/* An intp array of shape (n,) (any length where n is negative),
 * C-contiguous and, if asked, writeable (a WorldError's own, not copied);
 * its data, or NULL with an exception set. */
static ptrdiff_t *index_array(PyObject *obj, const char *name, npy_intp n, int writeable)
{
    if (!PyArray_Check(obj) || PyArray_TYPE((PyArrayObject *)obj) != NPY_INTP) {
        PyErr_Format(PyExc_TypeError, "%s must be an intp array", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    if (!check_layout(a, name, 1, writeable) || (n >= 0 && !expect_dim(a, 0, n, name)))
        return NULL;
    return PyArray_DATA(a);
}

/* world_trial's and world_accept's held or trial state, the tuple
 * (rotations (J, F, 4), offsets (J, F, 3), world_rot (J, F, 3, 3), origin
 * (J, F, 3), frame_error (J, F), error (J,)), into *placed; J and F
 * (size[0], size[1]) taken from rotations where negative. */
static int parse_placed(PyObject *obj, const char *name, npy_intp size[2], int writeable,
                        kb_world_placed *placed)
{
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 6) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of 6 arrays", name);
        return 0;
    }
    PyObject *rotations = PyTuple_GET_ITEM(obj, 0);
    if (size[0] < 0) {
        if (!PyArray_Check(rotations) || PyArray_NDIM((PyArrayObject *)rotations) != 3) {
            PyErr_Format(PyExc_ValueError, "%s's rotations must be a (J, F, 4) array", name);
            return 0;
        }
        size[0] = PyArray_DIM((PyArrayObject *)rotations, 0);
        size[1] = PyArray_DIM((PyArrayObject *)rotations, 1);
    }
    const npy_intp J = size[0], F = size[1];
    const npy_intp rows4[3] = {J, F, 4}, rows3[3] = {J, F, 3}, matrices[4] = {J, F, 3, 3};
    return (placed->rotations = shaped(rotations, name, 3, rows4, writeable)) &&
           (placed->offsets = shaped(PyTuple_GET_ITEM(obj, 1), name, 3, rows3, writeable)) &&
           (placed->world_rot = shaped(PyTuple_GET_ITEM(obj, 2), name, 4, matrices, writeable)) &&
           (placed->origin = shaped(PyTuple_GET_ITEM(obj, 3), name, 3, rows3, writeable)) &&
           (placed->frame_error = shaped(PyTuple_GET_ITEM(obj, 4), name, 2, size, writeable)) &&
           (placed->error = shaped(PyTuple_GET_ITEM(obj, 5), name, 1, size, writeable));
}

/* The tuple (parents, n_sites, sites, truth) into *points, for J joints
 * and F frames: parents and n_sites intp (J,), each parent in [-1, j);
 * sites (S, 3), S the sum of n_sites; truth every joint's (F, 1 +
 * n_sites, 3), flat. */
static int parse_world_points(PyObject *obj, npy_intp J, npy_intp F, kb_world_points *points)
{
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 4) {
        PyErr_SetString(PyExc_TypeError, "points must be (parents, n_sites, sites, truth)");
        return 0;
    }
    PyObject *o[4];
    for (int i = 0; i < 4; i++)
        o[i] = PyTuple_GET_ITEM(obj, i);
    if (J < 1 || F < 1) {
        PyErr_SetString(PyExc_ValueError, "the state needs a joint and a frame at least");
        return 0;
    }
    if (!(points->parents = index_array(o[0], "parents", J, 0)) ||
        !(points->n_sites = index_array(o[1], "n_sites", J, 0)))
        return 0;
    npy_intp n_sites = 0, size = 0;
    for (npy_intp j = 0; j < J; j++) {
        const ptrdiff_t p = points->parents[j], n = points->n_sites[j];
        if (p < -1 || p >= j) {
            PyErr_Format(PyExc_ValueError, "parents[%zd] must be in [-1, %zd), not %zd",
                         (Py_ssize_t)j, (Py_ssize_t)j, (Py_ssize_t)p);
            return 0;
        }
        if (n < 0 || n > (PY_SSIZE_T_MAX / 8 - size) / 3 / F - 1) {
            PyErr_Format(PyExc_ValueError, "n_sites[%zd] must be a count of sites, not %zd",
                         (Py_ssize_t)j, (Py_ssize_t)n);
            return 0;
        }
        n_sites += n;
        size += 3 * F * (1 + n);
    }
    const npy_intp site_dims[2] = {n_sites, 3};
    points->n_joints = J;
    points->n_frames = F;
    return (points->sites = shaped(o[2], "sites", 2, site_dims, 0)) &&
           (points->truth = shaped(o[3], "truth", 1, &size, 0));
}

/* Joint j of J, or 0 with a ValueError. */
static int check_joint(Py_ssize_t j, npy_intp J)
{
    if (j >= 0 && j < J)
        return 1;
    PyErr_Format(PyExc_ValueError, "j must be a joint, in [0, %zd), not %zd", (Py_ssize_t)J, j);
    return 0;
}

PyDoc_STRVAR(world_trial_doc,
"world_trial(points, held, trial, runs, j, rotations, offsets, limit=inf,\n"
"            frame_worst=None) -> (worst, n_runs)\n\n"
"Joint j's new curves, rotations (F, 4) and offsets (F, 3) or None (held's:\n"
"a joint its OFFSET places), placed in the world with the joints below it\n"
"at only the frames where they differ from held's (kb_world_trial): points\n"
"(parents, n_sites, sites, truth); held and trial (rotations (J, F, 4),\n"
"offsets (J, F, 3), world_rot (J, F, 3, 3), origin (J, F, 3), frame_error\n"
"(J, F), error (J,)), trial written at those frames only; runs intp\n"
"(F + 1,) takes them as n_runs [first, end) pairs.  worst: every joint's\n"
"largest error, or past limit an error past it.  With frame_worst (F,),\n"
"no stop, and each frame's worst squared error of the moved joints\n"
"written in where larger.  world_accept installs a trial in held.\n"
"Private: see kbspline.motion.world_error.");

static PyObject *world_trial(PyObject *self, PyObject *args)
{
    PyObject *o[5], *o_offsets, *o_frame_worst = Py_None;
    Py_ssize_t j;
    double limit = INFINITY;
    npy_intp size[2] = {-1, -1};
    kb_world_points points;
    kb_world_placed held, trial;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOnOO|dO", &o[0], &o[1], &o[2], &o[3], &j, &o[4],
                          &o_offsets, &limit, &o_frame_worst) ||
        !parse_placed(o[1], "held", size, 0, &held) ||
        !parse_placed(o[2], "trial", size, 1, &trial) ||
        !parse_world_points(o[0], size[0], size[1], &points) || !check_joint(j, size[0]))
        return NULL;
    const npy_intp F = size[1], rows4[2] = {F, 4}, rows3[2] = {F, 3};
    ptrdiff_t *runs = index_array(o[3], "runs", F + 1, 1);
    const double *rotations = shaped(o[4], "rotations", 2, rows4, 0), *offsets = NULL;
    double *frame_worst = NULL;
    if (!runs || !rotations ||
        (o_offsets != Py_None && !(offsets = shaped(o_offsets, "offsets", 2, rows3, 0))) ||
        (o_frame_worst != Py_None &&
         !(frame_worst = shaped(o_frame_worst, "frame_worst", 1, &F, 1))))
        return NULL;
    ptrdiff_t n_runs = 0;
    double worst = 0.0;
    kb_error err;
    kb_status status;
    Py_BEGIN_ALLOW_THREADS
    status = kb_world_trial(&points, &held, j, rotations, offsets, limit, &trial, runs, &n_runs,
                            &worst, frame_worst, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    return Py_BuildValue("(dn)", worst, (Py_ssize_t)n_runs);
}

PyDoc_STRVAR(world_accept_doc,
"world_accept(points, held, trial, runs, n_runs, j) -> None\n\n"
"Installs in held what world_trial of joint j left in trial at its n_runs\n"
"runs (kb_world_accept): j's rows, and the places and errors of j and the\n"
"joints below it.  Private: see kbspline.motion.world_error.");

static PyObject *world_accept(PyObject *self, PyObject *args)
{
    PyObject *o[4];
    Py_ssize_t n_runs, j;
    npy_intp size[2] = {-1, -1};
    kb_world_points points;
    kb_world_placed held, trial;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOnn", &o[0], &o[1], &o[2], &o[3], &n_runs, &j) ||
        !parse_placed(o[1], "held", size, 1, &held) ||
        !parse_placed(o[2], "trial", size, 0, &trial) ||
        !parse_world_points(o[0], size[0], size[1], &points) || !check_joint(j, size[0]))
        return NULL;
    const ptrdiff_t *runs = index_array(o[3], "runs", size[1] + 1, 0);
    if (!runs)
        return NULL;
    if (n_runs < 0 || 2 * n_runs > size[1] + 1) {
        PyErr_Format(PyExc_ValueError, "n_runs must be in [0, %zd], not %zd",
                     (Py_ssize_t)(size[1] + 1) / 2, n_runs);
        return NULL;
    }
    kb_error err;
    kb_status status;
    Py_BEGIN_ALLOW_THREADS
    status = kb_world_accept(&points, j, &trial, runs, n_runs, &held, &err);
    Py_END_ALLOW_THREADS
    if (status != KB_OK)
        return raise_core_error(status, &err);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"tcb_build", tcb_build, METH_VARARGS, tcb_build_doc},
    {"alpha_times", alpha_times, METH_VARARGS, alpha_times_doc},
    {"curve_eval", curve_eval, METH_VARARGS, curve_eval_doc},
    {"rot_build", rot_build, METH_VARARGS, rot_build_doc},
    {"rot_eval", rot_eval, METH_VARARGS, rot_eval_doc},
    {"angle_table", angle_table, METH_VARARGS, angle_table_doc},
    {"angle_query", angle_query, METH_VARARGS, angle_query_doc},
    {"length_table", length_table, METH_VARARGS, length_table_doc},
    {"length_query", length_query, METH_VARARGS, length_query_doc},
    {"quat_util", quat_util, METH_VARARGS, quat_util_doc},
    {"playback_check", playback_check, METH_VARARGS, playback_check_doc},
    {"reduce_greedy", reduce_greedy, METH_VARARGS, reduce_greedy_doc},
    {"reduce_greedy_order", reduce_greedy_order, METH_VARARGS, reduce_greedy_order_doc},
    {"reduce_rebuild", reduce_rebuild, METH_VARARGS, reduce_rebuild_doc},
    {"reduce_errors", reduce_errors, METH_VARARGS, reduce_errors_doc},
    {"joint_world", joint_world, METH_VARARGS, joint_world_doc},
    {"reduce_world_greedy", reduce_world_greedy, METH_VARARGS, reduce_world_greedy_doc},
    {"reduce_world_swept", reduce_world_swept, METH_VARARGS, reduce_world_swept_doc},
    {"reduce_drop", reduce_drop, METH_VARARGS, reduce_drop_doc},
    {"reduce_sweep", reduce_sweep, METH_VARARGS, reduce_sweep_doc},
    {"reduce_merge", reduce_merge, METH_VARARGS, reduce_merge_doc},
    {"joint_reach", joint_reach, METH_VARARGS, joint_reach_doc},
    {"world_trial", world_trial, METH_VARARGS, world_trial_doc},
    {"world_accept", world_accept, METH_VARARGS, world_accept_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kbspline._kbspline",
    "The CPython binding of the kbspline C core (private).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kbspline(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    CoreError = PyErr_NewException("kbspline._kbspline.CoreError", PyExc_ValueError, NULL);
    Py_XINCREF(CoreError);
    if (!CoreError || PyModule_AddObject(m, "CoreError", CoreError) < 0) {
        Py_XDECREF(CoreError);
        Py_DECREF(m);
        return NULL;
    }
    static const struct { const char *name; int value; } codes[] = {
        {"TIMING_KB", KB_TIMING_KB}, {"TIMING_3DS", KB_TIMING_3DS},
        {"TIMING_PARABOLIC", KB_TIMING_PARABOLIC}, {"TIMING_AVERAGE", KB_TIMING_AVERAGE},
        {"ENDS_NATURAL", KB_ENDS_NATURAL}, {"ENDS_PHANTOM", KB_ENDS_PHANTOM},
        {"ENDS_REFLECT", KB_ENDS_REFLECT}, {"ENDS_CLAMPED", KB_ENDS_CLAMPED},
        {"ENDS_CLOSED", KB_ENDS_CLOSED}, {"EXTRAP_CLAMP", KB_EXTRAP_CLAMP},
        {"EXTRAP_LINEAR", KB_EXTRAP_LINEAR}, {"EXTRAP_PERIODIC", KB_EXTRAP_PERIODIC},
        {"EXTRAP_ERROR", KB_EXTRAP_ERROR}, {"MAX_THREADS", KB_MAX_THREADS},
    };
    for (int i = 0; i < Q_COUNT; i++) {
        char name[40];
        PyOS_snprintf(name, sizeof name, "Q_%s", q_ops[i].name);
        if (PyModule_AddIntConstant(m, name, i) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (PyModule_AddIntConstant(m, codes[i].name, codes[i].value) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    /* the compiler that built the core, for benchmark reports */
#if defined(__clang__) || defined(__GNUC__)
    const char *compiler = "gcc-compatible " __VERSION__;
#elif defined(_MSC_VER)
    const char *compiler = "MSVC";
#else
    const char *compiler = "unknown";
#endif
    if (PyModule_AddStringConstant(m, "COMPILER", compiler) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
