"""Many databases at once: concurrent polls of named targets, and the fleet's rows (no textual here)."""
