"""txncheck.checker.spark"""
