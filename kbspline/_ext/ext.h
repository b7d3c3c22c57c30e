/* ext.h -- private to the binding: what its files (module.c, convert.c and
 * one per area) share.  NumPy's C API is imported once, in module.c; the
 * others reach it through PY_ARRAY_UNIQUE_SYMBOL. */
#ifndef KB_BUILDING_LIBRARY
#error "This header is private to kbspline's binding"
#endif
#ifndef KB_EXT_H
#define KB_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#define NPY_NO_DEPRECATED_API NPY_1_25_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL kbspline_ARRAY_API
#ifndef KB_EXT_MODULE
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "kbspline/kbspline.h"

/* kbspline._kbspline.CoreError, made by module.c. */
extern PyObject *CoreError;

/* convert.c: core errors as exceptions, and arrays checked as the core
 * expects them (each comment is at its definition). */
PyObject *raise_core_error(kb_status status, const kb_error *err);
int check_layout(PyArrayObject *a, const char *name, int ndim, int writeable);
int check_array(PyObject *obj, const char *name, int ndim, int allow_none,
                int writeable, int float32_ok, PyArrayObject **arr);
int expect_dim(PyArrayObject *a, int axis, npy_intp n, const char *name);
double *shaped(PyObject *obj, const char *name, int ndim, const npy_intp *dims,
               int writeable);
int as_param(PyObject *obj, const char *name, npy_intp n_tracks, npy_intp n,
             int allow_none, kb_param *p);
int as_key_params(PyObject *const o[6], npy_intp B, npy_intp K, kb_param *p[6]);
int as_given(PyObject *o_in, PyObject *o_out, npy_intp B, npy_intp K, npy_intp D,
             const double **given_in, const double **given_out);
PyObject *new_array(int ndim, npy_intp *dims);
int cut_rows(PyObject *out, npy_intp n);

/* reduce.c: a joint's frames and key rows checked, shared with reduce_world.c. */
int check_rows(PyObject *obj, const char *name, npy_intp rows, npy_intp cols,
               int allow_none, PyArrayObject **arr);
int check_clip(PyObject *const o[3], PyArrayObject *a[3]);

/* quaternions.c: the Q_... operation codes as module constants. */
int kbpy_add_quat_constants(PyObject *m);

/* Each area's methods, for module.c. */
extern PyMethodDef kbpy_splines_methods[], kbpy_quaternions_methods[],
    kbpy_kinematics_methods[], kbpy_reduce_methods[], kbpy_reduce_world_methods[];

#endif /* KB_EXT_H */
