"""Suite-wide settings, made before any test imports kbspline."""
import os

# The C core writes outputs larger than half the last-level cache past the
# caches.  The suite's large-output tests are sized for a 24 MB cache (12 MB
# of float64 streams), whatever this machine reports.
os.environ.setdefault("KBSPLINE_CACHE_BYTES", str(24 << 20))
