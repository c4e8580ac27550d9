"""txncheck.spec."""
