"""Input fuzzing: mutated ONNX, calibration, target and config files run through the `hlsgen` CLI in this
process. Every one must end in an exit code its mutator allows (never 70), with one error line on stderr
(no traceback) and no half-written output; each failure is kept as a reproducer folder with a replay.sh."""
from __future__ import annotations

import contextlib
import hashlib
import io
import multiprocessing
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import INTERNAL_ERROR_EXIT
from .cases import BAD_BUILD, CALIB, GOOD, MODEL, MUTATORS, OUT, OUT_NPZ, Case, draw_case
from .seeds import load_seeds

OUTCOMES = ("ok", "wrong-code", "crash", "multi-line", "leftover")
ERROR_PREFIXES = ("error:", "internal error:")


@dataclass(frozen=True)
class CaseResult:
    index: int
    mutator: str
    command: str
    category: int
    code: int
    outcome: str
    detail: str  # for a failure: what went wrong; the error line otherwise
    seconds: float


@dataclass(frozen=True)
class InputFuzzSummary:
    seed: int
    results: list[CaseResult]
    seconds: float
    failures: list[Path]  # one reproducer folder per failed case, in the order of the failed results

    def counts(self) -> dict[str, Counter]:
        per: dict[str, Counter] = {m.name: Counter() for m in MUTATORS}
        for r in self.results:
            per[r.mutator][r.outcome] += 1
        return per

    def format(self) -> str:
        total = Counter(r.outcome for r in self.results)
        n = len(self.results)
        lines = [f"input fuzzing, seed {self.seed}: {n} mutated inputs in {self.seconds:.1f} s "
                 f"({1000 * self.seconds / max(n, 1):.0f} ms each): "
                 + ", ".join(f"{o} {total[o]}" for o in OUTCOMES)]
        codes = Counter(r.code for r in self.results)
        lines.append("  exit codes: " + ", ".join(f"{c}: {k}" for c, k in sorted(codes.items())))
        for name, counter in self.counts().items():
            lines.append(f"  {name:18} " + ", ".join(f"{o} {counter[o]}" for o in OUTCOMES if counter[o]))
        for r, path in zip([r for r in self.results if r.outcome != "ok"], self.failures):
            lines.append(f"  FAIL {r.outcome}: {r.mutator} via {r.command}: {r.detail} -> {path}/replay.sh")
        return "\n".join(lines)


def fuzz_inputs(seed: int, count: int, workdir: Path, cli: Callable[[list[str]], int],
                jobs: int = 1) -> InputFuzzSummary:
    """Run `count` mutated inputs (the mutators in turn) through `cli` (hlsgen.cli.main: the CLI hands
    itself in, so that this module never imports it) and check every answer; the same (seed, count) gives
    the same cases and outcomes for any `jobs`."""
    workdir = Path(workdir).absolute()
    workdir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    good = _prepare_good_build(workdir, cli)
    shares = [(seed, range(w, count, jobs), str(workdir), str(good), cli) for w in range(jobs)]
    if jobs > 1:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            parts = pool.map(_run_share, shares)
    else:
        parts = [_run_share(shares[0])]
    results = sorted((r for part in parts for r in part), key=lambda r: r.index)
    failures = [workdir / "failures" / f"{r.mutator}-{r.index}" for r in results if r.outcome != "ok"]
    return InputFuzzSummary(seed, results, time.perf_counter() - start, failures)


def _prepare_good_build(workdir: Path, cli: Callable[[list[str]], int]) -> Path:
    """The build folder `run`, `csim` and `sim` read bad inputs against, and prebuilt OUTs copy."""
    good = workdir / GOOD
    if (good / "build.json").is_file():
        return good
    seed_model = load_seeds().models[0]
    folder = workdir / "good-inputs"
    folder.mkdir(exist_ok=True)
    (folder / MODEL).write_bytes(seed_model.onnx_bytes)
    (folder / CALIB).write_bytes(seed_model.calib_bytes)
    code, _, stderr = _run_cli(cli, ["build", str(folder / MODEL), "--calib", str(folder / CALIB), "-o", str(good),
                                     "-q"])
    if code != 0:
        raise RuntimeError(f"the seed model does not build (exit {code}): {stderr.strip()}")
    return good


def _run_share(share) -> list[CaseResult]:
    seed, indices, workdir, good, cli = share
    seeds, workdir, good = load_seeds(), Path(workdir), Path(good)
    good_digest = _digest(good)
    results = []
    for index in indices:
        case = draw_case(seeds, seed, index, str(good))
        result = _run_case(case, workdir / "cases" / str(index), good, good_digest, cli)
        if result.outcome != "ok":
            folder = workdir / "failures" / f"{case.mutator}-{index}"
            _keep_reproducer(case, result, folder, good)
            print(f"input fuzzing: {result.outcome}: {case.mutator} via {result.command}: {result.detail} -> "
                  f"{folder}/replay.sh", file=sys.stderr, flush=True)
        shutil.rmtree(workdir / "cases" / str(index), ignore_errors=True)
        results.append(result)
    return results


def _run_case(case: Case, folder: Path, good: Path, good_digest: str, cli: Callable[[list[str]], int]) -> CaseResult:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    if case.build_copy:
        shutil.copytree(good, folder / BAD_BUILD)
    _write_files(case, folder)
    if case.prebuilt:
        shutil.copytree(good, folder / OUT)
    start = time.perf_counter()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        code, _, stderr = _run_cli(cli, list(case.argv))
    finally:
        os.chdir(cwd)
    seconds = time.perf_counter() - start
    outcome, detail = _judge(case, code, stderr, folder, good_digest)
    if outcome == "ok" and code != 0 and str(good) in case.argv and _digest(good) != good_digest:
        outcome, detail = "leftover", f"exit {code} but the prepared build folder changed"
    return CaseResult(case.index, case.mutator, case.command, case.mutant.category, code, outcome, detail, seconds)


def _run_cli(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str, str]:
    """`hlsgen ARGV` in this process, its stdout and stderr captured (the CLI's rich consoles write to
    whatever sys.stdout and sys.stderr are when they print)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except BaseException as exc:  # main() must turn everything into an exit code
            print(f"Traceback: escaped main(): {type(exc).__name__}: {exc}", file=stderr)
            code = INTERNAL_ERROR_EXIT
    return code, stdout.getvalue(), stderr.getvalue()


def _judge(case: Case, code: int, stderr: str, folder: Path, good_digest: str) -> tuple[str, str]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(ERROR_PREFIXES)]
    first = errors[0] if errors else (lines[-1] if lines else "")
    if code == INTERNAL_ERROR_EXIT or "Traceback" in stderr:
        return "crash", f"exit {code}: {first}"
    if code not in case.mutant.allowed:
        return "wrong-code", f"exit {code}, allowed {sorted(case.mutant.allowed)}: {first}"
    if code != 0 and (len(errors) != 1 or lines[-1] != errors[0]):
        return "multi-line", f"exit {code}: stderr {stderr[-300:]!r}"
    if code == 0 and errors:
        return "multi-line", f"exit 0 with an error line: {first}"
    missing = [m for m in case.mutant.mention if code == case.mutant.category and m not in first]
    if missing:
        return "wrong-code", f"exit {code} without naming {missing}: {first}"
    leftover = _leftover(case, code, folder, good_digest)
    if leftover:
        return "leftover", f"exit {code}: {leftover}"
    return "ok", first


def _leftover(case: Case, code: int, folder: Path, good_digest: str) -> str:
    """What a failed command left behind that it must not have."""
    staging = sorted(p.name for p in folder.glob(f".{OUT}.hlsgen-*")) + sorted(p.name for p in folder.glob("*.tmp"))
    if staging:
        return f"staging left: {staging}"
    if code == 0:
        return ""
    out = folder / OUT
    if case.prebuilt:
        if _digest(out) != good_digest:
            return "the previous build in OUT changed"
    elif out.exists():
        return "OUT written"
    if (folder / OUT_NPZ).exists():
        return "OUT.npz written"
    return ""


def _digest(folder: Path) -> str:
    """One hash over every file's path and bytes under `folder` ('' when it does not exist)."""
    if not folder.exists():
        return ""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def _write_files(case: Case, folder: Path) -> None:
    for name, data in case.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


def _keep_reproducer(case: Case, result: CaseResult, folder: Path, good: Path) -> None:
    """The mutated inputs and a replay.sh holding the one `hlsgen` command (run from its own folder)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    _write_files(case, folder)
    argv = [a if a != str(good) else GOOD for a in case.argv]
    setup = ""
    if GOOD in argv or case.prebuilt or case.build_copy:
        (folder / "good.onnx").write_bytes(load_seeds().models[0].onnx_bytes)
        (folder / "good_calib.npz").write_bytes(load_seeds().models[0].calib_bytes)
        setup = f"[ -d {GOOD} ] || hlsgen build good.onnx --calib good_calib.npz -o {GOOD} -q\n"
        if case.prebuilt:
            setup += f"rm -rf {OUT} && cp -r {GOOD} {OUT}\n"
        if case.build_copy:  # the good build's other files beside the mutated one kept here
            setup += f"cp -rn {GOOD}/. {BAD_BUILD}/\n"
    script = (f"#!/bin/sh\n# {case.mutator}: {case.mutant.what}\n# allowed exit codes {sorted(case.mutant.allowed)}; "
              f"got {result.outcome}: {result.detail}\ncd \"$(dirname \"$0\")\"\n{setup}hlsgen {' '.join(argv)}\n")
    (folder / "replay.sh").write_text(script)
    (folder / "replay.sh").chmod(0o755)
