"""Tests of pipeline/site."""
