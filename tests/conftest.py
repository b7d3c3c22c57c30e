"""Suite-wide settings, made before any test imports kbspline."""
import os

import pytest

# The C core writes outputs larger than half the last-level cache past the
# caches.  The suite's large-output tests are sized for a 24 MB cache (12 MB
# of float64 streams), whatever this machine reports.
os.environ.setdefault("KBSPLINE_CACHE_BYTES", str(24 << 20))

# Under CI (CI set, as .ci/run does) every property-based test draws the
# same examples on every run, so a run passes or fails on the code alone:
# a new failing example found by chance at a desk is not one CI stumbles
# on at the stop.  Recent Hypothesis does so itself where CI is set; this
# makes it so for any version the test extra resolves to (3.9's included).
try:
    from hypothesis import settings
except ImportError:  # the suite's property tests need the test extra anyway
    pass
else:
    settings.register_profile("kbspline-ci", derandomize=True, database=None)
    if os.environ.get("CI"):
        settings.load_profile("kbspline-ci")



# Tests marked `no_core` never call this tree's C extension (kbspline._kbspline):
# .ci/run's sanitizer stage deselects them, so the mark must not lie.  While a
# marked test runs, a call into the extension fails it.  Children a test
# starts are not watched: the mark's reason says why theirs do not count.
@pytest.fixture(autouse=True)
def _no_core_guard(request):
    if request.node.get_closest_marker("no_core") is None:
        yield
        return
    from core_calls import core_calls
    with core_calls() as called:
        yield
    if called:
        pytest.fail(f"{request.node.nodeid} is marked no_core but calls the C extension: "
                    f"{', '.join(sorted(set(called)))}", pytrace=False)
