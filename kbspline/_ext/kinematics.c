/* kinematics.c -- forward kinematics of a joint hierarchy. */
#include "ext.h"
#include "kb_internal.h"  /* kb_joint_reach */

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
    status = kb_joint_world_error(F, KB_DATA(a[0]), KB_DATA(a[1]), KB_DATA(a[2]), KB_DATA(a[3]),
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

PyMethodDef kbpy_kinematics_methods[] = {
    {"joint_world", joint_world, METH_VARARGS, joint_world_doc},
    {"joint_reach", joint_reach, METH_VARARGS, joint_reach_doc},
    {NULL, NULL, 0, NULL},
};
