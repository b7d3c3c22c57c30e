"""How many threads large evaluations may use."""
from __future__ import annotations

import os

from . import _kbspline as _core

_ENV = "KBSPLINE_NUM_THREADS"
MAX_THREADS = _core.MAX_THREADS  # the most threads the core splits a call over


def _check_count(name: str, n: int) -> int:
    if not 1 <= n <= MAX_THREADS:
        raise ValueError(f"{name} must be in [1, {MAX_THREADS}], not {n}")
    return n


def _default() -> int:
    value = os.environ.get(_ENV)
    if value:
        try:
            n = int(value)
        except ValueError:
            raise ValueError(f"{_ENV} must be a whole number, not {value!r}") from None
        return _check_count(_ENV, n)
    return min(os.cpu_count() or 1, MAX_THREADS)


_num_threads = _default()


def set_num_threads(n: int) -> int:
    """Lets large evaluations use up to `n` threads.

    Calls with little work stay on one thread; results are identical for any
    `n`.

    Parameters
    ----------
    n : int
        1 to 256.  The default is all cores up to 256, or the environment
        variable ``KBSPLINE_NUM_THREADS``.

    Returns
    -------
    int
        The previous setting.

    Raises
    ------
    ValueError
        For `n` outside 1 to 256.
    TypeError
        For an `n` that is not an int.

    Examples
    --------
    >>> previous = set_num_threads(1)
    >>> set_num_threads(previous)
    1
    """
    global _num_threads
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, not {type(n).__name__}")
    previous, _num_threads = _num_threads, _check_count("n", n)
    return previous


def get_num_threads() -> int:
    """The current limit set by `set_num_threads`.

    >>> get_num_threads() >= 1
    True
    """
    return _num_threads
