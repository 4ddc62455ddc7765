import os

# Before numpy loads (see hlsgen/__init__.py): single-threaded BLAS for the many small matrix products.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
