"""hlsgen.provenance: build.json's record of the inputs (SHA-256) and a date that keeps builds byte-identical."""
import hashlib
import os

import pytest

from hlsgen.errors import UsageError
from hlsgen.provenance import FROM_ENVIRONMENT, FROM_INPUTS, provenance


@pytest.fixture
def inputs(tmp_path):
    model, calib = tmp_path / "m.onnx", tmp_path / "c.npz"
    model.write_bytes(b"model bytes")
    calib.write_bytes(b"calibration bytes")
    os.utime(model, (0, 1_700_000_000))
    os.utime(calib, (0, 1_700_000_100))
    return model, calib


def test_the_date_is_the_newest_input_files_time_without_source_date_epoch(inputs, monkeypatch):
    monkeypatch.delenv(FROM_ENVIRONMENT, raising=False)
    model, calib = inputs
    record = provenance(model, calib)
    assert record == {"model_sha256": hashlib.sha256(b"model bytes").hexdigest(),
                      "calib_sha256": hashlib.sha256(b"calibration bytes").hexdigest(),
                      "date": "2023-11-14T22:15:00Z", "date_source": FROM_INPUTS}
    assert provenance(model, None) == record | {"calib_sha256": None, "date": "2023-11-14T22:13:20Z"}
    assert provenance(model, calib) == record  # nothing of the wall clock: the same inputs, the same record


def test_source_date_epoch_sets_the_date(inputs, monkeypatch):
    monkeypatch.setenv(FROM_ENVIRONMENT, "1000000000")
    record = provenance(*inputs)
    assert record["date"] == "2001-09-09T01:46:40Z" and record["date_source"] == "SOURCE_DATE_EPOCH"


def test_a_source_date_epoch_that_is_no_number_is_a_usage_error(inputs, monkeypatch):
    monkeypatch.setenv(FROM_ENVIRONMENT, "yesterday")
    with pytest.raises(UsageError, match="SOURCE_DATE_EPOCH='yesterday': give whole seconds"):
        provenance(*inputs)
