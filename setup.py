"""Builds the kbspline extension: the C core in csrc/ (its folders by area) plus
its CPython binding."""
import glob
import os
import sys

import numpy
from setuptools import Extension, setup

if sys.platform == "win32":
    compile_args, link_args = ["/O2"], []
else:
    # -O3 class optimisation that stays portable: no -march=native in wheels.
    # -fno-wrapv undoes the -fwrapv in Python's own flags (signed overflow
    # wraps), which slowed the streamed position sweep; it leaves every loop
    # free of that constraint (docs/benchmarks.md, Tuning notes).
    compile_args = ["-std=c11", "-O3", "-fno-wrapv", "-Wall", "-Wextra", "-Wno-psabi",
                    "-fno-math-errno", "-ffp-contract=off", "-pthread"]
    link_args = ["-pthread"]
    # Python's own flags carry -g: a wheel drops the debug info (-g0 after -g
    # wins) and its symbols; builds in place and builds with CFLAGS of their
    # own (sanitizers, gdb, callgrind) keep them.
    if "bdist_wheel" in sys.argv and not os.environ.get("CFLAGS"):
        compile_args.append("-g0")
        if sys.platform != "darwin":
            link_args.append("-s")

# The core: every C file under csrc/ but its tests and fuzz target.
_CORE = sorted(p for p in glob.glob("csrc/**/*.c", recursive=True)
               if not p.startswith(("csrc/tests/", "csrc/fuzz/")))
_BINDING = sorted(glob.glob("kbspline/_ext/*.c"))

setup(
    ext_modules=[
        Extension(
            "kbspline._kbspline",
            sources=_BINDING + _CORE,
            include_dirs=["csrc/include", "csrc", numpy.get_include()],
            # KB_BUILDING_LIBRARY opens the core's private headers to its own build
            define_macros=[("NPY_TARGET_VERSION", "NPY_1_25_API_VERSION"),
                           ("KB_BUILDING_LIBRARY", None)],
            extra_compile_args=compile_args,
            extra_link_args=link_args,
        )
    ]
)
