"""Diagnosis: from the symptom to its cause to the key that fixes it (`pgq-top why`, the health line,
the why screen). Pure functions over a Snapshot history; see docs/diagnosis.md."""

from pgq_tui.diagnosis.chains import diagnose, exit_code, link
from pgq_tui.diagnosis.findings import Chain, Finding, Fix, Thresholds, one_line

__all__ = ["Chain", "Finding", "Fix", "Thresholds", "diagnose", "exit_code", "link", "one_line"]
