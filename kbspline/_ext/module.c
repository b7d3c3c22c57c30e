/*
 * module.c -- the CPython binding of the kbspline C core: its module
 * (kbspline._kbspline), the methods of the files beside this one, and its
 * constants.
 *
 * Thin on purpose: the Python layer shapes and broadcasts arguments; these
 * files check that every array they are handed is what the core expects
 * (float64, C-contiguous, aligned, the right shape), allocate results,
 * release the GIL around the core, and turn a core error into
 * kbspline._kbspline.CoreError(status, argument, track, index), which the
 * Python layer rewords with the user's own names and indices.
 */
#define KB_EXT_MODULE  /* this file imports NumPy's C API */
#include "ext.h"

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kbspline._kbspline",
    "The CPython binding of the kbspline C core (private).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kbspline(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    PyMethodDef *const tables[] = {kbpy_splines_methods, kbpy_quaternions_methods,
                                   kbpy_kinematics_methods, kbpy_reduce_methods,
                                   kbpy_reduce_world_methods};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        if (PyModule_AddFunctions(m, tables[i]) < 0) {
            Py_DECREF(m);
            return NULL;
        }
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
    if (kbpy_add_quat_constants(m) < 0) {
        Py_DECREF(m);
        return NULL;
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
