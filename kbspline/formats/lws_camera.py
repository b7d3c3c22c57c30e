"""LightWave camera settings: zoom factor (a value or an envelope), frame
size and pixel aspect, turned into a field of view (`camera.FieldOfView`).

LightWave's zoom factor is twice the focal length over the film's height
(its manual: zoom 3.2 is a 24 mm lens, with the 15 mm ``ApertureHeight``
its scenes store), so the vertical field of view is ``2 atan(1 / zoom)``,
and the horizontal one follows from the frame's aspect, width times pixel
aspect over height.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .camera import FieldOfView, camera_facts

__all__ = ["CAMERA_WORDS", "SCENE_CAMERA_WORDS", "read_camera_line", "camera_channel",
           "zoom_to_fov", "DEFAULT_ZOOM"]

# A camera's settings lines, and the scene-wide ones a camera may use instead.
CAMERA_WORDS = ("ZoomFactor", "FrameSize", "CustomSize", "PixelAspect", "PixelAspectRatio",
                "CustomPixelRatio", "ApertureHeight", "UseGlobalResolution")
SCENE_CAMERA_WORDS = ("GlobalFrameSize", "GlobalPixelAspect")
DEFAULT_ZOOM = 3.2                       # LightWave's default: a 24 mm lens
DEFAULT_FRAME = (640.0, 480.0)           # every real scene here


def zoom_to_fov(zoom) -> np.ndarray:
    """Vertical field of view (radians) of a LightWave zoom factor."""
    zoom = np.asarray(zoom, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return 2.0 * np.arctan(1.0 / np.where(zoom > 0, zoom, np.nan))


def read_camera_line(reader, word: str, tokens: list, line: int, settings: dict,
                     read_envelope: Callable[[int], Any]) -> None:
    """Stores one settings line in `settings` (`read_envelope(line)` reads
    the envelope that follows ``ZoomFactor (envelope)``)."""
    args = tokens[1:]
    if word == "ZoomFactor":
        if args and args[0].lower().startswith("(envelope"):
            envelope = read_envelope(line)
            if not all(key.value > 0 for key in envelope.keys):
                raise reader.error(line, "a ZoomFactor envelope's keys must be positive")
            settings["zoom"] = envelope
            return
        zoom = reader.numbers(line, args[:1], 1, word)[0]
        if not zoom > 0:
            raise reader.error(line, f"ZoomFactor must be positive, not {zoom:g}")
        settings["zoom"] = zoom
    elif word in ("FrameSize", "CustomSize", "GlobalFrameSize"):
        width, height = reader.numbers(line, args, 2, word)
        if not (width > 0 and height > 0):
            raise reader.error(line, f"{word} must be two positive numbers")
        settings["global_frame" if word.startswith("Global") else "frame"] = (width, height)
    elif word in ("PixelAspect", "CustomPixelRatio", "GlobalPixelAspect"):
        ratio = reader.numbers(line, args, 1, word)[0]
        if not ratio > 0:
            raise reader.error(line, f"{word} must be positive, not {ratio:g}")
        key = {"PixelAspect": "pixel_aspect", "CustomPixelRatio": "custom_pixel_aspect",
               "GlobalPixelAspect": "global_pixel_aspect"}[word]
        settings[key] = ratio
    elif word == "PixelAspectRatio":           # LWSC 1-2: -1 custom, else a preset
        settings["pixel_preset"] = reader.numbers(line, args, 1, word)[0]
    elif word == "ApertureHeight":
        settings["aperture"] = reader.numbers(line, args, 1, word)[0] * 1000.0   # m -> mm
    elif word == "UseGlobalResolution":
        settings["use_global"] = reader.numbers(line, args, 1, word)[0] != 0


def _aspect(settings: dict) -> tuple[float, bool]:
    """(frame width over height, whether the file states it)."""
    glob = settings.get("use_global", False)
    frame = settings.get("global_frame" if glob else "frame")
    if glob:
        pixel = settings.get("global_pixel_aspect")
    elif settings.get("pixel_preset", -1) == -1:
        pixel = settings.get("pixel_aspect", settings.get("custom_pixel_aspect"))
    else:
        pixel = None                      # a preset whose ratio the file does not say
    stated = frame is not None and (pixel is not None or "pixel_preset" not in settings)
    width, height = frame if frame is not None else DEFAULT_FRAME
    return width * (1.0 if pixel is None else pixel) / height, stated


def camera_channel(settings: dict) -> tuple[Optional[FieldOfView], dict]:
    """(the fov channel when the zoom is an envelope of two keys or more,
    else None; the camera's ``extras["camera"]``)."""
    zoom = settings.get("zoom", DEFAULT_ZOOM)
    aspect, stated = _aspect(settings)
    channel = None
    if not isinstance(zoom, float):           # an envelope
        rest = float(zoom(0.0))
        if len(zoom.keys) > 1:
            channel = FieldOfView(zoom, zoom_to_fov, "vertical", aspect)
            channel.interpolation = "LWS"
        zoom = rest
    facts = camera_facts(float(zoom_to_fov(zoom)), "vertical", aspect, stated,
                         view=(0.0, 0.0, 1.0), up=(0.0, 1.0, 0.0),
                         aperture=settings.get("aperture"), zoom=zoom)
    return channel, facts
