"""OUT/report.html opens in a real headless browser (Debian's chromium) and shows its plots."""
import os
import re
import shutil
import subprocess

import pytest

from hlsgen.cli import main
from hlsgen.errors import PathError
from tests.cli.test_build import CALIB, MODEL
from tests.cli.test_errors import run_cli


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
    assert (built / "report.html").is_file()


def test_report_on_a_folder_that_is_not_a_build(tmp_path, capsys):
    code, _, err = run_cli(capsys, "report", str(tmp_path))
    assert code == PathError.exit_code and "not an hlsgen build folder" in err
