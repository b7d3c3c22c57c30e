"""What machine a benchmark ran on, for the line every report starts with:
processor (model name, family and model numbers), cores, the compiler that
built kbspline's core, and the versions of Python, NumPy and SciPy."""
import os
import platform

import numpy as np

from kbspline import _kbspline


def cpuinfo():
    """The first processor's fields from /proc/cpuinfo ({} elsewhere)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def describe():
    """One line: CPU, cores, compiler, library versions."""
    info = cpuinfo()
    cpu = info.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in info:
        cpu += f" (family {info['cpu family']}, model {info.get('model', '?')})"
    try:
        import scipy
        scipy_version = scipy.__version__
    except ImportError:
        scipy_version = "absent"
    return (f"machine: {cpu}, {os.cpu_count()} cores, {platform.machine()}; core built by "
            f"{_kbspline.COMPILER}; Python {platform.python_version()}, NumPy {np.__version__}, "
            f"SciPy {scipy_version}")


if __name__ == "__main__":
    print(describe())
