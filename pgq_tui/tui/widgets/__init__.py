"""Panels and status lines; each renders from a Snapshot."""
