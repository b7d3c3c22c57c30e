/* splines.c -- position and rotation splines: build, evaluate, lengths
 * and angles, and the exporters' playback check. */
#include "ext.h"
#include "motion/kb_playback.h"

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

PyMethodDef kbpy_splines_methods[] = {
    {"tcb_build", tcb_build, METH_VARARGS, tcb_build_doc},
    {"alpha_times", alpha_times, METH_VARARGS, alpha_times_doc},
    {"curve_eval", curve_eval, METH_VARARGS, curve_eval_doc},
    {"rot_build", rot_build, METH_VARARGS, rot_build_doc},
    {"rot_eval", rot_eval, METH_VARARGS, rot_eval_doc},
    {"angle_table", angle_table, METH_VARARGS, angle_table_doc},
    {"angle_query", angle_query, METH_VARARGS, angle_query_doc},
    {"length_table", length_table, METH_VARARGS, length_table_doc},
    {"length_query", length_query, METH_VARARGS, length_query_doc},
    {"playback_check", playback_check, METH_VARARGS, playback_check_doc},
    {NULL, NULL, 0, NULL},
};
