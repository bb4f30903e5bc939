"""Guarded writes an operator triggers from a front end: plan (read, explain), then execute.

No front-end imports here: the dashboard renders Plan and Outcome, and never writes SQL itself.
"""

from pgq_tui.actions.actions import Actions
from pgq_tui.actions.model import ACTIONS, Outcome, Plan

__all__ = ["ACTIONS", "Actions", "Outcome", "Plan"]
