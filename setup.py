"""Builds the kbspline extension: the C core in csrc/ plus its CPython binding."""
import glob
import sys

import numpy
from setuptools import Extension, setup

if sys.platform == "win32":
    compile_args, link_args = ["/O2"], []
else:
    # -O3 class optimisation that stays portable: no -march=native in wheels.
    compile_args = ["-std=c11", "-O3", "-Wall", "-Wextra", "-Wno-psabi", "-fno-math-errno",
                    "-ffp-contract=off", "-pthread"]
    link_args = ["-pthread"]

setup(
    ext_modules=[
        Extension(
            "kbspline._kbspline",
            sources=["kbspline/_kbspline_module.c"] + sorted(glob.glob("csrc/kb_*.c")),
            include_dirs=["csrc", numpy.get_include()],
            define_macros=[("NPY_TARGET_VERSION", "NPY_1_25_API_VERSION")],
            extra_compile_args=compile_args,
            extra_link_args=link_args,
        )
    ]
)
