"""Input fuzzing: a fixed-seed run of mutated ONNX, calibration, target and config files ends every case in an
allowed exit code with one error line and no half-written output; the mutators do what they say."""
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml

from hlsgen.cli import main
from hlsgen.errors import ModelFileError, PathError, UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.frontend.onnx_import import load_onnx_proto
from hlsgen.fuzz import mutate_files, mutate_onnx
from hlsgen.fuzz.cases import MUTATORS, draw_case
from hlsgen.fuzz.inputs import fuzz_inputs
from hlsgen.fuzz.mutant import CONFIG, DATA, FIT, MODEL_FILE, TARGET, UNSUPPORTED
from hlsgen.fuzz.seeds import load_seeds, tiny_cnn

SEEDS = load_seeds()
TINY = tiny_cnn()


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> str:
    """The prepared build folder the cases read (the build_file mutator copies its files)."""
    from hlsgen.fuzz.inputs import _prepare_good_build
    return str(_prepare_good_build(tmp_path_factory.mktemp("fuzz"), main))


def test_fixed_seed_run_of_520_mutants(tmp_path):
    summary = fuzz_inputs(seed=2026, count=520, workdir=tmp_path, cli=main)
    report = summary.format()
    assert len(summary.results) == 520
    assert summary.failures == [], report
    assert all(r.outcome == "ok" for r in summary.results), report
    ran = {r.mutator for r in summary.results}
    assert ran == {m.name for m in MUTATORS}, report
    # every category a mutant aims at is answered with its own exit code at least once
    categories = {r.category for r in summary.results}
    assert categories == {0, CONFIG, FIT, PathError.exit_code, MODEL_FILE, UNSUPPORTED, TARGET, DATA}, report
    for category in categories:
        assert any(r.code == category for r in summary.results if r.category == category), (category, report)
    assert {r.command for r in summary.results} >= {"build", "inspect", "run-model", "run-build", "csim", "sim",
                                                    "report"}
    assert summary.seconds / 520 < 0.1, report  # most mutants fail at load


def test_results_do_not_depend_on_the_number_of_workers(tmp_path):
    one = fuzz_inputs(seed=7, count=40, workdir=tmp_path / "one", cli=main, jobs=1)
    two = fuzz_inputs(seed=7, count=40, workdir=tmp_path / "two", cli=main, jobs=2)
    assert [(r.index, r.mutator, r.command, r.code, r.outcome) for r in one.results] == \
        [(r.index, r.mutator, r.command, r.code, r.outcome) for r in two.results]


def test_cases_are_drawn_from_seed_and_index_alone(good):
    differ = 0
    for index in range(len(MUTATORS)):
        a, b = draw_case(SEEDS, 3, index, good), draw_case(SEEDS, 3, index, good)
        assert a == b
        c = draw_case(SEEDS, 4, index, good)
        differ += (c.files, c.argv) != (a.files, a.argv)
    assert differ >= len(MUTATORS) - 3  # a few mutators have few forms (empty_graph: two)


def test_truncate_keeps_a_prefix():
    mutant = mutate_onnx.truncate(np.random.default_rng(0), TINY)
    assert TINY.onnx_bytes.startswith(mutant.data) and len(mutant.data) < len(TINY.onnx_bytes)
    assert mutant.allowed == {MODEL_FILE}


def test_bit_flip_changes_one_to_eight_bits():
    for seed in range(20):
        mutant = mutate_onnx.bit_flip(np.random.default_rng(seed), TINY)
        a = np.frombuffer(TINY.onnx_bytes, np.uint8)
        b = np.frombuffer(mutant.data, np.uint8)
        assert 1 <= int(np.unpackbits(a ^ b).sum()) <= 8


def test_unsupported_op_is_valid_onnx_that_hlsgen_refuses_by_node(tmp_path):
    mutant = mutate_onnx.unsupported_op(np.random.default_rng(1), TINY)
    model = onnx.load_model_from_string(mutant.data)
    onnx.checker.check_model(model, full_check=True)
    with pytest.raises(UnsupportedOpsError) as exc:
        import_model(model)
    inserted = next(n for n in model.graph.node if n.name.startswith("fuzz_"))
    assert f"'{inserted.name}' ({inserted.op_type}" in str(exc.value)


@pytest.mark.parametrize("mutator", [mutate_onnx.drop_initializer, mutate_onnx.node_cycle, mutate_onnx.empty_graph,
                                     mutate_onnx.external_data])
def test_structural_mutants_are_no_loadable_model(tmp_path, mutator):
    for seed in range(5):
        path = tmp_path / f"m{seed}.onnx"
        path.write_bytes(mutator(np.random.default_rng(seed), TINY).data)
        with pytest.raises(ModelFileError):
            load_onnx_proto(path)


def test_target_types_puts_a_value_of_another_type():
    seed_data = yaml.safe_load(SEEDS.target_yaml)
    for seed in range(10):
        mutant = mutate_files.target_types(np.random.default_rng(seed), SEEDS.target_yaml)
        data = yaml.safe_load(mutant.data)
        path = mutant.what.split(" set to ")[0].split(".")
        old, new = seed_data, data
        for key in path:
            old, new = old[key], new[key]
        assert type(old) is not type(new) and TARGET in mutant.allowed


def test_npz_values_hold_nan_inf_or_one_constant():
    import io
    for seed in range(10):
        mutant = mutate_files.npz_values(np.random.default_rng(seed), TINY)
        with np.load(io.BytesIO(mutant.data)) as data:
            x = data["x"]
        assert (~np.isfinite(x)).any() or x.min() == x.max()


@pytest.mark.parametrize("code, stderr, outcome", [
    (7, "error: model.onnx: not a readable ONNX model (DecodeError); is the file truncated?\n", "ok"),
    (7, "warning: something\nerror: one line\n", "ok"),
    (70, "internal error: TypeError: boom (set HLSGEN_DEBUG=1 ...)\n", "crash"),
    (7, "Traceback (most recent call last):\n  File x\nerror: y\n", "crash"),
    (7, "error: first line\nsecond line of the same message\n", "multi-line"),
    (7, "error: one\nerror: two\n", "multi-line"),
    (0, "", "wrong-code"),  # a truncated file must not build
    (2, "error: a config error for a model file\n", "wrong-code"),
])
def test_the_judge_tells_each_outcome(tmp_path, good, code, stderr, outcome):
    from hlsgen.fuzz.inputs import _judge
    case = next(c for c in (draw_case(SEEDS, 1, i, good) for i in range(400))
                if c.mutator == "truncate" and not c.prebuilt)
    assert _judge(case, code, stderr, tmp_path, "")[0] == outcome


def test_the_judge_sees_what_a_failure_left_behind(tmp_path, good):
    from hlsgen.fuzz.inputs import _judge
    case = next(c for c in (draw_case(SEEDS, 1, i, good) for i in range(400))
                if c.argv[0] == "build" and not c.prebuilt and 0 not in c.mutant.allowed)
    error = "error: one line\n"
    (tmp_path / ".out.hlsgen-abc").mkdir()
    assert _judge(case, case.mutant.category, error, tmp_path, "")[0] == "leftover"
    (tmp_path / ".out.hlsgen-abc").rmdir()
    (tmp_path / "out").mkdir()
    assert _judge(case, case.mutant.category, error, tmp_path, "") == ("leftover", f"exit {case.mutant.category}: OUT written")
    (tmp_path / "out").rmdir()
    assert _judge(case, case.mutant.category, error, tmp_path, "")[0] == "ok"


def test_a_failure_keeps_a_reproducer_that_replays_it(tmp_path, good):
    from hlsgen.fuzz.inputs import CaseResult, _keep_reproducer
    case = next(c for c in (draw_case(SEEDS, 1, i, good) for i in range(400)) if c.argv[0] == "csim")
    result = CaseResult(case.index, case.mutator, case.command, case.mutant.category, 70, "crash", "exit 70: x", 0.1)
    _keep_reproducer(case, result, tmp_path / "r", Path(good))
    script = (tmp_path / "r" / "replay.sh").read_text()
    assert script.splitlines()[-1] == "hlsgen " + " ".join(a if a != good else "good" for a in case.argv)
    assert "hlsgen build good.onnx --calib good_calib.npz -o good -q" in script
    assert {p.name for p in (tmp_path / "r").iterdir()} >= {"model.onnx", "calib.npz", "good.onnx", "replay.sh"}
