"""Tests of pipeline/lineage."""
