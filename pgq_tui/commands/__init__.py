"""The bodies of the CLI commands (`snapshot`, `advise`, `init`, `worker`, ...): argparse in, text or
JSON out, an exit code back. The CLI layer: nothing below it (monitor, render, tui) imports these."""
