"""The exit codes: the exit code is always the verdict (README "Exit codes", `txncheck --help`)."""

EXIT_PASS, EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_SIGINT, EXIT_SIGTERM = 130, 143  # 128 + the signal, as shells report it
