"""Tests of pipeline/query."""
