"""What a build was made from and when, for build.json and the report: the input files' SHA-256 and a date.

Builds are byte-identical for the same inputs, so the date cannot be the wall clock: it is
SOURCE_DATE_EPOCH when set (the reproducible-builds convention), else the newest modification time of the
input files, which changes exactly when what the build is made of changes."""
from __future__ import annotations

import hashlib
import os
from datetime import datetime, timezone
from pathlib import Path

from .errors import UsageError

FROM_ENVIRONMENT = "SOURCE_DATE_EPOCH"
FROM_INPUTS = "newest input file"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def provenance(model: Path, calib: Path | None) -> dict:
    """build.json's record of the inputs: `model_sha256`, `calib_sha256` (None without --calib), `date`
    (ISO 8601, UTC, to the second) and `date_source`."""
    files = [Path(model)] + ([Path(calib)] if calib is not None else [])
    epoch = os.environ.get(FROM_ENVIRONMENT)
    if epoch is not None:
        if not epoch.strip().isdigit():
            raise UsageError(f"{FROM_ENVIRONMENT}={epoch!r}: give whole seconds since 1970-01-01 UTC, or unset it")
        seconds, source = int(epoch), FROM_ENVIRONMENT
    else:
        seconds, source = int(max(f.stat().st_mtime for f in files)), FROM_INPUTS
    date = datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"model_sha256": sha256(files[0]), "calib_sha256": sha256(files[1]) if calib is not None else None,
            "date": date, "date_source": source}
