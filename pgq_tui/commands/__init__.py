"""CLI commands that print one result and exit (`snapshot`, `advise`): argparse in, text or JSON
out. The CLI layer: nothing below it (monitor, render, tui) imports these."""
