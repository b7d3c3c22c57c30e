/* quaternions.c -- the quaternion utilities (kbspline.quaternion). */
#include "ext.h"

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

/* The operation codes, Q_MULTIPLY..., as module constants. */
int kbpy_add_quat_constants(PyObject *m)
{
    for (int i = 0; i < Q_COUNT; i++) {
        char name[40];
        PyOS_snprintf(name, sizeof name, "Q_%s", q_ops[i].name);
        if (PyModule_AddIntConstant(m, name, i) < 0)
            return -1;
    }
    return 0;
}

PyMethodDef kbpy_quaternions_methods[] = {
    {"quat_util", quat_util, METH_VARARGS, quat_util_doc},
    {NULL, NULL, 0, NULL},
};
