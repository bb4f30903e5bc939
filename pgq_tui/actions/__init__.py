"""Guarded writes an operator triggers from a front end: plan (read, explain), then execute, on any
detected queue through its dialect (see actions.py).

No front-end imports here: the dashboard and the CLI render Plan and ActionOutcome, and never write SQL.
"""

from pgq_tui.actions.actions import Actions
from pgq_tui.actions.model import ACTIONS, ActionOutcome, Plan

__all__ = ["ACTIONS", "ActionOutcome", "Actions", "Plan"]
