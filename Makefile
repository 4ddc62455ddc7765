# Quick start: `make demo` (install + run on the bundled example), `make test` (install + test suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
EXAMPLE := examples/digits

.PHONY: demo test test-slow install install-test train-example test-data bench fuzz fuzz-long clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q .

install-test: $(BIN)/python
	$(BIN)/pip install -q ".[test]"

demo: install
	$(BIN)/hlsgen inspect $(EXAMPLE)/digits.onnx
	$(BIN)/hlsgen run $(EXAMPLE)/digits.onnx --inputs $(EXAMPLE)/test.npz -o out/digits_float_logits.npz
	$(BIN)/hlsgen build $(EXAMPLE)/digits.onnx --target systolic16x16 --calib $(EXAMPLE)/calib.npz \
		--verify csim,rtl -o out/digits_systolic16x16
	$(BIN)/hlsgen run out/digits_systolic16x16 --inputs $(EXAMPLE)/test.npz -o out/digits_int_logits.npz
	$(BIN)/hlsgen csim out/digits_systolic16x16 --inputs $(EXAMPLE)/test.npz
	$(BIN)/hlsgen report out/digits_systolic16x16

# the suite runs on JOBS processes (pytest-xdist); JOBS=0 runs it in this one
JOBS ?= 2
test: install-test
	$(BIN)/python -m pytest -q -n $(JOBS)

test-slow: install-test
	$(BIN)/python -m pytest -q -n $(JOBS) -m slow

bench: install-test
	$(BIN)/python bench/mapping.py
	$(BIN)/python bench/model_stats.py
	$(BIN)/python bench/rtl.py
	$(BIN)/python bench/calibration_memory.py
	$(BIN)/python bench/one_machine.py
	$(BIN)/python bench/architectures.py
	$(BIN)/python bench/synth.py
	$(BIN)/python bench/sweep.py
	$(BIN)/python bench/whole_models.py --rtl
	$(BIN)/python bench/runtime.py
	$(BIN)/python bench/real_models.py

# differential fuzzing (README, "Fuzzing"): random models, float vs onnxruntime, integer reference = C-sim = RTL
# seeds 4750..4789 make every layer kind the generator inserts; 8273 a nearest Resize to a fractional size
fuzz: install-test
	$(BIN)/hlsgen fuzz --seed 4750 --count 40 --rtl-every 10 --jobs 2 --portable --mutants 200
	$(BIN)/hlsgen fuzz --seed 8273 --count 1 --rtl-every 1

fuzz-long: install-test
	$(BIN)/hlsgen fuzz --profile long --seed 100000 --count 2000 --rtl-every 20 --jobs 2 --timeout 1200 --portable --mutants 5000

train-example: $(BIN)/python
	$(BIN)/pip install -q ".[train]"
	$(BIN)/python $(EXAMPLE)/train.py

# regenerate tests/data/exporters/ with PyTorch's own ONNX exporter, in a venv of its own (CI never needs torch)
DATA_VENV ?= .venv-data
$(DATA_VENV)/bin/python:
	$(PYTHON) -m venv $(DATA_VENV)
	$(DATA_VENV)/bin/pip install -q torch==2.13.0 onnx==1.23.2 onnxscript numpy onnxruntime

test-data: $(DATA_VENV)/bin/python
	$(DATA_VENV)/bin/python tests/data/exporters/make_test_data.py

clean:
	rm -rf $(VENV) out build dist .pytest_cache
