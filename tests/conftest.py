import os
from pathlib import Path

# Before numpy loads (see hlsgen/__init__.py): single-threaded BLAS for the many small matrix products.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

# The Verilator harness's cache (hlsgen.runtime.harness) beside the benches' builds, not under ~/.cache.
SIM_BUILD = os.environ.get("HLSGEN_SIM_BUILD", str(Path(__file__).resolve().parents[1] / "sim_build"))
os.environ.setdefault("HLSGEN_CACHE", SIM_BUILD)
