"""Tests of pipeline/ingest."""
