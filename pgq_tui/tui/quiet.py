"""Repaint only what changed: over a slow SSH link every byte the screen sends counts.

Textual repaints a widget whenever it is updated or its border title is set, even to what it already
shows, and `Static.update()` also re-runs the layout of the whole screen by default, which repaints
all of it. So widgets that update on every poll go through these helpers: nothing happens when the
content is what is already on screen, and fixed-size widgets skip the layout pass.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static


def signature(value: Any) -> Any:
    """What a renderable looks like, comparable: rich's Text equality ignores the base style.

    >>> signature(Text("a", style="red")) == signature(Text("a", style="green"))
    False
    >>> signature(Text("a", style="red")) == signature(Text("a", style="red"))
    True
    """
    if isinstance(value, Text):
        spans = tuple((s.start, s.end, str(s.style)) for s in value.spans)
        return ("text", value.plain, str(value.style), spans, value.justify, value.no_wrap, value.end)
    if isinstance(value, str | int | float | type(None)):
        return value
    if isinstance(value, tuple | list):
        return tuple(signature(v) for v in value)
    return ("id", id(value))  # anything else: assume it changed


def _last(widget: Widget) -> dict[str, Any]:
    store: dict[str, Any] | None = getattr(widget, "_pgq_quiet", None)
    if store is None:
        store = {}
        widget._pgq_quiet = store  # type: ignore[attr-defined]
    return store


def changed(widget: Widget, name: str, value: Any) -> bool:
    """True (and remembered) when `value` differs from what `name` last was on this widget."""
    store = _last(widget)
    key = signature(value)
    if name in store and store[name] == key:
        return False
    store[name] = key
    return True


def update_static(widget: Static, content: Any, *, layout: bool = False) -> None:
    """Static.update() only when the content changed; no layout pass unless the size may change."""
    if changed(widget, "content", content):
        widget.update(content, layout=layout)


def set_border(widget: Widget, *, title: Any = None, subtitle: Any = None) -> None:
    """Set the border title/subtitle (None: leave as is) only when they changed."""
    if title is not None and changed(widget, "border_title", title):
        widget.border_title = title
    if subtitle is not None and changed(widget, "border_subtitle", subtitle):
        widget.border_subtitle = subtitle


def forget(widget: Widget, name: str) -> None:
    """Make the next update of `name` go through (after something else redrew the widget)."""
    _last(widget).pop(name, None)
