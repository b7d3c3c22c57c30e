"""python -m kbspline demo: the seed's leg, its table and its plot."""
import numpy as np
import pytest

from kbspline import __main__ as cli
from kbspline import demo


def test_leg_passes_through_the_key_frames():
    key_times = demo.TIMES[1:-1]
    (hip, knee, ankle, foot), _ = demo.animate(key_times)
    np.testing.assert_allclose(hip, demo.HIP[1:-1], atol=1e-12)
    expected = demo.inverse_kinematics(demo.HIP[1:-1], *demo.ANGLES[:, 1:-1])
    for got, want in zip((knee, ankle, foot), expected):
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_inverse_kinematics_keeps_segment_lengths():
    rng = np.random.default_rng(0)
    hip = rng.normal(size=(10, 2)) * 50
    knee, ankle, foot = demo.inverse_kinematics(hip, *rng.uniform(-3, 3, (3, 10)))
    np.testing.assert_allclose(np.linalg.norm(knee - hip, axis=1), demo.THIGH)
    np.testing.assert_allclose(np.linalg.norm(ankle - knee, axis=1), demo.CALF)
    np.testing.assert_allclose(np.linalg.norm(foot - ankle, axis=1), demo.FOOT)


def test_demo_prints_a_table(capsys):
    assert cli.main(["demo", "--frames", "5", "--no-plot"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 + 5
    first = lines[2].split()
    assert [float(v) for v in first[:3]] == [0.0, 50.0, 34.0]


def test_demo_writes_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "leg.png"
    assert cli.main(["demo", "--plot", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {path}" in capsys.readouterr().out


def test_demo_rejects_too_few_frames():
    with pytest.raises(SystemExit):
        cli.main(["demo", "--frames", "1"])


def test_demo_without_matplotlib_still_prints(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    assert cli.main(["demo", "--plot", str(tmp_path / "x.png")]) == 0
    out = capsys.readouterr().out
    assert "matplotlib is not installed" in out and "50.00" in out
    assert not (tmp_path / "x.png").exists()


def test_joint_angles_match_the_seed_with_its_sign_correction():
    from oracles import SeedRotSpline, wm_from_axis_angle
    ts = np.linspace(0.0, 4.0, 81)
    got = demo.joint_angles(ts)
    for track, angles in enumerate(demo.ANGLES):
        oracle = SeedRotSpline(demo.TIMES, [wm_from_axis_angle([0, 0, 1], a) for a in angles],
                               *np.zeros((3, 7)))
        for t, value in zip(ts, got[track]):
            q = oracle.q(t)
            angle = 2 * np.arccos(np.clip(q[0], -1, 1))   # Wild Magic's ToAxisAngle
            axis_z = q[3] / np.linalg.norm(q[1:]) if np.linalg.norm(q[1:]) > 0 else 1.0
            assert abs(value - (angle if axis_z > 0 else -angle)) < 1e-10


def test_demo_piped_into_a_reader_that_stops():
    import subprocess
    import sys
    proc = subprocess.Popen([sys.executable, "-m", "kbspline", "demo", "--no-plot",
                             "--frames", "100000"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("Eberly")
    proc.stdout.close()  # as `| head -1` does
    stderr = proc.stderr.read()
    assert proc.wait() == 1 and "Traceback" not in stderr



def test_demo_figure_is_readable():
    """Issue 50: the legend sits under the axes, not in a wide margin beside
    them; the velocity arrows are long enough to read and stay on the path
    (one poked past its end); the path keeps a margin from the top edge;
    the words mean something to a user (no "seed")."""
    plt = pytest.importorskip("matplotlib.pyplot")
    from kbspline import demo
    fig = demo.figure(plt)
    try:
        (ax,) = fig.axes
        fig.canvas.draw()
        box, legend = ax.get_window_extent(), ax.get_legend().get_window_extent()
        assert legend.y1 <= box.y0 and legend.width <= box.width
        assert ax.get_xlabel() and "downwards" in ax.get_ylabel()
        words = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + [
            t.get_text() for t in ax.get_legend().get_texts()]
        assert not any("seed" in w for w in words) and "Eberly's paper" in ax.get_title()
        (hip, *_), velocity = demo.animate(demo.ARROW_TIMES)
        half = velocity * demo.ARROW_SECONDS / 2          # arrows centred on the hip
        (x0, x1), (y1, y0) = ax.get_xlim(), ax.get_ylim()
        start, end = demo.HIP[1, 0], demo.HIP[-2, 0]
        assert np.all((hip - half)[:, 0] >= start) and np.all((hip + half)[:, 0] <= end)
        assert np.all(2 * np.linalg.norm(half, axis=1) >= 0.04 * (x1 - x0))
        assert demo.HIP[:, 1].min() - y0 >= 0.08 * (y1 - y0)     # room above the path
    finally:
        plt.close(fig)


def test_table_names_the_paper_not_the_seed(capsys):
    assert cli.main(["demo", "--frames", "2", "--no-plot"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "Eberly's paper, section 4" in first and "seed" not in first
