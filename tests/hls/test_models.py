"""The issue's models, C-simulated with g++ against the real Xilinx ap_types headers (from the hls4ml
wheel) and hlsgen's portable header: every output integer must equal the integer reference's."""
from __future__ import annotations

import re

import numpy as np
import pytest

from hlsgen.build_folder import load_build
from hlsgen.cli import main
from hlsgen.hls.csim import compile_csim, run_csim, vendor_headers
from hlsgen.hls.emit import EXPECTED_FILE, INPUT_FILE, write_test_data
from hlsgen.npz_io import read_npz
from tests.hls.conftest import EXAMPLE

pytestmark = pytest.mark.csim

MODELS = [("residual", "8"), ("residual", "auto"), ("mobilenet", "8"), ("mobilenet", "auto"),
          ("mnist8", "8"), ("mnist8", "auto"), ("autoencoder", "8")]


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("bits", ["8", "auto"])
def test_digits_is_bit_exact_on_all_360_test_images(models, capsys, bits):
    code, out, err = run_cli(capsys, "csim", str(models.get("digits", bits)), "--inputs", str(EXAMPLE / "test.npz"))
    assert code == 0, err
    assert "bit-exact: 3,600 output integers of 360 sample(s)" in out
    assert ("Xilinx ap_types headers" in out) == (vendor_headers() is not None)


def test_digits_with_the_portable_header_and_the_stored_vectors(models, capsys):
    folder = models.get("digits", "8")
    code, out, err = run_cli(capsys, "csim", str(folder), "--portable")
    assert code == 0, err
    assert "bit-exact: 160 output integers of 16 sample(s)" in out and "portable" in out


@pytest.fixture(scope="module")
def compiled(models, tmp_path_factory):
    """(build folder, binary, headers) per model, compiled once against the vendor headers if present."""
    cache = {}

    def get(name: str, bits: str):
        if (name, bits) not in cache:
            folder = models.get(name, bits)
            binary = tmp_path_factory.mktemp("csim") / "csim"
            headers, seconds = compile_csim(folder / "hls", binary)
            cache[name, bits] = (folder, binary, headers, seconds)
        return cache[name, bits]

    return get


@pytest.mark.parametrize("name, bits", MODELS)
def test_stored_test_vectors_are_bit_exact(compiled, name, bits):
    folder, binary, headers, seconds = compiled(name, bits)
    hls = folder / "hls"
    result = run_csim(binary, hls / INPUT_FILE, hls / EXPECTED_FILE, headers, seconds)
    stored = np.load(folder / "verify" / "int_outputs.npz")
    assert result.mismatches == 0, result.log
    assert result.compared == sum(v.size for v in stored.values()) > 0


@pytest.mark.parametrize("name, bits", MODELS)
def test_further_inputs_are_bit_exact(compiled, models, tmp_path, name, bits):
    """mnist-8: its three test sets; the generated networks: 32 held-out image-like (or log-mel) inputs."""
    folder, binary, headers, seconds = compiled(name, bits)
    quantized = load_build(folder)
    int_inputs = quantized.quantize_inputs(read_npz(models.extra(name)))
    write_test_data(tmp_path, quantized.graph, int_inputs, quantized.run_int(int_inputs))
    result = run_csim(binary, tmp_path / INPUT_FILE, tmp_path / EXPECTED_FILE, headers, seconds)
    assert result.mismatches == 0, result.log
    assert result.samples == (3 if name == "mnist8" else 32)


@pytest.mark.parametrize("name", ["residual", "mobilenet"])
def test_portable_header_agrees_on_the_generated_networks(models, name, tmp_path):
    folder = models.get(name, "8")
    headers, seconds = compile_csim(folder / "hls", tmp_path / "csim", portable=True)
    result = run_csim(tmp_path / "csim", folder / "hls" / INPUT_FILE, folder / "hls" / EXPECTED_FILE, headers, seconds)
    assert headers.kind == "portable" and result.mismatches == 0 and result.compared == 160


def test_the_build_folder_holds_the_whole_hand_off(models):
    hls = models.get("digits", "8") / "hls"
    for name in ("digits.cpp", "digits.h", "digits_tb.cpp", "hlsgen_ops.h", "run_hls.tcl", "README.md",
                 "tb_input.dat", "tb_expected.dat", "portable/hlsgen_ap_int.h", "portable/hlsgen_stream.h",
                 "hlsgen_axis.h", "overlay_config.h", "overlay_units.h", "digits_program.h"):
        assert (hls / name).is_file(), name
    tcl = (hls / "run_hls.tcl").read_text()
    for command in ("open_project", "set_top digits", "set_part xczu3eg-sbva484-1-e", "create_clock -period 5.000",
                    "csim_design", "csynth_design", "cosim_design", "export_design"):
        assert command in tcl, command
    top = (hls / "digits.cpp").read_text()
    assert "#pragma HLS INTERFACE mode=axis port=image" in top and "mode=s_axilite port=return" in top
    leftovers = re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}|TODO|FIXME|XXX|PLACEHOLDER")
    for path in hls.rglob("*"):
        if path.is_file() and path.suffix != ".dat":
            assert not leftovers.search(path.read_text()), path
