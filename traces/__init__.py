"""txncheck.traces."""
