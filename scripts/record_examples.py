"""Re-record the console examples of README.md and docs/*.md by running them.

    python scripts/record_examples.py              # every recorded example
    python scripts/record_examples.py --only why-dead-tuples --only check-critical
    python scripts/record_examples.py --check      # change nothing; exit 1 listing what differs
    python scripts/record_examples.py --force      # rewrite even the examples that still match

Starts a private embedded PostgreSQL with the test suite's settings, seeds one database per scenario
(tests/docs_scenarios.py), runs each example marked `<!-- recorded: NAME scenario=S -->` with
`pgq-top` from this checkout, and writes its output into the block in place. An example whose
output still matches after normalising times, pids and sizes (tests/docs_examples.py) is left as it
is, so a re-record changes only what the code now prints differently. tests/test_docs_examples.py
fails on any example this script would change.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import docs_examples as docs  # noqa: E402

from pgq_tui.demo.embedded import FAST_UNSAFE_SETTINGS, EmbeddedPostgres  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="just this example")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if any differs")
    parser.add_argument("--force", action="store_true", help="rewrite the examples that still match too")
    args = parser.parse_args(argv)
    found = docs.examples()
    unknown = set(args.only) - {e.name for e in found}
    if unknown:
        print(f"record_examples: no recorded example named {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    chosen = [e for e in found if not args.only or e.name in args.only]
    started = time.monotonic()
    settings = {**FAST_UNSAFE_SETTINGS, "max_prepared_transactions": "10", "wal_level": "logical"}
    server = EmbeddedPostgres(settings=settings)
    stage = docs.Stage(server.start())
    changed = []
    try:
        for example in chosen:
            t = time.monotonic()
            today = stage.run(example)
            different = docs.diff(example, example.text(), today)
            if different:
                changed.append(example)
                print(different, file=sys.stderr)
            if not args.check and (different or args.force):
                docs.rewrite(example, today)
            state = "differs" if different else "matches"
            print(f"{example.name:28} {example.where:32} {state}  {time.monotonic() - t:5.1f} s")
    finally:
        stage.close()
        server.stop()
    verb = "differ" if args.check else "rewritten"
    print(f"{len(chosen)} examples, {len(changed)} {verb}, {time.monotonic() - started:.1f} s")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
