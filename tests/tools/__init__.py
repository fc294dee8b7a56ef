"""Tests of pipeline/tools."""
