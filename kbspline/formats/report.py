"""Text naming the channels whose playback misses its tolerance, shared by
the glTF and USD writers' warnings and the command line's one line."""

from __future__ import annotations

import math


def missed_channels(report, *, units: str = "", compare: bool = False) -> str:
    """The channels of `report.missed` (error by (node, path)), joined by
    commas, the furthest past its tolerance first (radians and lengths
    compared as multiples of the tolerance): rotations in degrees, other
    paths in `units`.

    Each reads ``"node path error deg (tolerance t)"``, or with `compare`
    ``"node path error deg > t deg"``; `units` follows the other paths'
    tolerance (e.g. ``" units"``, or ``", the clip's units"`` in parentheses).
    """
    parts = []
    tolerances = report.tolerances
    for (node, path), error in sorted(report.missed.items(),
                                      key=lambda item: -item[1] / tolerances[item[0]]):
        tolerance = tolerances[node, path]
        if path == "rotation":
            error, tolerance = math.degrees(error), math.degrees(tolerance)
            shown, unit = f"{error:.3g} deg", " deg" if compare else ""
        else:
            shown, unit = f"{error:.3g}", units
        bound = f"> {tolerance:.3g}{unit}" if compare else f"(tolerance {tolerance:.3g}{unit})"
        parts.append(f"{node} {path} {shown} {bound}")
    return ", ".join(parts)
