"""Declared settings (dialects/kit.Setting): values the database does not record (a worker-side
timeout, pgmq's dead rule), declared by each dialect, set per target in a targets file, overridden by
the environment only where the target leaves them out. Dialects never read the environment."""

from __future__ import annotations

import ast
import doctest
from pathlib import Path

import pytest

from pgq_tui.detection import dialects
from pgq_tui.dialects import kit
from pgq_tui.dialects.kit import Setting, from_environment
from pgq_tui.dialects.registry import builtin, configured, settings
from pgq_tui.errors import PgqError
from pgq_tui.targets import parse_targets

DIALECTS = Path(__file__).parent.parent / "pgq_tui" / "dialects"
# every setting the built-in dialects declare: key -> (dialect kind, default, environment override)
EXPECTED = {
    "oban_rescue_after": ("oban", 3600.0, "PGQ_TOP_OBAN_RESCUE_AFTER"),
    "river_rescue_after": ("river", 3600.0, "PGQ_TOP_RIVER_RESCUE_AFTER"),
    "procrastinate_stalled_after": ("procrastinate", 30.0, "PGQ_TOP_STALLED_AFTER"),
    "pgqueuer_heartbeat_timeout": ("pgqueuer", 30.0, "PGQ_TOP_STALLED_AFTER"),
    "solid_queue_alive_threshold": ("solid-queue", 300.0, "PGQ_TOP_SOLID_QUEUE_ALIVE_THRESHOLD"),
    "dead_reads": ("pgmq", 5, "PGQ_TOP_PGMQ_DEAD_READS"),
    "dbos_stuck_after": ("dbos", 0, "PGQ_TOP_DBOS_STUCK_AFTER"),  # 0: unset, pgq-top's own rule only
    "que_stuck_after": ("que", 3600.0, "PGQ_TOP_QUE_STUCK_AFTER"),
}


def _values(known: tuple[object, ...]) -> dict[str, object]:
    return {s.key: getattr(d, s.field) for d in known for s in getattr(d, "settings", ())}


@pytest.fixture(autouse=True)
def _no_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, _, env in EXPECTED.values():
        monkeypatch.delenv(env, raising=False)


def test_every_declared_setting_names_its_key_default_and_override() -> None:
    found = {s.key: s for s in settings(builtin())}
    assert set(found) == set(EXPECTED)
    for d in builtin():
        for s in getattr(d, "settings", ()):
            kind, default, env = EXPECTED[s.key]
            assert (d.kind, s.default, s.env) == (kind, default, env)
            assert s.doc and getattr(d, s.field) is None  # unset until the engine sets it


def test_parse_takes_positive_numbers_only() -> None:
    seconds = Setting("x", "x_s", 30.0, "X", "doc")
    assert [seconds.parse(v) for v in ("12", " 2.5 ", 7, 0, "-1", "", "soon", True)] == [
        12.0, 2.5, 7.0, None, None, None, None, None,
    ]  # fmt: skip
    whole = Setting("n", "n", 5, "N", "doc", integer=True)
    assert [whole.parse(v) for v in ("3", 4, "3.5", 2.5, "0")] == [3, 4, None, None, None]
    assert from_environment([seconds, whole], {"X": "9", "N": "many"}) == {"x": 9.0}


def test_configured_sets_only_the_dialects_that_declare_the_key() -> None:
    known = configured(builtin(), {"river_rescue_after": 1800.0, "oban_rescue_after": None})
    river = next(d for d in known if d.kind == "river")
    oban = next(d for d in known if d.kind == "oban")
    assert river.rescue_after_s == 1800.0  # type: ignore[attr-defined]
    assert oban.rescue_after_s is None  # type: ignore[attr-defined]  # None leaves a field as is
    assert next(d for d in known if d.kind == "pgq") is next(d for d in builtin() if d.kind == "pgq")


def test_target_key_then_environment_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(_values(dialects()).values()) == {None}  # nothing set: each dialect's default
    monkeypatch.setenv("PGQ_TOP_STALLED_AFTER", "7")
    monkeypatch.setenv("PGQ_TOP_RIVER_RESCUE_AFTER", "99")
    monkeypatch.setenv("PGQ_TOP_PGMQ_DEAD_READS", "4")
    values = _values(dialects(settings={"procrastinate_stalled_after": 2.5}))
    assert values["procrastinate_stalled_after"] == 2.5  # the target's key wins over the environment
    assert values["pgqueuer_heartbeat_timeout"] == 7.0  # the environment where the target is silent
    assert values["river_rescue_after"] == 99.0
    assert values["dead_reads"] == 4
    assert values["oban_rescue_after"] is None  # neither: Lifeline's default, in the model
    assert _values(dialects(dead_reads=3))["dead_reads"] == 3  # --dead-reads over the environment
    monkeypatch.setenv("PGQ_TOP_RIVER_RESCUE_AFTER", "soon")  # not a number: ignored, as before
    assert _values(dialects())["river_rescue_after"] is None


def test_targets_file_sets_them_per_target() -> None:
    doc = {
        "targets": {
            "a": {"dsn": "dbname=a", "river_rescue_after": 1800, "solid_queue_alive_threshold": 60.5},
            "b": {"dsn": "dbname=b"},
        }
    }
    a, b = parse_targets(doc, "t.toml")
    assert dict(a.settings) == {"river_rescue_after": 1800.0, "solid_queue_alive_threshold": 60.5}
    assert b.settings == ()
    with pytest.raises(PgqError, match=r"targets.a: oban_rescue_after must be a number of seconds > 0"):
        parse_targets({"targets": {"a": {"dsn": "dbname=a", "oban_rescue_after": "1h"}}}, "t.toml")
    with pytest.raises(PgqError, match=r"unknown key 'rescue_after'.*river_rescue_after"):
        parse_targets({"targets": {"a": {"dsn": "dbname=a", "rescue_after": 5}}}, "t.toml")


def test_no_dialect_reads_the_environment() -> None:
    for path in sorted(DIALECTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not imported & {"os", "environ", "getenv"}, path


def test_kit_doctests() -> None:
    result = doctest.testmod(kit)
    assert result.attempted >= 5 and result.failed == 0
