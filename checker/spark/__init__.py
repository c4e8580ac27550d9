"""txncheck.checker.spark

Nothing here imports pyspark or pyarrow: `require_spark()` is safe to call first, before them."""
from .available import require_spark

__all__ = ["require_spark"]
