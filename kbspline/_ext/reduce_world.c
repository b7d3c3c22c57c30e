/* reduce_world.c -- key reduction's world-space search and its trials. */
#include "ext.h"
#include "motion/reduce/reduce_internal.h"

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

PyMethodDef kbpy_reduce_world_methods[] = {
    {"reduce_world_greedy", reduce_world_greedy, METH_VARARGS, reduce_world_greedy_doc},
    {"reduce_world_swept", reduce_world_swept, METH_VARARGS, reduce_world_swept_doc},
    {"world_trial", world_trial, METH_VARARGS, world_trial_doc},
    {"world_accept", world_accept, METH_VARARGS, world_accept_doc},
    {NULL, NULL, 0, NULL},
};
