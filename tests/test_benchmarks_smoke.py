"""A quick smoke run of benchmarks/run.py: it runs and its peers agree with
kbspline (the script asserts that).  No timing is checked."""
import importlib.util
import pathlib

import pytest

pytest.importorskip("scipy")
SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"


def test_benchmarks_quick(capsys):
    spec = importlib.util.spec_from_file_location("kbspline_benchmarks", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.main(["--quick"])
    assert {row[0][:2] for row in rows} == {"W1", "W2", "W3", "W4", "W5", "W6", "W7"}
    assert "| W1 positions |" in capsys.readouterr().out


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
