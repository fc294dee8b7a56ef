"""Golden cases: each input under tests/golden/<family>/ beside its expected elements."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.golden.cases import CASES, describe, expected_path


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden(case: Path) -> None:
    expected = json.loads(expected_path(case).read_text(encoding="utf-8"))
    assert describe(case) == expected


def test_every_family_has_cases() -> None:
    assert {p.parent.name for p in CASES} >= {"era", "numbered", "legacy", "faq", "web"}
