"""An adversarial review of the LightWave reader: envelopes against a second
reading of the SDK (lws_sdk_review), hostile scenes, the composed rotation
against matrices multiplied out by hand."""
import glob
import math
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lws_sdk_review import sdk_envelope
from kbspline.formats.lightwave import LwsError, heading_pitch_bank, read_lws
from kbspline.formats.lightwave_envelope import BEHAVIOURS, SPAN_TYPES, Envelope

LEGACY = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "legacy")


def _lines_run(path):
    """How many lines of the reader's modules run to read `path`: a count of
    steps, the same on every machine."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if "lightwave" not in frame.f_code.co_filename:
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        read_lws(path)
    finally:
        sys.settrace(None)
    return count


def _chain(path, n):
    lines = ["LWSC", "3", ""]
    for i in range(n):
        lines.append(f"AddNullObject n{i}")
        if i:
            lines.append(f"ParentItem {(1 << 28) | (i - 1):08X}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _bones(path, n):
    lines = ["LWSC", "3", "", "AddNullObject root"]
    for i in range(n):
        lines += ["AddBone", f"BoneName b{i}"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("scene", [_chain, _bones])
def test_long_scenes_read_in_steps_linear_in_their_items(tmp_path, scene):
    # each item's default id counted the items before it, and the ancestor
    # check walked every chain to its root: 20 000 nulls took 35 s
    small = _lines_run(scene(tmp_path / "small.lws", 300))
    large = _lines_run(scene(tmp_path / "large.lws", 1200))
    assert large < 4.6 * small


def test_a_parent_cycle_names_an_item_on_it(tmp_path):
    lines = ["LWSC", "3", "", "AddNullObject a", "AddNullObject b",
             "ParentItem 10000002", "AddNullObject c", "ParentItem 10000001",
             "AddNullObject d", "ParentItem 10000002"]
    (tmp_path / "c.lws").write_text("\n".join(lines) + "\n")
    with pytest.raises(LwsError, match=r"line (6|8): '[bc]' is its own ancestor"):
        read_lws(tmp_path / "c.lws")


def test_a_parent_id_two_items_share_is_refused(tmp_path):
    # the later item silently won: c became b's child, not a's
    lines = ["LWSC", "4", "", "AddNullObject 10000000 a", "AddNullObject 10000000 b",
             "AddNullObject 10000001 c", "ParentItem 10000000"]
    (tmp_path / "d.lws").write_text("\n".join(lines) + "\n")
    with pytest.raises(LwsError, match=r"line 7: ParentItem 10000000 names two items "
                                       r"\(lines 4 and 5\)"):
        read_lws(tmp_path / "d.lws")
    # ids no ParentItem names may repeat: nothing is ambiguous
    (tmp_path / "e.lws").write_text("\n".join(lines[:5]) + "\n")
    assert [n.name for n in read_lws(tmp_path / "e.lws").nodes] == ["a", "b"]
