"""Tests of the core modules: numbers.py, changes.py (and text.py through them)."""
