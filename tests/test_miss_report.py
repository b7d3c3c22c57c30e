"""The one text for channels whose playback misses its tolerance (glTF and
USD warnings, the command line's line)."""

import math
import types

from kbspline.formats.report import missed_channels


def _report():
    missed = {("hip", "translation"): 0.3, ("knee", "rotation"): math.radians(2.0)}
    tolerances = {("hip", "translation"): 0.25, ("knee", "rotation"): math.radians(1.0),
                  ("foot", "rotation"): 1.0}
    return types.SimpleNamespace(missed=missed, tolerances=tolerances)


def test_furthest_past_its_tolerance_first():
    # knee's 0.035 rad is twice its tolerance, hip's 0.3 units 1.2 times
    assert missed_channels(_report()) == ("knee rotation 2 deg (tolerance 1), "
                                          "hip translation 0.3 (tolerance 0.25)")


def test_compared_with_units():
    assert missed_channels(_report(), units=" units", compare=True) == (
        "knee rotation 2 deg > 1 deg, hip translation 0.3 > 0.25 units")


def test_units_note_follows_only_other_paths():
    text = missed_channels(_report(), units=", the clip's units")
    assert "(tolerance 0.25, the clip's units)" in text and "(tolerance 1)" in text


def test_nothing_missed_is_empty():
    assert missed_channels(types.SimpleNamespace(missed={}, tolerances={})) == ""
