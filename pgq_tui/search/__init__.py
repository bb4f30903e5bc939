"""Search jobs with one small query language (docs/search.md), shared by `pgq-top jobs --where`, the
bulk actions (`retry --where`) and the dashboard: `query` parses it (pure), `compile` turns it into
SQL on a kind's declared columns (pure), `run` runs it as a bounded scan on its own connection."""
