"""A quick smoke run of benchmarks/run.py: it runs and its peers agree with
kbspline (the script asserts that).  No timing is checked."""
import importlib.util
import pathlib

import pytest

pytest.importorskip("scipy")
SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"


def test_benchmarks_quick(capsys, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # its machine.py
    spec = importlib.util.spec_from_file_location("kbspline_benchmarks", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.main(["--quick", "--plot", str(tmp_path / "ratios.png")])
    assert {row[0][:2] for row in rows} == {"W1", "W2", "W3", "W4", "W5", "W6", "W7"}
    out = capsys.readouterr().out
    assert "| W1 positions |" in out and "core built by" in out and "SciPy" in out
    assert (tmp_path / "ratios.png").stat().st_size > 0
    assert bench.target_ratio("≥ 0.83× (≤ 1.2× the fill)") == 0.83
    assert bench.target_ratio("") is None


def test_export_tolerance_benchmark_runs(capsys):
    from mocap import CLIPS, MISSING
    if not CLIPS:
        pytest.skip(MISSING)
    path = SCRIPT.parent / "export_tolerance.py"
    spec = importlib.util.spec_from_file_location("kbspline_export_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.main([1e-2])
    out = capsys.readouterr().out
    assert "walk" in out and "0.01:" in out


def test_scaling_benchmark_runs(capsys, monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("kbspline_scaling", SCRIPT.parent / "scaling.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    results = bench.main(["--quick", "--plot", str(tmp_path / "scaling.png")])
    assert len(results) == 6 and all(len(rows) == 3 for rows in results.values())
    assert (tmp_path / "scaling.png").stat().st_size > 0
    assert "kept bytes/key" in capsys.readouterr().out


def test_reduction_benchmark_runs(capsys):
    spec = importlib.util.spec_from_file_location("kbspline_reduction",
                                                  SCRIPT.parent / "reduction.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.main(["--quick"])
    assert [row[2] for row in rows] == ["local", "uniform", "world greedy", "world fitted"]
    assert all(row[4] <= row[1] for row in rows)  # every method within its tolerance (cm)
    assert "| world fitted |" in capsys.readouterr().out
    rows = bench.scaling(plays=(1, 2), first=40)
    assert [frames for frames, _, _ in rows] == [40] * 3 + [80] * 3
