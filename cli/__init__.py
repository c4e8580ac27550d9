"""The txncheck command line. Only this package exits the process."""
