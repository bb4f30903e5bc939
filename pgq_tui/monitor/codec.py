"""Snapshot dataclasses back from their JSON shape (`Snapshot.to_dict()`), driven by type hints,
so a new field needs no code here."""

from __future__ import annotations

import dataclasses
import types
import typing
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from pgq_tui.timestamps import parse_timestamp

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if hint is datetime:
        return parse_timestamp(value)
    if hint is float:
        return float(value)
    if dataclasses.is_dataclass(hint):
        return from_dict(hint, value)  # type: ignore[arg-type]
    if origin is tuple:
        item = args[0] if args else Any
        return tuple(_convert(item, v) for v in value)
    if origin is dict:
        return {k: _convert(args[1], v) for k, v in value.items()}
    return value


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Build dataclass `cls` from a dict; unknown keys are ignored (newer producer, older reader)."""
    hints = _hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: _convert(hints[k], v) for k, v in data.items() if k in known})
