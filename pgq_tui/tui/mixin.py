"""The base of PgqTopApp's key mixins (`Fixes`, `DemoKeys`): what they use from the App they are
mixed into, declared once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class AppMixin:
    """Annotations only: the App provides these attributes and methods."""

    focused: Any
    panel: Callable[[str], Any]
    notify: Callable[..., Any]
    push_screen: Callable[..., Any]
    post_message: Callable[[Any], Any]
    call_from_thread: Callable[..., Any]
    _tick: Callable[..., None]
