"""Key reduction: for each joint, the fewest key frames whose squad and KB
splines stay within a tolerance of every original frame."""
from __future__ import annotations

import bisect
import contextlib
import dataclasses
import math
from concurrent.futures import ThreadPoolExecutor, wait
from operator import is_
from typing import Any, Callable, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import _kbspline as _core
from .._checks import _check_positive
from .._threads import get_num_threads
from ..position import PositionSpline
from ..rotation import RotationSpline
from .clip import Motion, check_motion
from .world_error import WorldError, local_tolerances, moves


@dataclasses.dataclass
class Reduction:
    """Each joint's key frames chosen from a clip, and its worst errors.

    Attributes
    ----------
    names : list of str
        Joint names.
    frame_time : float
        The clip's frame time.
    num_frames : int
        The clip's frame count.
    key_frames : list of ndarray
        Per joint, (K_j,) frame indices, ascending, first and last kept.
    rotations : list of ndarray
        Per joint, (K_j, 4) local rotations at its keys, (w, x, y, z).
    translations : list of ndarray
        Per joint, (K_j, 3) local translations at its keys.
    max_angle : ndarray (J,)
        Worst rotation error over all frames, radians.
    max_distance : ndarray (J,)
        Worst translation error over all frames.
    max_position : ndarray (J,) or None
        Worst world-space distance, over all frames, of the joint's origin,
        End Site and virtual vertices from where the clip puts them (None
        when read from JSON that lacks it).
    rotation_tcb, translation_tcb : list of ndarray or None
        Per joint, (K_j, 3) tension, continuity and bias of its keys, as
        fitted; None where all are zero.
    rotation_tangents, translation_tangents : list of ndarray or None
        Per joint, (K_j, 3) each key's fitted tangent per unit time, the
        same arriving and leaving (C1 Hermite keys: see the `tangents`
        argument of `RotationSpline` and `PositionSpline`); None where the
        keys carry TCB instead.
    """

    names: list[str]       # joint names
    frame_time: float
    num_frames: int
    key_frames: list[NDArray[np.intp]]  # per joint: (K_j,) frame indices, ascending, first and last kept
    rotations: list[NDArray[np.float64]]  # per joint: (K_j, 4) local rotations at its keys, (w, x, y, z)
    translations: list[NDArray[np.float64]]  # per joint: (K_j, 3) local translations at its keys
    max_angle: NDArray[np.float64]  # (J,) worst rotation error over all frames, radians
    max_distance: NDArray[np.float64]  # (J,) worst translation error over all frames
    # (J,) worst world-space distance, over all frames, of the joint's origin,
    # End Site and virtual vertices from where the clip puts them
    max_position: Optional[NDArray[np.float64]] = None
    # per joint, (K_j, 3) tension, continuity and bias of its rotation and
    # translation keys (None: all zero, as unfitted keys have)
    rotation_tcb: Optional[list[NDArray[np.float64]]] = None
    translation_tcb: Optional[list[NDArray[np.float64]]] = None
    # per joint, (K_j, 3) each key's fitted tangent per unit time, arriving
    # and leaving (None: the keys carry TCB)
    rotation_tangents: Optional[list[NDArray[np.float64]]] = None
    translation_tangents: Optional[list[NDArray[np.float64]]] = None

    @property
    def num_keys(self) -> int:
        return sum(len(k) for k in self.key_frames)

    @property
    def ratio(self) -> float:
        """Keys kept per original joint-frame."""
        return self.num_keys / (len(self.names) * self.num_frames)

    def rebuild(self, times: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The clip's local rotations and translations, rebuilt from the keys.

        Parameters
        ----------
        times : array_like (M,)
            Seconds, 0 at the first frame.

        Returns
        -------
        rotations : ndarray (J, M, 4)
            By a RotationSpline through each joint's keys, with their TCB
            or tangents.
        translations : ndarray (J, M, 3)
            By a PositionSpline through each joint's keys, with their TCB
            or tangents.
        """
        curves = [self.splines(j) for j in range(len(self.names))]
        return (np.stack([rotation(times) for rotation, _ in curves]),
                np.stack([translation(times) for _, translation in curves]))

    def splines(self, j: int, scale: float = 1.0) -> tuple[RotationSpline, PositionSpline]:
        """Joint j's splines through its keys, with their TCB or tangents.

        Parameters
        ----------
        j : int
            The joint's index.
        scale : float
            Multiplies the translations (and their tangents).

        Returns
        -------
        rotation : RotationSpline
        translation : PositionSpline
            Both in seconds from 0 at the first frame.
        """
        _check_fitted_rows(self)
        key_times = self.key_frames[j] * self.frame_time
        q, x = self.rotations[j], self.translations[j] * scale
        if self.rotation_tangents is not None and self.translation_tangents is not None:
            rotation, translation = self.rotation_tangents[j], self.translation_tangents[j] * scale
            return (RotationSpline(key_times, q, tangents=(rotation, rotation)),
                    PositionSpline(key_times, x, tangents=(translation, translation)))
        zero = np.zeros((len(key_times), 3))
        rtcb = zero if self.rotation_tcb is None else self.rotation_tcb[j]
        ttcb = zero if self.translation_tcb is None else self.translation_tcb[j]
        return RotationSpline(key_times, q, *rtcb.T), PositionSpline(key_times, x, *ttcb.T)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reduction:
        """The Reduction that `to_json` wrote.

        Parameters
        ----------
        data : dict
            As ``json.load`` gives it back.

        Returns
        -------
        Reduction

        Raises
        ------
        ValueError
            Naming what is missing or malformed.
        """
        _check_json_version(data)
        try:
            joints = data["joints"]
            if data.get("quaternion_order", "wxyz") != "wxyz":
                raise ValueError(f"quaternion_order {data['quaternion_order']!r} is not 'wxyz'")
            out = cls(
                names=[str(j["name"]) for j in joints], frame_time=float(data["frame_time"]),
                num_frames=int(data["num_frames"]),
                key_frames=[np.asarray(j["key_frames"], dtype=np.intp) for j in joints],
                rotations=[np.asarray(j["rotations"], dtype=np.float64).reshape(-1, 4)
                           for j in joints],
                translations=[np.asarray(j["translations"], dtype=np.float64).reshape(-1, 3)
                              for j in joints],
                # radians where written (exact), else degrees (older files)
                max_angle=np.array([float(j["max_angle"]) if "max_angle" in j
                                    else math.radians(float(j["max_angle_deg"]))
                                    for j in joints]),
                max_distance=np.array([float(j["max_distance"]) for j in joints]),
                max_position=(np.array([float(j["max_position"]) for j in joints])
                              if all("max_position" in j for j in joints) else None),
                **{name: ([np.asarray(j[name], dtype=np.float64).reshape(-1, 3)
                           for j in joints] if all(name in j for j in joints) else None)
                   for name in ("rotation_tcb", "translation_tcb", "rotation_tangents",
                                "translation_tangents")})
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a reduction written by Reduction.to_json: {exc!r}") from None
        _check_fitted_rows(out)
        for j, (name, keys, q, x) in enumerate(zip(out.names, out.key_frames, out.rotations,
                                                  out.translations)):
            tcbs = [t[j] for t in (out.rotation_tcb, out.translation_tcb,
                                   out.rotation_tangents, out.translation_tangents)
                    if t is not None]
            if (len(keys) < 2 or len(q) != len(keys) or len(x) != len(keys)
                    or any(len(t) != len(keys) or not np.isfinite(t).all() for t in tcbs)
                    or keys[0] != 0 or keys[-1] != out.num_frames - 1
                    or np.any(np.diff(keys) <= 0)):
                raise ValueError(f"joint {name!r}: its key frames must rise from 0 to "
                                 f"num_frames - 1, with a rotation, translation and any "
                                 f"TCB or tangents each, finite")
        return out

    def to_gltf(self, motion: Motion, path: Any = None, **options: Any) -> Any:
        """Writes the reduced curves as glTF; see
        `kbspline.formats.gltf.reduction_to_gltf` (the same arguments after
        this reduction).

        Parameters
        ----------
        motion : Motion
            The clip this reduces (its hierarchy).
        path : str or os.PathLike, optional
            ``.gltf`` or ``.glb``; None to only return the document.
        **options
            ``angle_tolerance``, ``scale``.

        Returns
        -------
        GltfExport
        """
        from ..formats.gltf import reduction_to_gltf
        return reduction_to_gltf(self, motion, path, **options)

    def to_json(self) -> dict[str, Any]:
        """A dict for json.dump: per joint, its key frames, values and TCB or
        tangents."""
        optional = {name: getattr(self, name) for name in (
            "rotation_tcb", "translation_tcb", "rotation_tangents", "translation_tangents")}
        return {"format": JSON_FORMAT, "version": JSON_VERSION,
                "frame_time": self.frame_time, "num_frames": self.num_frames,
                "ratio": self.ratio, "quaternion_order": "wxyz",
                "joints": [{"name": n, "key_frames": k.tolist(), "rotations": q.tolist(),
                            "translations": x.tolist(), "max_angle": float(a),
                            "max_angle_deg": float(np.degrees(a)),
                            "max_distance": float(d),
                            **({} if self.max_position is None
                               else {"max_position": float(self.max_position[j])}),
                            **{name: rows[j].tolist() for name, rows in optional.items()
                               if rows is not None}}
                           for j, (n, k, q, x, a, d) in enumerate(zip(
                               self.names, self.key_frames, self.rotations, self.translations,
                               self.max_angle, self.max_distance))]}


# What Reduction.to_json writes: version 1 (no version field) carries TCB
# rows alone, 2 tangents too; a reader of 1 would take tangent keys for
# zero TCB, so from_json refuses versions above its own.
JSON_FORMAT = "kbspline.reduction"
JSON_VERSION = 2


def _check_json_version(data):
    """Refuses JSON of another format, or of a later version of this one
    (which may carry rows this reader would drop unseen)."""
    if not isinstance(data, dict):
        raise ValueError(f"not a reduction written by Reduction.to_json: a "
                         f"{type(data).__name__}, not a dict")
    if data.get("format", JSON_FORMAT) != JSON_FORMAT:
        raise ValueError(f"format {data['format']!r} is not {JSON_FORMAT!r}")
    version = data.get("version", 1)
    if type(version) is not int or not 1 <= version <= JSON_VERSION:
        raise ValueError(f"version {version!r} of {JSON_FORMAT!r}: this kbspline reads "
                         f"versions 1 to {JSON_VERSION}; a later kbspline wrote it?")


def _check_fitted_rows(reduction):
    """Refuses fitted rows that do not come as a pair of one kind: TCB of
    both channels or tangents of both, not one alone nor both kinds (a
    rebuild would otherwise take other curves than the reduction's)."""
    tcb = [reduction.rotation_tcb is not None, reduction.translation_tcb is not None]
    tangents = [reduction.rotation_tangents is not None,
                reduction.translation_tangents is not None]
    if tcb[0] != tcb[1] or tangents[0] != tangents[1] or (tcb[0] and tangents[0]):
        raise ValueError("a reduction's fitted rows come as rotation_tcb with translation_tcb, "
                         "or rotation_tangents with translation_tangents, for every joint: "
                         "not one of a pair, nor both kinds")


LOOSER = 5.0  # the greedy keys a fit starts from are chosen at this times the tolerances


class _JointFrames:
    """One joint's frames, its tolerances at a scale, and its greedy keys at
    any scale from one run of the selection (carried on from the frames it
    keyed where a lower scale needs it): the scores under tolerances s
    times the base ones are the base scores over s, so the greedy keys at s
    are the frames it keyed, in turn, before the first whose score was at
    most s (kb_reduce_greedy_order; a selection run at s itself may break a
    rounding tie the other way).  Where a cap binds, the tolerances are no
    longer a scale of the base ones and the selection runs again, once for
    each pair of tolerances.  A translation constant to the bit rebuilds
    exactly whatever the keys, so its cap never binds."""

    def __init__(self, times, rotations, translations, base, caps, j, moves,
                 tangent_keys=False):
        self.frames = (times, rotations[j:j + 1], translations[j:j + 1])
        self.moves = moves  # has position channels
        self.tangent_keys = tangent_keys  # fitted keys carry tangents, not TCB
        self.base = (float(base[0][j]), float(base[1][j]))
        distance_cap = float(caps[1][j])
        if distance_cap < math.inf and not np.ptp(translations[j], axis=0).any():
            distance_cap = math.inf  # constant: the cap never binds
        self.caps = (float(caps[0][j]), distance_cap)
        # the greedy selection's order down to `floor`, and minus its running
        # least score (a list: bisect on it is cheaper than searchsorted)
        self.floor, self.order, self.falling = math.inf, np.empty(0, np.intp), []
        self.prefixes = {}  # count of keyed frames -> greedy keys
        self.capped = {}  # (angle, distance) tolerances -> keys, where a cap binds
        self.last_rebuild = None  # (choice, _rebuild's result)
        self.fitted = {}  # scale -> _fitted_joint's keys and TCB there
        self.drop_memory = None  # the drops that failed, per frame (see kb_drop_memory)

    def tolerances(self, scale):
        """Angle and distance tolerances at `scale`: the base ones times it, capped."""
        (angle, distance), (angle_cap, distance_cap) = self.base, self.caps
        return min(scale * angle, angle_cap), min(scale * distance, distance_cap)

    def take_order(self, order, score, floor):
        """Takes on the greedy order that a selection ran down to `floor`,
        with each frame's score when keyed (kb_reduce_world_greedy's)."""
        self.order, self.floor = order, float(floor)
        self.falling = np.maximum.accumulate(-score).tolist()

    def greedy(self, scale, looser=1.0):
        """Greedy keys under `looser` times the tolerances at `scale`."""
        (angle, distance), (angle_cap, distance_cap) = self.base, self.caps
        if scale * angle > angle_cap or scale * distance > distance_cap:  # a cap binds
            tolerances = tuple(looser * t for t in self.tolerances(scale))
            if tolerances not in self.capped:
                self.capped[tolerances] = _core.reduce_greedy(
                    *self.frames, *np.array(tolerances)[:, None])[0][0]
            return self.capped[tolerances]
        scale *= looser
        if scale < self.floor:  # carry the selection on from the frames keyed so far
            order, score = _core.reduce_greedy_order(*self.frames, *self.base, scale,
                                                     self.order)
            self.order = np.concatenate([self.order, order])
            # minus the running least score, ascending: the first score <= s by bisection
            self.falling = np.maximum.accumulate(np.concatenate([self.falling, -score])).tolist()
            self.floor = scale
        count = bisect.bisect_left(self.falling, -scale)
        if count not in self.prefixes:  # scales often differ where a joint's keys do not
            keys = np.empty(count + 2, dtype=np.intp)
            keys[0], keys[-1] = 0, len(self.frames[0]) - 1
            keys[1:-1] = self.order[:count]
            keys[1:-1].sort()
            self.prefixes[count] = keys
        return self.prefixes[count]


def _greedy_joint(joint, scale):
    """A joint's greedy keys at `scale` (in C: see kb_reduce_greedy_order
    and kb_reduce_greedy), as (keys,)."""
    return (joint.greedy(scale),)


def _nothing_to_fit(keys, tolerances):
    """Whether no fit could drop a key: only the first and last frames are
    keys, or no tolerance is finite (they are positive: the least is infinite)."""
    return len(keys) == 2 or min(tolerances) == math.inf


def _fitted_joint(joint, scale):
    """A joint's fitted keys at `scale`: tangent keys swept (_swept), TCB
    keys fitted from greedy ones (_fit); keys and the rows of both
    channels.  Kept per scale: a fitted pass that fails is made again at
    half the scale, and the loosening of TCB keys by 2 then asks for the
    first joints' fits at the scale that failed."""
    if scale not in joint.fitted:
        joint.fitted[scale] = (_swept if joint.tangent_keys else _fit)(joint, scale)
    return joint.fitted[scale]


def _swept(joint, scale):
    """A joint's tangent keys at `scale` in one forward sweep (in C: see
    kb_reduce_sweep), then one round of drops (kb_reduce_drop) with a
    memory of this call's alone, not the joint's: a fit is then the same
    whichever fits the joint made before, as threads make some that one
    thread would not (a pass closed early).  Where those keep more than
    DENSE_SWEEP of its frames, the fit from greedy keys (_fit) too, the
    fewer kept.  (The world search with tangent keys sweeps and drops in C:
    see _swept_search.)  Swept and dropped in both modes, reduce_keys kept
    3.4% fewer keys than with the fit from greedy keys at eight world
    tolerances (37 840 against 39 162, in 3.8 s against 5.8 with the world
    search that starts from swept keys), 11% fewer at four local ones
    (23 710 against 26 752, in 0.8 s against 1.5)."""
    tolerances = joint.tolerances(scale)
    swept = _core.reduce_sweep(*joint.frames, *tolerances)
    if _nothing_to_fit(swept[0], tolerances):
        return swept
    dropped = _core.reduce_drop(*joint.frames, *tolerances, *swept, None, True, False)[:3]
    if len(dropped[0]) <= DENSE_SWEEP * len(joint.frames[0]):
        return dropped
    fitted = _fit(joint, scale)
    return fitted if len(fitted[0]) < len(dropped[0]) else dropped


# swept keys (and their drops) that keep more than this part of a joint's
# frames are checked against the fit from greedy keys, the fewer kept: on
# fast smooth channels at tight tolerances, where segments are two or three
# frames, the sweep's pull towards the frames' tangent weighs as much as
# the frame between and its keys come nearly every frame (a root's three
# sines at 30 Hz, 1e-4 rad: 247 of 250 frames swept, 166 after the drops,
# 138 fitted from greedy keys).  Over the real clips at four local and
# three world tolerances 19 245 -> 19 227 and 14 427 -> 14 419 keys in
# about the same time (at 0.3: 19 207 and 14 373, the world search ~20%
# slower); over 800 random keyframed clips in local mode 29 385 -> 28 828
DENSE_SWEEP = 0.5


def _fit(joint, scale):
    """A joint's keys at `scale` fitted from its greedy keys at LOOSER
    times its tolerances (or a looser start: _looser_start) (in C: see
    kb_reduce_fit): TCB keys, or tangent keys where the sweep's are dense
    (_swept); TCB keys keep the greedy keys, zero TCB, where those are
    fewer (tangent keys cannot carry the greedy keys' KB tangents, which
    differ on each side of a key where keys are spaced unevenly)."""
    tolerances = joint.tolerances(scale)
    keys = joint.greedy(scale)
    zero = np.zeros((len(keys), 3))
    if not joint.tangent_keys and _nothing_to_fit(keys, tolerances):
        return keys, zero, zero
    # without the errors at every frame (a whole spline's evaluation): the
    # world check and the Reduction measure the curves they take
    fitted, rtcb, ttcb, _, _ = _core.reduce_fit(*joint.frames, *tolerances,
                                                joint.greedy(scale, LOOSER), joint.tangent_keys,
                                                False)
    looser = _looser_start(joint, scale)
    if looser is not None:
        again = _core.reduce_fit(*joint.frames, *tolerances, looser, joint.tangent_keys, False)
        if len(again[0]) < len(fitted):
            fitted, rtcb, ttcb = again[:3]
    if joint.tangent_keys or len(fitted) < len(keys):
        return fitted, rtcb, ttcb
    return keys, zero, zero


def _looser_start(joint, scale):
    """A second start for a fit whose greedy keys at LOOSER times the
    tolerances keep more than half the frames (None otherwise): those at
    ten, a hundred or a thousand times that, the first to keep at most
    half (else the last).  Where greedy KB keys need nearly every frame
    (a bouncing ball's contacts, the 30 Hz clips' fast joints) the fit's
    drops stall near them, while fitted tangents need far fewer: a ball
    of 14 contacts kept 118 root keys at 1e-3 where 30 are exact (30
    now), and over every real clip at four local tolerances 26 799 keys
    -> 26 746, at eight world ones 39 255 -> 39 234."""
    frames = len(joint.frames[0])
    if len(joint.greedy(scale, LOOSER)) <= frames / 2:
        return None
    for looser in LOOSER * np.array([10.0, 100.0, 1000.0]):
        keys = joint.greedy(scale, looser)
        if len(keys) <= frames / 2:
            break
    return keys


def _dropped_joint(joint, choice_and_scale):
    """A joint's fitted keys with more dropped, each with its neighbours'
    TCB refitted, under its tolerances at `scale` (in C: see
    kb_reduce_drop): choice_and_scale = ((keys, rotation TCB, translation
    TCB), scale).  The joint remembers the drops that fail, so that later
    calls do not try them again where they cannot hold."""
    (keys, rtcb, ttcb), scale = choice_and_scale
    tolerances = joint.tolerances(scale)
    if _nothing_to_fit(keys, tolerances):
        return keys, rtcb, ttcb
    if joint.drop_memory is None:
        F = len(joint.frames[0])
        around = np.empty((F, 4), dtype=np.intp)
        around.fill(-1)  # np.full's Python wrapper cost several times the fill
        joint.drop_memory = (np.zeros((F, 2)), around, np.zeros((F, 2)),
                             np.zeros(F, dtype=np.intp))
    return _core.reduce_drop(*joint.frames, *tolerances, keys, rtcb, ttcb,
                             joint.drop_memory, joint.tangent_keys, False)[:3]


def _in_joint_order(work, J, pool=None):
    """Yields work(j) for j in range(J), in order: without a pool each as
    it is asked for; with one (reduce_keys's threads: the core releases
    the GIL, and joints are independent, so the results are the same for
    any number) the joints after it queued to run meanwhile.  Closed early
    (or on an error, or Ctrl-C), it cancels the joints not yet started and
    waits for those running, which would otherwise run on into the next
    use of their joints."""
    if pool is None:
        yield from map(work, range(J))
        return
    futures = []
    try:  # an interrupt while they are queued cancels those queued so far
        for j in range(J):
            futures.append(pool.submit(work, j))
        for future in futures:
            yield future.result()
    finally:
        for future in futures:
            future.cancel()
        wait(futures)


def _each_joint(work, J, pool=None, progress=None):
    """[work(j) for j in range(J)] (see _in_joint_order), calling
    progress(done, J) as each is done."""
    results = []
    with contextlib.closing(_in_joint_order(work, J, pool)) as each:
        for result in each:
            results.append(result)
            if progress:
                progress(len(results), J)
    return results


def _choose(choose_joint, joints, scales, pool=None, progress=None):
    """Every joint's keys by choose_joint (_greedy_joint or _fitted_joint)
    at its scale (see _in_joint_order for the pool): a list of (keys,) or
    (keys, rotation TCB, translation TCB)."""
    if pool is None and progress is None:  # nothing to hand over or report per joint
        return list(map(choose_joint, joints, scales))
    return _each_joint(lambda j: choose_joint(joints[j], scales[j]), len(joints), pool,
                       progress)


def _choose_as_checked(choose_joint, joints, scale, selected, pool=None):
    """Yields every joint's keys by choose_joint at `scale`, in joint order
    (see _in_joint_order), appending each to `selected`: each is chosen as
    the world check asks for it, so a check that fails at a joint leaves
    the joints not yet started unchosen (a fitted pass that strays past the
    tolerance costs about the joints up to there)."""
    with contextlib.closing(_in_joint_order(lambda j: choose_joint(joints[j], scale),
                                            len(joints), pool)) as each:
        for choice in each:
            selected.append(choice)
            yield choice


def _pool_for(choose_joint, joints, scales, pool):
    """`pool` (see _joint_threads; reduce_keys starts none on a fitted
    clip of fewer than FIT_THREADS_FROM frames) where choose_joint runs the
    core at length on these joints at these scales, else None: fitted and
    dropped keys always; greedy ones only where a joint's selection is
    carried on below its floor (else they are read off it), on clips of
    GREEDY_THREADS_FROM frames or more (on fewer, a thread's hand-over
    costs more than the selection).  A local cap's selections stay on this
    thread."""
    if choose_joint is not _greedy_joint:
        return pool
    carried_on = any(scale < joint.floor for joint, scale in zip(joints, scales))
    return pool if carried_on and len(joints[0].frames[0]) >= GREEDY_THREADS_FROM else None


@contextlib.contextmanager
def _joint_threads(J):
    """The pool of threads a reduction of J joints hands the choices that
    run the core at length (None on one thread): up to set_num_threads(),
    started once for the whole reduction, as a greedy pass that only reads
    keys off each joint's selection so far costs less than a thread's
    hand-over (on the 20-frame dash, 2.6 ms on one thread against 15 ms on
    two with a pool per pass)."""
    threads = min(get_num_threads(), J)
    if threads <= 1:
        yield None
        return
    pool = ThreadPoolExecutor(threads)
    try:
        yield pool
    finally:  # on an error, nothing queued runs on
        pool.shutdown(cancel_futures=True)


def _with_tcb(choice):
    """(keys, rotation TCB, translation TCB) of a choice, None for zero TCB."""
    return choice if len(choice) == 3 else (choice[0], None, None)


def _rebuild(joint, choice):
    """A joint's curves at every frame (F, 4) and (F, 3) through its keys
    and TCB, choice = (keys,) or (keys, rotation TCB, translation TCB) (in
    C: see kb_reduce_rebuild); the translation None where the joint has no
    position channels, as forward kinematics then takes its OFFSET.  The
    joint keeps its last (returned again for the very same arrays), and
    evaluates again only the frames of segments the keys or TCB change
    from it (each rotation then up to sign, which forward kinematics does
    not see).  Keys equal to the last but other arrays (TCB fits, now and
    then) are not compared by their bytes, which cost every call: the
    rebuild gives them the last curves again, up to sign."""
    last = joint.last_rebuild
    if last is not None and len(last[0]) == len(choice) and all(map(is_, last[0], choice)):
        return last[1]
    since = None if last is None else (*_with_tcb(last[0]), *last[1])
    curves = _core.reduce_rebuild(*joint.frames, *_with_tcb(choice), False, joint.moves, since,
                                  joint.tangent_keys)[:2]
    joint.last_rebuild = choice, curves
    return curves


def _measure(joints, selected, world, limit=math.inf):
    """`world` (a WorldError of the clip) under the curves of these choices
    of keys (any iterable, read in joint order), each rebuilt as the check
    reaches its joint; None as soon as a point is farther than `limit` from
    where the clip puts it."""
    return world.with_curves((_rebuild(joint, choice) for joint, choice in zip(joints, selected)),
                             limit)


def _reduction(motion, joints, selected, world):
    """The Reduction of these choices of keys (and TCB), with `world` (a
    WorldError under their curves) for its world-space errors and each
    joint's worst local angle and distance."""
    keys = [choice[0] for choice in selected]
    fitted = ([[choice[1] for choice in selected], [choice[2] for choice in selected]]
              if len(selected[0]) > 1 else [None, None])
    # each joint's angle and distance errors under the curves `world` holds
    # (a joint without position channels, placed by its OFFSET, has zero
    # translations, a constant the splines give exactly: no distance)
    errors = [_core.reduce_errors(*joint.frames, world.rotations[j], world.translations[j])
              for j, joint in enumerate(joints)]
    angles, distances = zip(*errors)
    zero = np.zeros_like(angles[0])
    # every joint's worst of both in one reduction, not two per joint
    angle, distance = np.max([angles, [zero if d is None else d for d in distances]], axis=2)
    return _keyed(motion, joints, keys, angle, distance, world.errors, *fitted)


def _keyed(motion, joints, keys, angle, distance, position, rotation=None, translation=None):
    """The Reduction of these keys per joint, with their worst errors and
    the fitted rows of each channel (TCB, or tangents for tangent keys)."""
    tangents = bool(joints[0].tangent_keys and rotation is not None)
    return Reduction([j.name for j in motion.joints], motion.frame_time, motion.num_frames,
                     keys, [joint.frames[1][0][k] for joint, k in zip(joints, keys)],
                     [joint.frames[2][0][k] for joint, k in zip(joints, keys)],
                     angle, distance, position,
                     None if tangents else rotation, None if tangents else translation,
                     rotation if tangents else None, translation if tangents else None)


def _loosen_joints(motion, joints, found, world, choose_joint, scale, tolerance, factors,
                   pool=None):
    """The fitted world-space search scales every joint's tolerances
    alike; this gives each joint the slack the others leave (the greedy
    search loosens in C: kb_reduce_world_greedy, and the whole search with
    tangent keys runs there: kb_reduce_world_swept).  Per joint, most keys
    first, its tolerances are loosened by each of `factors` in turn, and
    its new keys (by `choose_joint`; fitted ones, by a factor below
    REFIT_BELOW or where they keep at most REFIT_DENSE of its frames, by
    dropping from its keys so far: _dropped_joint) kept
    where they are fewer and every point stays within `tolerance`, checked
    by forward kinematics of the joints they move (`world`, a WorldError
    under the curves of `found`, the choices of keys at `scale`).  Fitted
    keys then try dropping more (_dropped_joint), kept the same way.  Keys
    are chosen on `pool` where _pool_for says.  Yields after each factor
    and after the drops (whatever the keys); returns the reduction."""
    J = len(joints)
    selected = list(found)
    scales = [scale] * J
    tcb = choose_joint is _fitted_joint and not joints[0].tangent_keys
    for factor in factors:
        # a joint's keys hang on its own tolerances only: choose them all at
        # once, but for the joints down to their first and last frames
        fewer = [j for j in range(J) if len(selected[j][0]) > 2]
        anew, drop = fewer, []
        if choose_joint is _fitted_joint:  # tangent keys always drop
            anew = [j for j in fewer if tcb and factor >= REFIT_BELOW
                    and len(selected[j][0]) > REFIT_DENSE * len(joints[j].frames[0])]
            drop = [j for j in fewer if j not in anew]
        candidates = {}
        for choose, group, at in (
                (_dropped_joint, drop, [(selected[j], factor * scales[j]) for j in drop]),
                (choose_joint, anew, [factor * scales[j] for j in anew])):
            loosened = [joints[j] for j in group]
            if group:
                candidates.update(zip(group, _choose(choose, loosened, at,
                                                     _pool_for(choose, loosened, at, pool))))
        for j in sorted(fewer, key=lambda j: -len(selected[j][0])):
            new = candidates[j]
            if len(new[0]) >= len(selected[j][0]):
                continue
            new = _world_held(joints[j], j, new, world, tolerance)
            if new is not None:
                scales[j] *= factor
                selected[j] = new
        yield
    if choose_joint is _fitted_joint:  # drop more, refitting (see _dropped_joint)
        dropped = _choose(_dropped_joint, joints, list(zip(selected, scales)), pool)
        for j in sorted(range(J), key=lambda j: -len(selected[j][0])):
            new = dropped[j]
            if len(new[0]) < len(selected[j][0]):
                new = _world_held(joints[j], j, new, world, tolerance)
                selected[j] = selected[j] if new is None else new
    yield  # a pass of the count either way
    return _reduction(motion, joints, selected, world)


def _world_held(joint, j, new, world, tolerance):
    """Joint j's `new` keys (a choice, as _rebuild takes) where every point
    stays within `tolerance` under them (`world`, a WorldError under the
    curves of its keys so far, then under theirs); else None.  (The world
    search with tangent keys keeps the pieces of new keys that hold: see
    kb_reduce_world_swept.)"""
    if world.trial(j, *_rebuild(joint, new), tolerance) <= tolerance:
        world.accept()
        return new
    return None


def _check_reached(name, tolerance, worst):
    """Refuses a tolerance below what the splines reproduce with every key
    they may keep (every frame a key, the errors then rounding's)."""
    if not worst <= tolerance:
        raise ValueError(f"{name}={tolerance!r} is below what the splines reproduce even "
                         f"keyed at every frame ({worst:.3g}): give a larger one")


# The world-space search's first scale of the first-order tolerances, which
# are loose: every clip in ../shared and tests/data/cmu, from 0.01 to 5 cm,
# passes at 2^1.5 (the least scale found is 3.0); from there the search
# brackets the scale between the same powers of sqrt(2) as from 1, a pass or two sooner.
FIRST_SCALE = 2 ** 1.5
SEARCH_PASSES = 8  # greedy reductions tried by the world-space search
# frames from which greedy selections run on threads (Python's pool in
# local mode, the core's in the world search): on two, the 195-frame
# walk's world search takes 8.8 ms against 10.5 on one (local mode 8.6
# against 9.4); the 20-frame dash's local search 3.8 against 1.7
GREEDY_THREADS_FROM = 100
# frames from which a fitted reduction starts its pool of threads: on two,
# with fitted keys at 0.5 cm, the 20-frame dash took 19.8 ms against 16.2
# on one, the 30 Hz walk's first 30 frames 19.8 against 16.5, its first
# 50 25.3 against 27.3, 70 28.3 against 36.1, all 195 67 against 106
FIT_THREADS_FROM = 50
FIT_PASSES = 4     # at most, fitted ones after it (the first passes on every clip)
# The first scale of fitted tangent keys, which skip the greedy search: swept
# keys (kb_reduce_sweep) fill each joint's tolerances, and held at about
# half the greedy search's largest scale (1.5-2.5 where greedy keys held at
# 3.0-5.0, every real clip at 0.1, 0.5 and 1 cm); every one holds at 2.
# Over those 15, 1.5x faster than the greedy search first, 0.4% more keys
# (14 427 -> 14 483)
SWEPT_SCALE = 2.0
# per joint, after the search (see kb_reduce_world_greedy), each about the
# square root of the one before.  Measured on the search in Python, as it
# was before it moved to C, over every clip of ../shared and tests/data/cmu
# at 0.1, 0.5 and 1 cm: the last, 1.09, keeps 1.1% fewer greedy keys for
# 3-7% more time; a first factor of 4 is mostly refused by the world check,
# and where it passes takes slack that smaller steps share better: without
# it 1.4% fewer greedy keys (32 701 -> 32 245) in one round fewer
LOOSEN_FACTORS = (2.0, 1.41, 1.19, 1.09)
# with TCB keys, keys loosen by 1.68, 1.04 and 1.02 too: fitted keys loosened
# by 4, 2, 1.41, 1.19, 1.09 and 1.04 were 1.0% more (18 851 against
# 18 669) in about the same time; without 1.68, 0.7% more in 13% less time.
# Since drops remember those that failed (kb_drop_memory), a round of
# drops costs a fraction of a fit: with 1.02, 0.09% fewer keys (18 676 ->
# 18 660) in 11% less time than without it and 1.68 fitted anew; also 1.3
# or 1.01, 0.2% or 0.1% fewer for 5-7% more time
FIT_LOOSEN_FACTORS = (2.0, 1.68, 1.41, 1.19, 1.09, 1.04, 1.02)
# tangent keys, whose world check keeps the pieces that hold (in C:
# kb_reduce_world_swept),
# loosen by two factors, each joint dropping from its keys so far: over
# every real clip at eight world tolerances 38 333 keys against 37 840 by
# the seven above with each joint's keys whole or not at all, and at 0.1,
# 0.5 and 1 cm 1.58x faster (one thread, best of three in the same run);
# by 2, 1.41 and 1.19, 37 624 keys for 8% more instructions on 131_01 at
# 0.1 cm (635M against 589M, callgrind); by 2, 1.41 and 1.41, 36 974 for
# 18% more; by 2 and 1.41, 39 166 for 6% fewer
TANGENT_LOOSEN_FACTORS = (2.0, 1.68)
# fitted TCB keys loosened by a smaller factor come from dropping the joint's
# keys so far, their neighbours refitted, not from a fit anew: with the
# factors of 4 to 1.04, over every clip and tolerance 1.1% fewer keys in
# 24% less time (by every factor: 1.4% more keys, 31% less time; below
# 2.5: 0.6% fewer, 27% less); with drops remembered, 1.68 too (below 1.5,
# with 1.02: 0.16% fewer keys, 18 631 against 18 660, in 14% more time)
REFIT_BELOW = 1.7
# ... and by 2 too where a joint's keys keep at most this part of its
# frames: a fit anew costs about as much as the first pass's, and finds
# fewer keys where they are dense (the 30 Hz clips' fast joints, where
# drops stall as in _looser_start), not where they are sparse.  Over every
# real clip at eight world tolerances 39 225 -> 39 162 keys (local mode's
# the same), 131_01 at 0.1 cm in 11% fewer instructions (callgrind), the
# search 7% faster over every clip at 0.1, 0.5 and 1 cm; by dropping at 2
# on every joint (REFIT_BELOW 2.5), 39 256 keys, 14% fewer, but the
# 20-frame dash at 0.1 cm 195 keys against 187 (0.15 to 0.3: 39 134 to
# 39 244, measured before the restarts of restart_far in C; both measured
# with tangent keys, which now always drop: see TANGENT_LOOSEN_FACTORS)
REFIT_DENSE = 0.2


def reduce_keys(motion: Motion, angle_tolerance: Optional[float] = None,
                distance_tolerance: Optional[float] = None,
                progress: Optional[Callable[[int, int], None]] = None, *,
                position_tolerance: Optional[float] = None,
                virtual_distance: Optional[float] = None,
                fit: Union[bool, str] = True) -> Reduction:
    """Keeps, per joint, few key frames whose splines stay within a
    tolerance of every original frame.

    Parameters
    ----------
    motion : Motion
        The clip, of at least two frames.
    angle_tolerance : float, optional
        Largest rotation error of any joint's local rotation, radians.
    distance_tolerance : float, optional
        Largest error of any joint's local translation, in the clip's units.
    progress : callable, optional
        ``progress(done, total)``, called as joints finish, in joint order
        (local mode), or as the passes of the world-space search finish.
    position_tolerance : float, optional
        Largest world-space error, in the clip's units, of every joint,
        End Site and virtual vertex in every frame, by forward kinematics.
        With it, `angle_tolerance` and `distance_tolerance` are optional
        local caps on top.
    virtual_distance : float, optional
        With `position_tolerance`: also measure at three virtual vertices
        per joint, this far along its local axes (as ACL does), so that a
        joint's own turn counts even where nothing hangs below it.
    fit : bool or {'tangents', 'tcb'}
        Fit each kept key by least squares and keep fewer keys (see
        Notes): True or 'tangents' fits each key's tangent (C1 Hermite
        keys, `Reduction.rotation_tangents` and `translation_tangents`),
        'tcb' its tension, continuity and bias (`Reduction.rotation_tcb`
        and `translation_tcb`); False keeps the greedy choice.

    Returns
    -------
    Reduction
        The key frames and values, the worst local errors, and the worst
        world-space error of each joint's points (`max_position`).

    Raises
    ------
    ValueError
        A tolerance that is not positive and finite, or below what the
        splines reproduce even keyed at every frame (rounding's errors),
        neither `position_tolerance` nor both local tolerances, a clip of
        fewer than two frames, or a frame that is not finite.

    Notes
    -----
    Local mode keys, per joint, the frame worst out of tolerance until every
    frame is within both tolerances: near-linear in frames, as only the
    frames beside a new key are evaluated again (in C).  World mode splits
    `position_tolerance` into per-joint local tolerances that bound the
    world error to first order (each joint's share of the chains through
    it, its rotation's share divided by the farthest point it carries),
    then scales them all up by the largest factor found (from 2^1.5,
    halving until one passes, then doubling, then bisecting, at most eight
    reductions) whose keys keep every point of every frame within
    `position_tolerance`, measured by forward kinematics.  Then, per
    joint, most keys first, it loosens that joint's tolerances alone by 2,
    1.41, 1.19 and 1.09 in turn, keeping its fewer keys where every point
    stays within `position_tolerance` (only the joints it moves are moved
    again).  As a scale divides every score alike, the greedy keys at any
    scale are a prefix of the order in which one run of the selection keyed
    the frames, so each joint's selection runs once for the whole search
    (carried on from the frames it keyed below the lowest scale so far, and
    run again for each pair of tolerances a cap binds).  This search runs
    in C, pass after pass.  Greedy selection is not guaranteed minimal;
    the bound is guaranteed.

    With `fit`, tangent keys (the default) are swept, per joint, in one
    pass from the first frame (in C): from the last key, its tangent then
    fixed, the farthest frame that can end a segment within both
    tolerances, found by doubling then bisecting on a model of the segment
    in log space relative to that key, the end's tangent fitted in closed
    form by least squares against the segment's frames and a look-ahead
    segment after it (up to three times as long, shorter where a cubic
    cannot follow it, never across the edge of a hold), the chosen end
    checked once on the splines themselves; a hold's edges become keys with
    zero tangents.  In local mode, each key is then dropped whose frames
    stay within tolerance once the keys beside it are refitted; where the
    keys still keep more than half the joint's frames, the fit from greedy
    keys below (fitting tangents) runs too, and the fewer are kept.  TCB keys
    start from the greedy keys at five times the joint's tolerances (and
    where those keep more than half the frames, from greedy keys at ten to
    a thousand times that too, keeping the fewer fitted keys), fit the TCB of every
    key by Levenberg-Marquardt against all frames (in C, on the banded
    normal equations, with a closed-form Jacobian, its steps taken on a
    model of the curves' residual, the splines evaluated once at its
    optimum and kept where they fit better), key the worst frame of every
    segment out of tolerance and fit again the keys near the new ones
    (against the frames they shape) until none is, then drop each key
    whose frames stay within tolerance without it, refitting the keys near
    it, and then each key whose frames stay within tolerance once the keys
    beside it are refitted; they keep the greedy keys where those are
    fewer.  World mode with tangent keys skips the greedy search (and runs
    in C, pass after pass): it sweeps every joint at twice its first-order
    tolerances, halved until the keys pass (at most four; where none does,
    the greedy search runs as without `fit`), then loosens each joint by 2
    and by 1.68, dropping keys from its keys so far with the keys beside
    them refitted, and last tries to drop more under its final tolerances.
    Where a joint's new keys take some point past `position_tolerance`, it
    keeps the pieces of them that keep every point within it, and its old
    keys elsewhere: keys that the old and the new share with the same tangents
    cut the frames into pieces, and a piece's curves are wholly the old or
    the new ones, as a segment of tangent keys hangs on its two keys alone
    and a point's error at a frame on the curves at that frame alone; the
    drops of the pieces it kept old are not tried again between the same
    keys.  With TCB keys it runs the greedy search first, then a fitted
    reduction at the scale found (halved until it passes, at most four),
    then loosens joints by 2, 1.68, 1.41, 1.19, 1.09, 1.04 and 1.02 (by 2
    fitted anew where a joint's keys keep more than a fifth of its frames,
    else and by the smaller factors dropping keys from the joint's keys
    so far with the keys beside them refitted), and last tries, per
    joint, to drop more of its keys under its final tolerances, each kept
    where every point stays within `position_tolerance`.  A drop that
    failed is not tried again between the same keys while the joint's
    tolerances are below two thirds of those it would have needed, nor
    from the same keys and tangents under tolerances below the least it
    could hold under.
    The fitted tangents or TCB are in the Reduction, and
    `Reduction.rebuild` reproduces the fitted curves.  Tangent keys take
    every direction; TCB only move a key's tangent in the plane of its two
    chords: over every clip of ../shared and tests/data/cmu at 0.1, 0.5
    and 1 cm, tangent keys keep 20% fewer keys (14 613 against 18 307) in
    80% less time (0.86 against 4.33 s on one thread, best of three).
    """
    check_motion(motion, "motion")
    angle_tolerance = _check_positive("angle_tolerance", angle_tolerance)
    distance_tolerance = _check_positive("distance_tolerance", distance_tolerance)
    position_tolerance = _check_positive("position_tolerance", position_tolerance)
    virtual_distance = _check_positive("virtual_distance", virtual_distance)
    if position_tolerance is None and (angle_tolerance is None or distance_tolerance is None):
        raise ValueError("give position_tolerance (world space), or both angle_tolerance and "
                         "distance_tolerance (local)")
    if virtual_distance is not None and position_tolerance is None:
        raise ValueError("virtual_distance needs position_tolerance")
    if motion.num_frames < 2:
        raise ValueError(f"the clip has {motion.num_frames} frame(s); reducing needs at least 2")
    if not np.isfinite(motion.frames).all():
        frame, column = np.argwhere(~np.isfinite(motion.frames))[0]
        raise ValueError(f"motion.frames[{frame}, {column}] is {motion.frames[frame, column]}: "
                         f"reducing needs finite frames")
    rotations = np.ascontiguousarray(motion.rotations())
    translations = np.ascontiguousarray(motion.translations())
    J = len(motion.joints)
    if not isinstance(fit, (bool, np.bool_)) and fit not in ("tangents", "tcb"):
        raise TypeError(f"fit must be True, False, 'tangents' or 'tcb', not {fit!r}")
    tangent_keys = fit is True or fit is np.True_ or fit == "tangents"
    caps = (np.full(J, angle_tolerance or np.inf), np.full(J, distance_tolerance or np.inf))
    world = WorldError(motion, rotations, translations, virtual_distance)
    base = caps if position_tolerance is None else local_tolerances(
        motion, translations, world, position_tolerance)
    # as lists, which each joint reads its own floats off
    base_lists, cap_lists = [t.tolist() for t in base], [t.tolist() for t in caps]
    times = motion.times
    joints = [_JointFrames(times, rotations, translations, base_lists, cap_lists, j, moves(joint),
                           tangent_keys)
              for j, joint in enumerate(motion.joints)]
    fit = bool(fit)
    # the world search with greedy keys runs its threads in C (_greedy_search);
    # a pool's hand-over costs more than short clips' work
    threads_from = FIT_THREADS_FROM if fit else GREEDY_THREADS_FROM
    with _joint_threads(J if (fit or position_tolerance is None)
                        and motion.num_frames >= threads_from else 1) as pool:
        if position_tolerance is not None:
            result = _world_reduction(motion, joints, world, (rotations, translations),
                                      position_tolerance, fit, progress, pool)
        else:
            choose, scales = _fitted_joint if fit else _greedy_joint, [1.0] * J
            selected = _choose(choose, joints, scales,
                               _pool_for(choose, joints, scales, pool), progress)
    if position_tolerance is None:
        result = _reduction(motion, joints, selected, _measure(joints, selected, world))
    # local tolerances given with position_tolerance are caps: below
    # rounding's they are refused as in local mode (a world reduction
    # returned keys past them, unremarked, a review found)
    for name, tolerance, worst in (("angle_tolerance", angle_tolerance, result.max_angle),
                                   ("distance_tolerance", distance_tolerance,
                                    result.max_distance)):
        if tolerance is not None:
            _check_reached(name, tolerance, worst.max())
    return result


def _world_reduction(motion, joints, world, channels, position_tolerance, fit, progress, pool):
    """reduce_keys with `position_tolerance`: the search of its Notes, on
    `pool` (see _joint_threads) where the choices run the core at length;
    channels = the clip's (rotations, translations), C-contiguous."""
    J = len(joints)
    factors = LOOSEN_FACTORS
    if fit:
        factors = TANGENT_LOOSEN_FACTORS if joints[0].tangent_keys else FIT_LOOSEN_FACTORS
    total = SEARCH_PASSES + (FIT_PASSES + 1 if fit else 0) + len(factors)
    passes = 0

    def passed(done):
        nonlocal passes
        passes = done
        if progress:
            progress(passes, total)

    def loosened(found, measured, choose_joint, scale):
        if passes < SEARCH_PASSES + FIT_PASSES:  # those not needed, at once
            passed(SEARCH_PASSES + FIT_PASSES)
        loosen = _loosen_joints(motion, joints, found, measured, choose_joint, scale,
                                position_tolerance, factors, pool)
        while True:
            try:
                next(loosen)
                passed(passes + 1)
            except StopIteration as done:
                return done.value

    swept = fit and joints[0].tangent_keys
    if swept:  # swept keys from SWEPT_SCALE, halved until they pass, then loosened
        # the core's numbering of the passes: the sweeps', then the loosening's from
        # FIT_PASSES + 1, which the greedy search's passes come before; None for a
        # false progress, which passed() never calls (not the progress itself)
        report = (lambda done: passed(
            done if done <= FIT_PASSES else SEARCH_PASSES + done - 1)) if progress else None
        result = _swept_search(motion, joints, world, channels, position_tolerance, report)
        if result is not None:
            return result
        passes = FIT_PASSES  # none held (a tolerance near rounding's): greedy keys, as below
    skipped = passes
    keys, position, angle, distance, good_scale, best_scale, orders = _greedy_search(
        joints, world, channels, position_tolerance, () if fit else factors,
        progress and (lambda done: passed(skipped + done)))
    if keys is None:  # no pass held: every frame a key, exact to rounding
        every = [(np.arange(motion.num_frames),)] * J
        result = _reduction(motion, joints, every, _measure(joints, every, world))
        if progress:
            progress(total, total)
        _check_reached("position_tolerance", position_tolerance, result.max_position.max())
        return result
    if not fit:
        return _keyed(motion, joints, keys, angle, distance, position)
    for joint, order in zip(joints, orders):  # the fits start from greedy keys
        joint.take_order(*order)
    found = [(k,) for k in keys]
    best = found, _measure(joints, found, world)
    best_choice = _greedy_joint
    # fitted keys at the greedy search's scale, halved until they pass (the
    # loosening then raises each joint's scale as far as it goes)
    for scale in () if swept else _fitted_scales(good_scale):
        result = _fitted_pass(joints, scale, world, position_tolerance, pool)
        passed(passes + 1)
        if result is not None:
            if sum(len(choice[0]) for choice in result[0]) < sum(map(len, keys)):
                best, best_scale, best_choice = result, scale, _fitted_joint
            break
    return loosened(*best, best_choice, best_scale)


def _fitted_pass(joints, scale, world, tolerance, pool):
    """Every joint's fitted keys at `scale` (_fitted_joint) and the
    WorldError under their curves, or None where a point strays past the
    tolerance (the joints after it then not chosen)."""
    selected = []
    choices = _choose_as_checked(_fitted_joint, joints, scale, selected, pool)
    try:
        measured = _measure(joints, choices, world, tolerance)
    finally:  # no joint of this pass runs on into the next
        choices.close()
    return None if measured is None else (selected, measured)


def _fitted_scales(good_scale):
    """The FIT_PASSES scales the fitted passes try in turn: the greedy
    search's largest that held, halved each time, but from the third no
    higher than FIRST_SCALE.  Where greedy keys keep nearly every frame
    they hold at any scale (76 on a review's smooth clip), while fitted
    keys need about the first-order one (they held there from 2.9): halved
    four times from there, every pass failed and the search kept every
    frame, twice the keys of a tolerance half as large.  The last is no
    higher than 1, the first-order bound itself: swept tangent keys, when
    they took these passes, strayed past the world bound at FIRST_SCALE / 2
    where they held at 1 (a single joint of 250 frames kept all 250
    against 130 at 1, a review found; they now start from SWEPT_SCALE,
    which reaches 1 by its second pass)."""
    scales = [good_scale, good_scale / 2]
    while len(scales) < FIT_PASSES:
        scales.append(min(scales[-1] / 2, FIRST_SCALE))
    scales = scales[:FIT_PASSES]
    scales[-1] = min(scales[-1], 1.0)
    return scales


def _world_clip(joints, world, channels):
    """The clip as the core's world searches take it (see kb_world_clip):
    times, rotations, translations, parents, moves, offsets, n_sites,
    sites, truth, tolerances and caps."""
    parents, n_sites, sites, truth = world.points
    return (joints[0].frames[0], *channels, parents, np.array([o is None for o in world.offsets]),
            np.array([np.zeros(3) if o is None else o for o in world.offsets]), n_sites, sites,
            truth, np.array([joint.base for joint in joints]),
            np.array([joint.caps for joint in joints]))


def _search_threads(joints, threads_from):
    """The threads a world search in C runs on: reduce_keys's (see
    _joint_threads) on clips of threads_from frames or more, else one."""
    F = len(joints[0].frames[0])
    return min(get_num_threads(), len(joints)) if F >= threads_from else 1


def _swept_search(motion, joints, world, channels, position_tolerance, progress):
    """The world-space search with tangent keys, in C (see
    kb_reduce_world_swept): every joint swept at SWEPT_SCALE times its
    tolerances, halved until every point stays within position_tolerance
    (at most FIT_PASSES passes), then each joint's keys dropped under its
    tolerances loosened by each of TANGENT_LOOSEN_FACTORS in turn, and last
    at its final ones, each kept (or the pieces of them that hold) where
    every point stays within it; progress(passes) as the core numbers them.
    The Reduction, or None where no pass held."""
    found = _core.reduce_world_swept(
        *_world_clip(joints, world, channels), position_tolerance,
        np.array([SWEPT_SCALE / 2.0 ** k for k in range(FIT_PASSES)]),
        np.array(TANGENT_LOOSEN_FACTORS), progress, _search_threads(joints, FIT_THREADS_FROM))
    if found is None:
        return None
    keys, rotation_rows, translation_rows, position, angle, distance, _ = found
    return _keyed(motion, joints, keys, angle, distance, position, rotation_rows,
                  translation_rows)


def _greedy_search(joints, world, channels, position_tolerance, factors, progress):
    """The world-space search with greedy keys, in C (see
    kb_reduce_world_greedy): every joint's tolerances scaled alike (from
    FIRST_SCALE, SEARCH_PASSES passes), then each joint's loosened by each
    of `factors` in turn; progress(passes) after each pass.  Returns each
    joint's keys (None for all where no pass held), worst world-space
    error, angle and distance, the largest scale that held, the scale of
    the pass the keys came from (before the loosening), and per joint the
    greedy order the search ran (see _JointFrames.take_order)."""
    # the greedy orders a pass carries on run on threads as _pool_for's do
    keys, _, position, angle, distance, orders, scores, floors, good, best = (
        _core.reduce_world_greedy(
            *_world_clip(joints, world, channels), position_tolerance, FIRST_SCALE,
            SEARCH_PASSES, np.array(factors, dtype=np.float64), progress,
            _search_threads(joints, GREEDY_THREADS_FROM)))
    return keys, position, angle, distance, good, best, list(zip(orders, scores, floors))
