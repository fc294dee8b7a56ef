"""Tests of pipeline/corpus."""
