"""History: the last hour in memory (series.py), and recordings on disk (store.py) that `pgq-top
record` writes, the dashboard's `--record` appends to, and `pgq-top replay` / `snapshot --from` read.

Nothing here imports textual or talks to PostgreSQL: a recording is a file of Snapshots.
"""
