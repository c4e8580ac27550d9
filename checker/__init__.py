"""txncheck.checker."""
