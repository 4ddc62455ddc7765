"""OUT is always a whole build: the previous one or the new one, never a mix and never missing, whether two
builds write it at once, a build is killed (SIGKILL, SIGINT) at any point, or the disk fills up; a killed
build's staging folder is removed by the next build. Real `python -m hlsgen` processes (what the `hlsgen`
command runs) throughout."""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from hlsgen.cli import main
from hlsgen.errors import INTERRUPTED_EXIT, TERMINATED_EXIT, PathError
from hlsgen.staging import INFIX, remove_stale, staging_for, swap
from tests.builders import make_model, tensor_value
from tests.cli.test_build import CALIB, MODEL, ROOT
from tests.cli.test_errors import assert_one_line_error

DIGITS = ["build", MODEL, "--calib", CALIB, "-q"]


def _cli(*argv: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hlsgen", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, **(env or {})})


def _run(*argv: str, env: dict | None = None) -> tuple[int, str]:
    process = _cli(*argv, env=env)
    _, err = process.communicate(timeout=300)
    return process.returncode, err


def _files(folder: Path) -> dict[str, bytes]:
    """Every file of a build folder by its path inside it (builds are deterministic byte for byte)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if INFIX in p.name)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A model other than digits: a different complete build."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "F"], ["y"], transB=1, name="fc")]
    model = make_model(nodes, [tensor_value("x", [1, 1, 8, 8])], [tensor_value("y", None)],
                       {"W": rng.normal(0, 0.5, (4, 1, 3, 3)).astype(np.float32),
                        "F": rng.normal(0, 0.1, (3, 256)).astype(np.float32)}, opset=13)
    path = tmp_path_factory.mktemp("tiny") / "tiny.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_two_builds_into_one_out_at_once_leave_one_whole_build(tmp_path, tiny):
    """Several rounds of a digits build and a tiny model's build started together into the same OUT (the
    first with no OUT yet): both succeed and OUT is exactly one of the two, with nothing left beside it."""
    commands = {"digits": DIGITS, "tiny": ["build", str(tiny), "--input-range", "0,1", "-q"]}
    references = {}
    for name, command in commands.items():  # in this process: the same code, without an interpreter's start
        assert main([*command, "-o", str(tmp_path / f"ref_{name}")]) == 0
        references[name] = _files(tmp_path / f"ref_{name}")
    out = tmp_path / "shared" / "out"
    for _ in range(3):
        processes = [_cli(*command, "-o", str(out)) for command in commands.values()]
        for process in processes:
            _, err = process.communicate(timeout=300)
            assert process.returncode == 0, err
        assert _files(out) in references.values()
        assert [p.name for p in out.parent.iterdir()] == ["out"]


def test_racing_swaps_never_leave_out_missing_or_mixed(tmp_path):
    """The swap itself, raced hard: four threads put 30 folders each into one OUT while a fifth reads it;
    every read sees a whole folder (its two files from the same writer) and OUT never disappears."""
    out = tmp_path / "out"
    swap(_folder(tmp_path / "first", "first"), out)
    stop, torn, reads = threading.Event(), [], []

    def writer(name: str) -> None:
        for i in range(30):
            staging = _folder(tmp_path / f".out{INFIX}{name}{i}", f"{name}{i}")
            swap(staging, out)
            shutil.rmtree(staging)

    def reader() -> None:
        while not stop.is_set():
            try:
                folder = os.open(out, os.O_RDONLY | os.O_DIRECTORY)  # one folder, whatever OUT becomes meanwhile
            except FileNotFoundError:
                torn.append("OUT missing")
                continue
            try:
                names = os.listdir(folder)
                tags = {_read(folder, name) for name in names}
                still_out = os.stat(out).st_ino == os.fstat(folder).st_ino
            except FileNotFoundError:  # swapped out and being removed while read: not OUT any more
                still_out = False
            finally:
                os.close(folder)
            if still_out and (len(names) != 2 or len(tags) != 1):
                torn.append(f"{names} {tags}")
            reads.append(still_out)

    threads = [threading.Thread(target=writer, args=(name,)) for name in "abcd"]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    watcher.join()
    assert torn == [] and sum(reads) > 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def _read(folder: int, name: str) -> str:
    file = os.open(name, os.O_RDONLY, dir_fd=folder)
    try:
        return os.read(file, 100).decode()
    finally:
        os.close(file)


def _folder(path: Path, tag: str) -> Path:
    path.mkdir()
    for name in ("a", "b"):
        (path / name).write_text(tag)
    return path


def test_without_an_exchange_the_old_build_is_moved_aside_then_removed(tmp_path):
    """File systems without RENAME_EXCHANGE (EINVAL) and C libraries without renameat2 (ENOSYS): OUT is
    moved aside, the new build renamed into place, and the old one removed by the commit."""
    for code in (errno.EINVAL, errno.ENOSYS):
        def unsupported(a, b, code=code):
            raise OSError(code, os.strerror(code))

        out = _folder(tmp_path / f"out{code}", "old")
        staging = _folder(tmp_path / f".out{code}{INFIX}x", "new")
        swap(staging, out, exchange=unsupported)
        assert (out / "a").read_text() == "new"
        assert (Path(f"{staging}.old") / "a").read_text() == "old"  # the commit removes it


def test_an_old_build_left_by_a_kill_after_the_exchange_is_removed_by_the_next(tmp_path):
    """A kill between the exchange and the old build's removal leaves the old build under the staging name,
    locked by nobody: OUT is already the new build, and the next build's clean-up removes the old."""
    out = _folder(tmp_path / "out", "old")
    staging = staging_for(out)
    (staging.folder / "a").write_text("new")
    swap(staging.folder, out)
    os.close(staging.lock)  # the process dies here
    assert (out / "a").read_text() == "new" and (staging.folder / "a").read_text() == "old"
    assert remove_stale(out) == [staging.folder]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_dead_builds_staging_folder_goes_and_a_live_ones_stays(tmp_path):
    """remove_stale takes a staging folder's lock to learn its owner is dead; a held lock (a live build)
    keeps the folder. A new staging folder is locked from its creation."""
    out = tmp_path / "out"
    dead, live = tmp_path / f".out{INFIX}dead", tmp_path / f".out{INFIX}live"
    for folder in (dead, live):
        folder.mkdir()
        (folder / "file").write_text("x")
    owner = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(owner, fcntl.LOCK_EX)
    try:
        assert remove_stale(out) == [dead]
        assert live.is_dir() and not dead.exists()
        staging = staging_for(out)
        assert remove_stale(out) == [] and staging.folder.is_dir()
        staging.discard()
    finally:
        os.close(owner)
    assert remove_stale(out) == [live]


def test_a_build_killed_at_any_point_leaves_the_previous_build_or_the_new(tmp_path, monkeypatch):
    """A dozen SIGKILLs, SIGINTs and SIGTERMs at seeded random delays over a build with --verify csim
    (loading, writing, compiling, simulating, swapping): OUT is byte for byte the previous build or the new
    one; SIGINT exits 130 and SIGTERM 143, each with one line; after the kills the next build leaves no
    staging folder beside OUT. A build that finishes before its signal (the machine's load changes under
    xdist) shortens the delays drawn after it and does not count among the dozen."""
    new = [*DIGITS, "--bits", "6", "--verify", "csim"]
    monkeypatch.setenv("HLSGEN_CSIM_PORTABLE", "1")  # hlsgen's own ap_int headers: g++ takes half the time
    assert main([*DIGITS, "-o", str(tmp_path / "ref_prev")]) == 0
    start = time.monotonic()
    code, err = _run(*new, "-o", str(tmp_path / "ref_new"))
    duration = time.monotonic() - start
    assert code == 0, err
    previous, complete = _files(tmp_path / "ref_prev"), _files(tmp_path / "ref_new")
    parent = tmp_path / "builds"
    parent.mkdir()
    out = parent / "out"
    rng = random.Random(14)
    killed, finished = [], 0
    while len(killed) < 12:
        assert finished < 12, f"{finished} builds finished before their signal; killed: {killed}"
        if not (out.exists() and _files(out) == previous):
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(tmp_path / "ref_prev", out)
        sent = (signal.SIGKILL, signal.SIGINT, signal.SIGTERM)[len(killed) % 3]
        started = time.monotonic()
        process = _cli(*new, "-o", str(out))
        delay = rng.uniform(0.05, 0.95) * duration  # from loading the CLI to the swap
        _until_guarded(process)  # a signal while Python itself starts, no program can handle
        time.sleep(max(0.0, started + delay - time.monotonic()))
        process.send_signal(sent)
        _, err = process.communicate(timeout=120)
        files = _files(out)
        assert files in (previous, complete), f"signal {len(killed)}: OUT is neither build"
        if process.returncode == 0:  # the build finished before the signal: the machine got faster
            assert files == complete
            finished += 1
            duration = min(duration, delay)
            continue
        killed.append(process.returncode)
        if sent == signal.SIGKILL:
            assert process.returncode == -signal.SIGKILL
        else:
            assert (process.returncode, _lines(err)) == EXITS[sent], err
    assert main([*new, "-o", str(out)]) == 0
    assert _files(out) == complete
    assert [p.name for p in parent.iterdir()] == ["out"]


EXITS = {signal.SIGINT: (INTERRUPTED_EXIT, ["interrupted: nothing was written"]),
         signal.SIGTERM: (TERMINATED_EXIT, ["terminated: nothing was written"])}


def _lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


def test_a_signal_while_the_cli_loads_is_one_line_too(tmp_path):
    """Ctrl-C or SIGTERM in the second or more the CLI takes to load (numpy, onnx, the compiler) ended in
    Python's traceback of the import; the command's guard (hlsgen.__main__) makes it 130/143 and one line."""
    for sent, (code, lines) in EXITS.items():
        process = _cli(*DIGITS, "-o", str(tmp_path / "out"))
        _until_guarded(process)
        process.send_signal(sent)
        _, err = process.communicate(timeout=60)
        assert (process.returncode, _lines(err)) == (code, lines), err
    assert list(tmp_path.iterdir()) == []


def _until_guarded(process: subprocess.Popen) -> None:
    """Wait until the command's guard catches SIGTERM (the kernel's mask of caught signals says so): the CLI
    then starts loading, for a second or more. A fixed delay raced with Python's own start on a loaded machine,
    before any guard of hlsgen's can exist."""
    deadline = time.monotonic() + 60
    while not int(_status(process.pid).get("SigCgt", "0"), 16) >> (signal.SIGTERM - 1) & 1:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.005)


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


@contextlib.contextmanager
def _small_disk(folder: Path, size: str):
    """A tmpfs of `size` at `folder` (tests run as root, here and in CI), unmounted whatever happens."""
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_full_disk_leaves_the_previous_build_and_says_so(tmp_path):
    """A disk with room for one build (a 1.4 MiB tmpfs) and a previous build on it: the next build runs out
    of space while writing: exit 6, one line naming OUT and the cause, OUT byte-identical, nothing beside."""
    assert main([*DIGITS, "-o", str(tmp_path / "ref")]) == 0
    with _small_disk(tmp_path / "disk", "1400k") as disk:
        out = disk / "out"
        shutil.copytree(tmp_path / "ref", out)
        code, err = _run(*DIGITS, "--bits", "6", "-o", str(out))
        assert code == PathError.exit_code, err
        assert_one_line_error(err, f"cannot write {out}: no space left on device", "left as it was")
        assert _files(out) == _files(tmp_path / "ref")
        assert [p.name for p in disk.iterdir()] == ["out"]


def test_a_full_disk_under_gxx_is_a_path_error_not_a_bug(tmp_path):
    """--verify csim with TMPDIR on a full disk: g++ cannot write its assembly. That is exit 6 with g++'s
    own line, not 'a bug in hlsgen' (exit 70); OUT stays the previous build."""
    out = tmp_path / "out"
    assert main([*DIGITS, "-o", str(out)]) == 0
    previous = _files(out)
    with _small_disk(tmp_path / "tmp", "256k") as tmp:
        code, err = _run(*DIGITS, "--bits", "6", "--verify", "csim", "-o", str(out), env={"TMPDIR": str(tmp)})
    assert code == PathError.exit_code, err
    assert_one_line_error(err, "g++ could not write its files", "No space left on device")
    assert _files(out) == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "tmp"]


def test_csim_on_a_full_disk_leaves_the_builds_report_whole(tmp_path):
    """`hlsgen csim OUT` records its verdict in OUT/report.json and report.html, each replaced whole or not at
    all (a rewrite in place truncates first: a kill or a full disk midway left an empty or cut file, a build
    `hlsgen report` could not read). A full disk: exit 6, one line naming the file, OUT byte-identical."""
    assert main([*DIGITS, "-o", str(tmp_path / "ref")]) == 0
    with _small_disk(tmp_path / "disk", "1400k") as disk:
        out = disk / "out"
        shutil.copytree(tmp_path / "ref", out)
        _fill(disk / "filler")
        code, err = _run("csim", str(out), "-q")
        assert code == PathError.exit_code, err
        assert_one_line_error(err, "No space left on device", str(out / "report.json"))
        assert _files(out) == _files(tmp_path / "ref")
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "out"]


def _fill(path: Path) -> None:
    """Fills the disk `path` is on: unbuffered, so that no bytes wait to be written when the file closes."""
    with open(path, "wb", buffering=0) as file:
        with contextlib.suppress(OSError):
            while True:
                file.write(bytes(1 << 16))


def test_a_signal_inside_a_c_extension_s_import_is_still_the_signal():
    """SIGTERM while onnxruntime's module initializes surfaces as "ImportError: initialization failed" raised
    from the handler's Terminated: the guard finds the signal behind it (one line, 143), not a traceback."""
    from hlsgen.guard import _stop_behind
    from hlsgen.errors import Terminated
    try:
        try:
            raise Terminated()
        except Terminated as stop:
            raise ImportError("initialization failed") from stop
    except ImportError as error:
        assert isinstance(_stop_behind(error), Terminated)
    assert _stop_behind(ImportError("No module named 'x'")) is None
