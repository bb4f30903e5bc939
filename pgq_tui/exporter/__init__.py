"""`pgq-top exporter`: Prometheus metrics from the monitor's Snapshot (see README, "Prometheus")."""
