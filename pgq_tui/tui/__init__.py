"""The Textual dashboard: renders Snapshots and dispatches actions. Nothing here writes SQL."""
