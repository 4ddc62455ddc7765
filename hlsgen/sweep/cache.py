"""A task's name is its content: the model's and calibration's bytes, the target's description, the
normalized options and the hlsgen version. A finished task's row is a file SWEEP/rows/<key>.json written as
soon as it arrives, so a rerun (or a resumed, interrupted sweep) computes only keys without one."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

from .. import __version__
from ..hw.target import builtin_targets
from .grid import Config
from .task import Inputs

# rows of failures that may not happen again (a tool missing on one worker, a bug, a lost worker) are
# computed again on the next run; every other outcome is a property of the configuration
RETRIED_CATEGORIES = ("ToolError", "InternalError", "Lost")


def target_text(target: str) -> tuple[str, str | None]:
    """The target's description as the key sees it, and the YAML a worker needs (None: built in)."""
    builtin = builtin_targets()
    if target in builtin:
        return builtin[target].read_text(encoding="utf-8"), None
    text = Path(target).read_text(encoding="utf-8")  # load_target on the client has checked the file
    return text, text


def task_key(inputs: Inputs, config: Config, target_description: str) -> str:
    digest = hashlib.sha256()
    for blob in (inputs.model, inputs.calib or b"", target_description.encode()):
        digest.update(hashlib.sha256(blob).digest())
    options = {"name": inputs.name, "input_range": inputs.input_range, "max_accuracy_drop": inputs.max_accuracy_drop,
               "min_sqnr_db": inputs.min_sqnr_db, "config": {**asdict(config), "target": Path(config.target).stem},
               "hlsgen": __version__}
    digest.update(json.dumps(options, sort_keys=True).encode())
    return digest.hexdigest()[:20]


def cached_row(rows: Path, key: str) -> dict | None:
    """The row of a finished task, or None when it must run (none yet, unreadable, or a retried failure)."""
    try:
        row = json.loads((rows / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(row, dict) or row.get("key") != key or row.get("category") in RETRIED_CATEGORIES:
        return None
    return row


def persist(rows: Path, row: dict) -> None:
    """Whole or not at all: a sweep killed while writing leaves the previous file or none."""
    rows.mkdir(parents=True, exist_ok=True)
    tmp = rows / f".{row['key']}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(row, indent=1, default=str) + "\n")
    os.replace(tmp, rows / f"{row['key']}.json")
