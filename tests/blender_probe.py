"""Run by Blender's Python (bpy), not by pytest: imports a glTF or BVH file
the way a user would and prints, as JSON on one line after "POSITIONS", the
world position of every joint at the given times (seconds), in Blender's
Z-up frame.

    python blender_probe.py FILE gltf|bvh FPS TIME [TIME ...]

glTF nodes come in as objects (empties) named after the nodes, and a
skin's joints as the bones of an armature, animated from frame 0; BVH
joints as the bones of one armature, from frame 1 (the importer's
frame_start); a bone's position is its head.
"""
import json
import sys

import bpy


def main(path, kind, fps, times):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = round(fps), round(fps) / fps
    if kind == "gltf":
        bpy.ops.import_scene.gltf(filepath=path)
        first = 0.0
    else:
        bpy.ops.import_anim.bvh(filepath=path, frame_start=1, use_fps_scale=False,
                                update_scene_fps=False, rotate_mode="NATIVE")
        first = 1.0
    out = {}
    for t in times:
        frame = first + t * fps
        whole = int(frame // 1)
        scene.frame_set(whole, subframe=frame - whole)
        armatures = [o for o in scene.objects if o.type == "ARMATURE"]
        if kind == "gltf":
            for obj in scene.objects:
                if obj.type != "ARMATURE":
                    out.setdefault(obj.name, []).append(list(obj.matrix_world.translation))
        else:
            (armature,) = armatures
        for armature in armatures:
            for bone in armature.pose.bones:
                head = armature.matrix_world @ bone.head
                out.setdefault(bone.name, []).append(list(head))
    print("POSITIONS" + json.dumps(out))


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    main(args[0], args[1], float(args[2]), [float(x) for x in args[3:]])
