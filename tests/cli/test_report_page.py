"""OUT/report.html opens in a real headless browser (Debian's chromium) and shows its plots across the page's
width; what it tells a hardware engineer (times at the clock, absolute resources, synthesis, the build's inputs)."""
import hashlib
import json
import os
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest

from hlsgen.cli import main
from hlsgen.errors import PathError
from hlsgen.report_page import rewrite_report
from tests.cli.test_build import CALIB, MODEL
from tests.cli.test_errors import run_cli
from tests.hw.test_clock import SYNTH


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium package")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium); CI installs it")
    return path


def headless(*args: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    return subprocess.run([chromium(), *flags, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("r") / "digits"
    assert main(["build", MODEL, "--calib", CALIB, "-o", str(out), "-q"]) == 0
    return out


def test_report_page_renders_its_plots_in_a_browser(built, tmp_path):
    page = built / "report.html"
    dom = headless(f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    assert "CONSOLE" not in dom.stderr and "Failed to load" not in dom.stderr  # no page errors, nothing missing
    html = dom.stdout
    assert "<title>hlsgen report: digits on systolic16x16</title>" in html
    charts = re.findall(r'<svg class="chart" role="img" aria-label="([^"]+)"', html)
    assert {"Cycles per layer", "PE utilization per layer", "Bit widths",
            "Resources against the device budget"} <= set(charts)
    assert html.count("<rect") > 20  # bars were drawn
    assert '<svg class="graph"' in html
    assert all(name in html for name in ("conv1", "conv2", "fc1", "fc2"))
    for section in ('id="verification"', 'id="quality"', 'id="layers"', 'id="designs"'):
        assert section in html
    # every part of the build names its design: the C++ and the RTL are the model's one 16x16 array
    designs = html[html.index('id="designs"'):html.index("</table>", html.index('id="designs"'))]
    assert "HLS C++" in designs and "Verilog RTL" in designs and designs.count("<td>256</td>") == 2
    assert "not run" in html  # this build ran no simulation, and the page says so
    shot = tmp_path / "report.png"
    done = headless(f"--user-data-dir={tmp_path / 'profile2'}", "--window-size=1300,2400",
                    f"--screenshot={shot}", page.as_uri())
    assert done.returncode == 0 and shot.stat().st_size > 20_000  # a rendered page, not a blank one


def test_report_command_regenerates_and_summarizes(built, capsys):
    (built / "report.html").unlink()
    code, out, _ = run_cli(capsys, "report", str(built))
    assert code == 0
    assert "digits.onnx for systolic16x16 at --bits 8" in out and "modelled cycles" in out
    assert f"{_cycles(built) / 200:.2f} us, {200e6 / _cycles(built):,.0f} images/s estimated at target clock 200 MHz" in out
    assert (built / "report.html").is_file()


def test_report_of_a_folder_written_before_the_clock_and_the_inputs_record(built, tmp_path, capsys):
    """An older build folder (no total.clock, no input hashes or date, no config.yaml) still reports, at the
    target's clock."""
    out = tmp_path / "older"
    shutil.copytree(built, out)
    build = json.loads((out / "build.json").read_text())
    for key in ("model_sha256", "calib_sha256", "date", "date_source"):
        del build[key]
    (out / "build.json").write_text(json.dumps(build))
    report = json.loads((out / "report.json").read_text())
    for key in ("clock", "images_per_s"):
        del report["total"][key]
    (out / "report.json").write_text(json.dumps(report))
    (out / "config.yaml").unlink()
    code, printed, _ = run_cli(capsys, "report", str(out))
    assert code == 0 and f"{200e6 / _cycles(built):,.0f} images/s estimated at target clock 200 MHz" in printed
    html = (out / "report.html").read_text()
    rows = dict(row for row in _table(html, "build"))
    assert rows["model"] == "digits.onnx" and "date" not in rows and "dated" not in html
    assert rows["calibration"] == "calibration set calib.npz, 256 samples"


def _cycles(build) -> int:
    """The performance model's cycles per inference of a build folder."""
    return json.loads((build / "report.json").read_text())["total"]["cycles"]


def test_report_on_a_folder_that_is_not_a_build(tmp_path, capsys):
    code, _, err = run_cli(capsys, "report", str(tmp_path))
    assert code == PathError.exit_code and "not an hlsgen build folder" in err


def _table(html: str, table_id: str) -> list[list[str]]:
    """The cells of a table of the page, row by row, as text."""
    body = html[html.index(f'id="{table_id}"'):]
    body = body[:body.index("</table>")]
    return [[unescape(re.sub("<[^>]+>", "", cell)).strip() for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_report_page_states_times_at_the_target_clock_resources_and_inputs(built):
    html = (built / "report.html").read_text()
    report = json.loads((built / "report.json").read_text())
    total = report["total"]
    assert total["clock"] == {"mhz": 200.0, "source": "target clock_mhz"}
    cards = re.findall(r'<div class="name">(.*?)</div><div class="value">(.*?)</div><div class="note">(.*?)</div>',
                       html)
    figures = {name: (unescape(value), unescape(note)) for name, value, note in cards}
    assert figures["latency"] == (f"{total['latency_us']:,.2f} µs", "per inference, estimated at target clock 200 MHz")
    assert figures["throughput"][0] == f"{total['images_per_s']:,.0f} images/s" == f"{200e6 / total['cycles']:,.0f} images/s"
    assert figures["verification"] == ("not verified", "no simulation ran")
    # absolute counts next to the device's (the xczu3eg of systolic16x16), not only shares
    resources = _table(html, "resources")
    assert resources[0] == ["resource", "estimated (model)", "% of device", "device total (xczu3eg-sbva484-1-e)"]
    assert resources[1] == ["DSP", f"{total['resources']['dsp']:,}", f"{total['resources']['dsp'] / 360:.1%}", "360"]
    assert [row[0] for row in resources[1:]] == ["DSP", "BRAM (18 Kib blocks)", "LUT", "FF"]
    assert resources[4][-1] == "141,120" and 'id="timing"' not in html  # no synthesis ran
    # the per-layer table ends in the totals of one inference
    layers = _table(html, "layers")
    assert layers[-1][0] == "total per inference (layers + 266 I/O cycles)"
    assert layers[-1][6] == f"{total['macs']:,}" == "365,184" and layers[-1][8] == f"{total['cycles']:,}"
    assert len(layers) == 1 + 4 + 1 and "RTL cycles" not in layers[0]
    build = dict(row for row in _table(html, "build"))
    digest = hashlib.sha256(Path(MODEL).read_bytes()).hexdigest()
    assert build["model"] == f"digits.onnx (sha256 {digest[:12]}…)"
    assert build["calibration"].startswith("calib.npz (sha256 ") and build["verify"] == "none"
    assert build["bits"] == "8" and build["program"].startswith("rom")
    assert build["HLS design"] == "overlay, chosen by --hls-design auto"
    assert build["date"].endswith("UTC (the newest input file's time: builds are byte-identical for the same "
                                  "inputs; SOURCE_DATE_EPOCH sets it)")


def test_report_page_with_synthesis_and_an_rtl_simulation(built, tmp_path):
    """report.json as the synthesis piece leaves it (issue 15's contract) and after `hlsgen sim`: the times move
    to the measured Fmax, and the page sets measured beside estimated."""
    out = tmp_path / "synthesized"
    shutil.copytree(built, out)
    report = json.loads((out / "report.json").read_text())
    estimated = report["total"]["resources"]
    report["synth"] = SYNTH | {"estimated": {"lut": estimated["lut"], "ff": estimated["ff"], "dsp": estimated["dsp"],
                                             "bram": estimated["bram_18k"]}}
    layers = {layer["name"]: {"cycles": layer["cycles"], "utilization": layer["utilization"]}
              for layer in report["layers"]}
    cycles = report["total"]["cycles"]
    report["rtl_simulation"] = {"without_backpressure": {
        "images": 16, "output_integers": 160, "bit_exact": True, "cycles": cycles + 2, "cycles_model": cycles,
        "utilization": 0.3577, "input_cycles": 256, "layers": layers}}
    written = rewrite_report(out, report)
    assert json.loads((out / "report.json").read_text()) == written
    total = written["total"]
    assert total["clock"] == {"mhz": 131.2, "source": "measured Fmax (nextpnr after routing)"}
    assert total["latency_us"] == round(cycles / 131.2, 4) and total["images_per_s"] == round(131.2e6 / cycles, 4)
    html = (out / "report.html").read_text()
    assert "times at measured Fmax 131.2 MHz (nextpnr after routing)" in html
    resources = _table(html, "resources")
    assert resources[0] == ["resource", "estimated (model)", "% of device",
                            "measured (yosys synth_ecp5 + nextpnr-ecp5)", "% of device", "measured / estimated",
                            "device total (LFE5U-85F-8CABGA381)"]
    dsp = resources[1]
    assert dsp[:2] == ["DSP", f"{estimated['dsp']:,}"] and dsp[3:5] == ["64", f"{64 / 156:.1%}"] and dsp[-1] == "156"
    timing = dict((row[0], row[1]) for row in _table(html, "timing"))
    assert timing["Fmax"] == "131.2 MHz (nextpnr after routing)" and timing["timing"] == "met"
    assert timing["critical path"] == "u_array.pe_3_4.prod_q → u_array.pe_3_5.acc_q (7.62 ns)"
    assert timing["clock constraint"] == "125 MHz" and timing["bitstream"] == "synth/top.bit"
    performance = _table(html, "performance")
    assert performance[0] == ["measure", "modelled", "measured in RTL simulation (without backpressure)"]
    assert performance[1] == ["cycles per inference", f"{cycles:,}", f"{cycles + 2:,}"]
    layer_rows = _table(html, "layers")
    assert layer_rows[0][-2:] == ["RTL cycles", "PE utilization (RTL)"] and layer_rows[-1][-2] == f"{cycles + 2:,}"
    assert 'aria-label="Resources against the device budget"' in html and "measured (synthesis)" in html


MEASURE = """<script>
const width = document.documentElement.clientWidth;
const charts = [...document.querySelectorAll("svg.chart")].map(svg => {
  const box = svg.getBoundingClientRect();
  const reach = Math.max(...[...svg.querySelectorAll("rect")].map(r => r.getBoundingClientRect().right));
  return {label: svg.getAttribute("aria-label"), left: box.left, right: box.right, reach: reach};
});
const out = document.createElement("pre");
out.id = "measured";
out.textContent = JSON.stringify({width: width, charts: charts});
document.body.appendChild(out);
</script>"""


def test_charts_use_the_width_of_the_page_in_a_browser(built, tmp_path):
    """Laid out by chromium at 1300 px: every chart spans the page's column and its longest bar reaches past
    80% of the window (they filled its left third before)."""
    page = tmp_path / "measured.html"  # a copy with a measuring script: the report itself has none
    page.write_text((built / "report.html").read_text().replace("</body>", MEASURE + "</body>"))
    dom = headless(f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1300,2400", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.S)
    measured = json.loads(unescape(found.group(1)))
    width, charts = measured["width"], measured["charts"]
    assert width > 1200 and len(charts) >= 5
    for chart in charts:
        assert chart["right"] - chart["left"] > 0.9 * min(width, 1280) - 64, chart  # the content column
        assert chart["reach"] > 0.8 * width or chart["label"] != "Bit widths", chart  # all bars there are 8 b
    assert max(chart["reach"] for chart in charts) > 0.8 * width
