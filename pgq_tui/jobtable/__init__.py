"""pgq-top's own jobs table: its DDL (`schema`) and every statement run on it (`statements`).

The one place both sides of the table meet: the queue library (`pgq_tui.queue`: producers, workers,
the reaper) and the pgq dialect (`pgq_tui.dialects.pgq`: what the dashboard reads and the operator's
actions) import their names, statuses, NOTIFY channel and shared statements from here. It sits at the
bottom with `pgq_tui.db`: it imports nothing else from pgq_tui (an import-linter contract holds it).
"""
