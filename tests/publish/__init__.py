"""Tests of pipeline/publish."""
