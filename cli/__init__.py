"""The txncheck command line. Only this package exits the process."""
import os

# txncheck does no linear algebra, but numpy and scipy load OpenBLAS, which starts a thread per core; under
# --max-memory a thread's stack may not fit, and OpenBLAS then raises SIGINT, which would read as a Ctrl-C
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
