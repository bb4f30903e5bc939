"""The embedded demo: a private PostgreSQL, a load generator, a worker pool and chaos controls."""

from pgq_tui.demo.controller import DemoController, DemoStatus
from pgq_tui.demo.session import DemoSession

__all__ = ["DemoController", "DemoSession", "DemoStatus"]
