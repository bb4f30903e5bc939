"""Tests of the framework dialects against the frameworks' own clients and workers (see harness.py)."""
