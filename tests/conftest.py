"""Suite-wide settings, made before any test imports kbspline."""
import os

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
