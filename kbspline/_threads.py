"""How many threads large evaluations may use."""
from __future__ import annotations

import os

_ENV = "KBSPLINE_NUM_THREADS"


def _default() -> int:
    value = os.environ.get(_ENV)
    if value:
        try:
            n = int(value)
        except ValueError:
            raise ValueError(f"{_ENV} must be a whole number, not {value!r}") from None
        if n < 1:
            raise ValueError(f"{_ENV} must be at least 1, not {n}")
        return n
    return os.cpu_count() or 1


_num_threads = _default()


def set_num_threads(n: int) -> int:
    """Let large evaluations use up to `n` threads (default: all cores, or
    the environment variable KBSPLINE_NUM_THREADS).  Calls with little work
    stay on one thread; results are identical for any `n`.  Returns the
    previous setting.

    >>> previous = set_num_threads(1)
    >>> set_num_threads(previous)
    1
    """
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, not {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    previous, _num_threads = _num_threads, n
    return previous


def get_num_threads() -> int:
    """The current limit set by `set_num_threads`.

    >>> get_num_threads() >= 1
    True
    """
    return _num_threads
