"""txncheck.checker.symbolic"""
