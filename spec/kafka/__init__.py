"""txncheck.spec.kafka"""
