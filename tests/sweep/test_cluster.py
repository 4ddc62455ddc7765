"""`hlsgen sweep` and `hlsgen regress` on a real dask.distributed cluster: a scheduler and two worker
processes started here, over TCP on localhost. Results, cache, failures as rows, a worker killed mid-task."""
import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from hlsgen.sweep.flow import Calibration, run_sweep
from hlsgen.sweep.grid import Axes
from hlsgen.sweep.runner import Cluster
from tests.builders import make_model, tensor_value
from tests.cli.test_build import CALIB, MODEL
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.cli.test_report_page import headless

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """tcp://127.0.0.1:PORT of a scheduler with two single-threaded worker processes (each behind its
    nanny, which restarts a killed worker), all importing this checkout."""
    folder = tmp_path_factory.mktemp("cluster")
    info = folder / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", str(info)], env=env, cwd=folder,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 120
        while not info.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        procs += [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(info),
                                    "--nthreads", "1", "--no-dashboard", "--name", f"w{i}"], env=env, cwd=folder,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(2)]
        address = json.loads(info.read_text())["address"]
        from distributed import Client
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for proc in reversed(procs):
            proc.send_signal(signal.SIGINT)
        for proc in reversed(procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="module")
def swept(scheduler, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "digits"
    code = _cli(["sweep", MODEL, "--calib", CALIB, "--targets", "systolic8x8,systolic16x16", "--bits", "4,8",
                 "--scheduler", scheduler, "-o", str(out), "-q"])
    assert code == 0
    return out


def _cli(argv):
    from hlsgen.cli import main
    return main(argv)


def _rows(out: Path) -> list[dict]:
    with open(out / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_a_sweep_fills_the_table(swept):
    rows = _rows(swept)
    assert [(r["target"], r["bits"]) for r in rows] == [("systolic8x8", "4"), ("systolic8x8", "8"),
                                                        ("systolic16x16", "4"), ("systolic16x16", "8")]
    assert all(r["status"] == "ok" and r["exit_code"] == "0" for r in rows)
    for row in rows:  # each row is its own build's report, which the sweep kept and links to
        report = json.loads((swept / row["report"]).with_name("report.json").read_text())
        assert int(row["cycles"]) == report["total"]["cycles"]
        assert int(row["dsp"]) == report["total"]["resources"]["dsp"]
        assert int(row["weight_bits"]) == report["total"]["weight_storage"]["bits"]
        assert row["hlsgen"] == "0.1.0"
    by = {(r["target"], r["bits"]): r for r in rows}
    assert int(by["systolic8x8", "4"]["weight_bits"]) * 2 == int(by["systolic8x8", "8"]["weight_bits"])
    assert float(by["systolic16x16", "4"]["sqnr_db"]) < float(by["systolic16x16", "8"]["sqnr_db"])
    assert int(by["systolic8x8", "8"]["dsp"]) < int(by["systolic16x16", "8"]["dsp"])
    assert float(by["systolic8x8", "8"]["latency_us"]) > float(by["systolic16x16", "8"]["latency_us"])
    import pyarrow.parquet as pq
    table = pq.read_table(swept / "results.parquet").to_pylist()
    assert [(r["target"], r["bits"], r["cycles"]) for r in table] == [(r["target"], r["bits"], int(r["cycles"]))
                                                                      for r in rows]


def test_a_rerun_computes_nothing_and_a_new_axis_only_itself(swept, scheduler):
    seen = []
    axes = Axes(("systolic8x8", "systolic16x16"), ("4", "8"))
    before = {p: p.stat().st_mtime_ns for p in (swept / "rows").glob("*.json")}
    outcome = run_sweep([(Path(MODEL), None)], axes, Calibration(Path(CALIB)), swept, Cluster(scheduler), "digits",
                        seen.append)
    assert seen == [seen[0]] and (seen[0].total, seen[0].cached, seen[0].done) == (4, 4, 4)  # no cluster work
    assert {p: p.stat().st_mtime_ns for p in (swept / "rows").glob("*.json")} == before
    assert [r["key"] for r in outcome.rows] == [r["key"] for r in _rows(swept)]
    seen.clear()
    wider = Axes(("systolic8x8", "systolic16x16"), ("4", "6", "8"))
    outcome = run_sweep([(Path(MODEL), None)], wider, Calibration(Path(CALIB)), swept, Cluster(scheduler), "digits",
                        seen.append)
    assert (seen[0].cached, seen[-1].done, seen[-1].total) == (4, 6, 6)
    assert len(list((swept / "rows").glob("*.json"))) == 6
    assert all(r["status"] == "ok" for r in outcome.rows)


def test_the_index_page_in_a_browser(swept, tmp_path):
    page = swept / "index.html"
    dom = headless(f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()).stdout
    rows = _rows(swept)
    assert dom.count('class="pareto-plot"') == 2  # latency vs DSP, latency vs LUT
    assert dom.count("<circle") == 2 * len(rows)
    assert dom.count('<tr class="pareto') >= 1  # the front is marked in the table
    for row in rows:
        assert f'href="{row["report"]}"' in dom and (swept / row["report"]).is_file()
    shot = tmp_path / "index.png"
    headless(f"--user-data-dir={tmp_path / 'profile2'}", f"--screenshot={shot}", "--window-size=1400,1000",
             page.as_uri())
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


def test_a_failing_configuration_is_a_row(scheduler, tmp_path):
    out, grid = tmp_path / "s", tmp_path / "grid.yaml"
    grid.write_text("targets: [systolic16x16]\nbatch: [1, 4096]\n")
    code = _cli(["sweep", MODEL, "--calib", CALIB, "--grid", str(grid), "--scheduler", scheduler, "-o", str(out), "-q"])
    assert code == 0
    ok, failed = _rows(out)
    assert ok["status"] == "ok" and failed["status"] == "failed"
    assert (failed["exit_code"], failed["category"]) == ("3", "MappingError")
    assert "batch" in failed["error"] and "<build>" not in failed["error"] and not failed["report"]
    junit = (out / "junit.xml").read_text()
    assert 'failures="1"' in junit and 'type="MappingError"' in junit


def _tiny_model(folder: Path) -> None:
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)]
    weights = {"w": rng.standard_normal((4, 1, 3, 3)).astype(np.float32), "b": np.zeros(4, np.float32),
               "fw": rng.standard_normal((3, 4 * 6 * 6)).astype(np.float32) * 0.1, "fb": np.zeros(3, np.float32)}
    model = make_model(nodes, [tensor_value("x", [1, 1, 6, 6])], [tensor_value("y", None)], weights)
    (folder / "tiny.onnx").write_bytes(model.SerializeToString())
    np.savez(folder / "tiny.npz", x=rng.uniform(0, 1, (32, 1, 6, 6)).astype(np.float32))


def test_a_regression(scheduler, tmp_path, capsys):
    models = tmp_path / "models"
    models.mkdir()
    _tiny_model(models)
    (models / "broken.onnx").write_bytes(b"not a model")
    out = tmp_path / "regress"
    argv = ["regress", str(models), "--targets", "systolic16x16", "--verify", "csim", "--scheduler", scheduler,
            "-o", str(out)]
    code, stdout, err = run_cli(capsys, *argv, "-q")
    assert code == 7  # the first failure's own exit code: broken.onnx is no ONNX model
    assert_one_line_error(err, "1 of 2 builds failed", "broken.onnx", "ModelFileError")
    broken, tiny = _rows(out)
    assert (broken["category"], broken["exit_code"]) == ("ModelFileError", "7")
    assert (tiny["status"], tiny["csim"]) == ("ok", "bit-exact")
    junit = (out / "junit.xml").read_text()
    assert 'tests="2" failures="1"' in junit and 'classname="tiny"' in junit and 'type="ModelFileError"' in junit
    (models / "broken.onnx").unlink()
    code, stdout, _ = run_cli(capsys, *argv)
    assert code == 0 and "│ tiny " in stdout and "1 of 1 passed" in stdout
    assert len(list((out / "rows").glob("*.json"))) == 2  # the tiny model's row came from the cache


def test_a_lost_worker_is_retried(scheduler, tmp_path):
    """SIGKILL the worker running a task: its nanny starts a new one and the scheduler reruns the task."""
    from distributed import Client

    out, outcome = tmp_path / "s", {}
    axes = Axes(("systolic16x16",), ("8", "6"), verify=(("csim",),))

    def sweep():
        outcome["value"] = run_sweep([(Path(MODEL), None)], axes, Calibration(Path(CALIB)), out, Cluster(scheduler),
                                     "digits")
    thread = threading.Thread(target=sweep)
    with Client(scheduler, timeout=60) as client:
        thread.start()
        deadline, victim = time.monotonic() + 120, None
        while victim is None and time.monotonic() < deadline:
            busy = [worker for worker, keys in client.processing().items() if keys]
            victim = busy[0] if busy else None
            time.sleep(0.3)
        assert victim is not None
        time.sleep(1.0)  # into the build
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        thread.join(timeout=600)
        client.wait_for_workers(2, timeout=120)  # the nanny restarted it for the next tests
    rows = outcome["value"].rows
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert all(r["csim"] == "bit-exact" for r in rows)
    assert all(not r["worker"].endswith(f":{pid}") for r in rows)


def test_an_interrupted_sweep_resumes(scheduler, tmp_path):
    """Ctrl-C once the first rows are written: they stay, and the rerun computes only the others."""
    out = tmp_path / "s"
    argv = ["--targets", "systolic16x16", "--bits", "4,6,8,auto", "--scheduler", scheduler, "-o", str(out), "-q"]
    proc = subprocess.Popen([sys.executable, "-m", "hlsgen", "sweep", MODEL, "--calib", CALIB, *argv],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not list((out / "rows").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.splitlines()[-1].startswith("interrupted: ") and "kept in" in err.splitlines()[-1]
    kept = len(list((out / "rows").glob("*.json")))
    assert 1 <= kept < 4 and not (out / "results.csv").exists()
    seen = []
    outcome = run_sweep([(Path(MODEL), None)], Axes(("systolic16x16",), ("4", "6", "8", "auto")),
                        Calibration(Path(CALIB)), out, Cluster(scheduler), "digits", seen.append)
    assert (seen[0].cached, seen[-1].done) == (kept, 4)
    assert [r["bits"] for r in outcome.rows] == ["4", "6", "8", "auto"]
    assert all(r["status"] == "ok" for r in outcome.rows)


@pytest.mark.slow
def test_a_synthesized_configuration(tmp_path):
    """--synth: Yosys's counts (and nextpnr's Fmax on ECP5) in the row; about 2 minutes per target."""
    from hlsgen.sweep.grid import Config
    from hlsgen.sweep.task import Inputs, Task, run_task

    _tiny_model(tmp_path)
    inputs = Inputs("tiny.onnx", (tmp_path / "tiny.onnx").read_bytes(), (tmp_path / "tiny.npz").read_bytes())
    outcome = run_task(Task("k", "tiny.onnx", Config("systolic8x8", "8", synth=True)), inputs)
    row = outcome.row
    assert row["status"] == "ok", row["error"]
    report = json.loads(outcome.files["report.json"])
    assert row["synth_lut"] == report["synth"]["measured"]["lut"] > 0
    assert row["synth_dsp"] == report["synth"]["measured"]["dsp"]
    assert row["fmax_mhz"] is None  # synth_xilinx has no router


def test_the_embedded_local_cluster(tmp_path, capsys):
    """Without --scheduler: a LocalCluster of worker processes, started and stopped by the command."""
    _tiny_model(tmp_path)
    code, stdout, _ = run_cli(capsys, "sweep", str(tmp_path / "tiny.onnx"), "--calib", str(tmp_path / "tiny.npz"),
                              "--targets", "systolic8x8", "--bits", "4,8", "--workers", "1", "-o", str(tmp_path / "s"))
    assert code == 0 and "2 built, 0 failed" in stdout
    rows = _rows(tmp_path / "s")
    assert [r["status"] for r in rows] == ["ok", "ok"] and rows[0]["worker"] == rows[1]["worker"]  # one worker
    assert int(rows[0]["weight_bits"]) * 2 == int(rows[1]["weight_bits"])


@pytest.mark.slow
def test_a_regression_through_the_rtl(tmp_path, capsys):
    """`hlsgen regress` verifies C-sim and RTL by default (a Verilator build in a worker process)."""
    _tiny_model(tmp_path)
    code, _, _ = run_cli(capsys, "regress", str(tmp_path), "--targets", "systolic8x8", "--workers", "1", "-o",
                         str(tmp_path / "r"), "-q")
    assert code == 0
    (row,) = _rows(tmp_path / "r")
    assert (row["csim"], row["rtl"]) == ("bit-exact", "bit-exact")
