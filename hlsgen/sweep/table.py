"""The rows of a sweep as files: SWEEP/results.csv (always), results.parquet (where pyarrow is installed:
`pip install hlsgen[parquet]`), and a JUnit XML for CI systems (one test case per model and configuration)."""
from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from pathlib import Path

COLUMNS = ("model", "target", "bits", "batch", "verify", "synth", "status", "exit_code", "category", "error",
           "sqnr_db", "float_accuracy", "int_accuracy", "cycles", "cycles_per_image", "latency_us", "images_per_s",
           "clock_mhz", "utilization", "dram_bytes", "weight_bits", "dsp", "lut", "ff", "bram_18k", "fits", "csim",
           "rtl", "fmax_mhz", "synth_lut", "synth_ff", "synth_dsp", "synth_bram", "seconds", "worker", "report",
           "key", "hlsgen")


def write_csv(rows: list[dict], path: Path) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in COLUMNS})
    path.write_text(text.getvalue())


def write_parquet(rows: list[dict], path: Path) -> bool:
    """results.parquet with the CSV's columns, each typed by its values; False without pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    table = pa.table({column: pa.array([row.get(column) for row in rows]) for column in COLUMNS})
    pq.write_table(table, path)
    return True


def write_junit(rows: list[dict], path: Path, suite: str) -> None:
    """One <testcase> per row (classname: the model, name: its configuration); a failed row is a
    <failure> whose type is its exit category."""
    failures = [r for r in rows if r["status"] != "ok"]
    root = ET.Element("testsuites", name=suite, tests=str(len(rows)), failures=str(len(failures)))
    element = ET.SubElement(root, "testsuite", name=suite, tests=str(len(rows)), failures=str(len(failures)),
                            errors="0", skipped="0", time=f"{sum(r.get('seconds') or 0 for r in rows):.2f}")
    for row in rows:
        case = ET.SubElement(element, "testcase", classname=Path(row["model"]).stem, name=case_name(row),
                             time=f"{row.get('seconds') or 0:.2f}")
        if row["status"] != "ok":
            failure = ET.SubElement(case, "failure", type=row["category"], message=row["error"])
            failure.text = f"exit {row['exit_code']} ({row['category']}): {row['error']}"
    ET.indent(root)
    path.write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n")


def case_name(row: dict) -> str:
    parts = [row["target"], f"bits {row['bits']}"]
    if row["batch"] != 1:
        parts.append(f"batch {row['batch']}")
    parts.append(f"verify {row['verify']}")
    if row["synth"]:
        parts.append("synth")
    return ", ".join(parts)
