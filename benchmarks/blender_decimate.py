"""Run by Blender's Python (bpy), not by kbspline's: Blender's own key
reduction on a BVH clip, for benchmarks/reduction.py --blender.

    python blender_decimate.py FILE MARGIN [MARGIN ...]

For each error margin, imports FILE as a user would (Euler F-curves, one per
channel), runs the Graph Editor's Decimate (mode "Error Margin") on every
F-curve, and prints one line "DECIMATE" + JSON: the margin, the keys left
over all F-curves, the F-curves and frames, the keyed (bone, frame) pairs
(a frame keyed on any of a bone's F-curves: kbspline's count of keys), the
bones, and the worst distance of any
bone's head or tail (so every joint and End Site) from where the undecimated
import puts it, over every frame, in the file's units.  A margin of 0 is the
import left as it is.
"""
import json
import sys
import time

import bpy
import numpy as np
from bpy_extras import anim_utils


def import_clip(path):
    """The imported armature and its F-curves."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=path, frame_start=1, use_fps_scale=False,
                            update_scene_fps=False, rotate_mode="NATIVE")
    (armature,) = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    data = armature.animation_data
    bag = anim_utils.action_get_channelbag_for_slot(data.action, data.action_slot)
    return armature, list(bag.fcurves)


def decimate(armature, fcurves, margin):
    """The Graph Editor's Decimate on every key of every F-curve."""
    window = bpy.context.window_manager.windows[0]
    area = window.screen.areas[0]
    area.type = "GRAPH_EDITOR"
    area.ui_type = "FCURVES"
    space = area.spaces.active
    space.dopesheet.show_only_selected = False
    region = [r for r in area.regions if r.type == "WINDOW"][0]
    bpy.context.view_layer.objects.active = armature
    armature.select_set(True)
    for curve in fcurves:
        curve.select, curve.hide = True, False
        for key in curve.keyframe_points:
            key.select_control_point = True
    with bpy.context.temp_override(window=window, screen=window.screen, area=area,
                                   region=region, space_data=space, active_object=armature,
                                   object=armature, selected_objects=[armature]):
        bpy.ops.graph.decimate(mode="ERROR", remove_error_margin=margin)


def positions(armature, frames):
    """(frames, 2 bones, 3): every bone's head and tail in world space."""
    scene, out = bpy.context.scene, []
    for frame in frames:
        scene.frame_set(frame)
        world = armature.matrix_world
        out.append([list(world @ p) for b in armature.pose.bones for p in (b.head, b.tail)])
    return np.array(out)


def joint_keys(fcurves):
    """{bone: frames keyed on any of its F-curves}."""
    keyed = {}
    for curve in fcurves:
        bone = curve.data_path.split('"')[1]
        keyed.setdefault(bone, set()).update(k.co[0] for k in curve.keyframe_points)
    return keyed


def main(path, margins):
    armature, fcurves = import_clip(path)
    frames = range(1, 1 + max(len(c.keyframe_points) for c in fcurves))
    truth = positions(armature, frames)
    for margin in margins:
        armature, fcurves = import_clip(path)
        start = time.perf_counter()
        if margin > 0:
            decimate(armature, fcurves, margin)
        seconds = time.perf_counter() - start
        error = np.linalg.norm(positions(armature, frames) - truth, axis=-1).max()
        keyed = joint_keys(fcurves)
        print("DECIMATE" + json.dumps({
            "joint_keys": sum(map(len, keyed.values())), "joints": len(keyed),
            "margin": margin, "keys": sum(len(c.keyframe_points) for c in fcurves),
            "fcurves": len(fcurves), "frames": len(frames), "error": float(error),
            "seconds": seconds}),
            flush=True)


if __name__ == "__main__":
    main(sys.argv[1], [float(m) for m in sys.argv[2:]])
