"""`pgq-top check`: one-shot verdicts for monitoring systems (exit codes, Nagios-style plugin output)."""
