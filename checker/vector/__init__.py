"""txncheck.checker.vector"""
