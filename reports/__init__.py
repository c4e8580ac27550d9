"""txncheck.reports."""
