"""Lineages of generated releases, against what the generator did.

``pipeline.tools.benchgen`` makes each release from the one before it and records
every rule's new number (``Release.renumbered``), the rules it removed and the
keyword section it added or retired: each step's answer key, by construction,
never by running the pipeline. The steps here are the ones where a rule had
been paired or merged across keywords (found by ``make bench``'s same check on
the 38 releases of 1x), each ingested by the real job with the release it is
made from.

The generated releases are newer than the history the package ships, so the
history lends each run its 72 releases (``tests/lineage/test_history.py``): the
71 steps between them are the bundled run's (the same releases, the same step
keys), read from a copy of its cache (``bundled_cache``); every step to or
between generated releases is aligned anew.
"""

from __future__ import annotations

import shutil
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from pipeline.job import run_job
from pipeline.query.dataset import Published
from pipeline.run import Settings
from pipeline.tools import benchgen
from pipeline.tools.lineage_report import Verdict, generated_steps
from tests.conftest import RAW

pytestmark = pytest.mark.slow  # a job run per generated step: make check runs them, make test does not

BASE = RAW / "cr-2026-08-07.txt"
AFTER = date(2026, 8, 7)
# Generated releases (0-based, seed 14) and the rule each step had got wrong before:
STEPS = {
    17: "702.32a, a retired keyword's rule, merged into the next keyword's 702.31a",
    18: "702.18a, a retired keyword's rule, merged into the next keyword's 702.19a",
    21: "the removed targeting rule 115.1a continued as the new keyword rule 702.192c",
    24: "702.166b, a retired keyword's rule, merged into another keyword's 702.166b",
    35: "mayhem's removed 702.205a merged into web-slinging's 702.206a; weglith's 702.62b split from raiston's",
    36: "702.62b, a retired keyword's rule, merged into another keyword's 702.62b",
}


def _cache_with_the_history(bundled_cache: Path, folder: Path) -> Path:
    """A copy of the bundled run's cache, this run's own (a run prunes its cache)."""
    cache = folder / "cache"
    shutil.copytree(bundled_cache, cache)
    return cache


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory, bundled_cache: Path) -> list[Verdict]:
    gen = tmp_path_factory.mktemp("generated")
    rows = benchgen.generate(BASE, gen, AFTER, count=max(STEPS) + 1)
    raw = tmp_path_factory.mktemp("raw")
    wanted = sorted({k for k in STEPS} | {k - 1 for k in STEPS})
    for k in wanted:
        (raw / rows[k].name).write_bytes((gen / rows[k].name).read_bytes())
    out = tmp_path_factory.mktemp("published") / "out"
    cache = _cache_with_the_history(bundled_cache, out.parent)
    result = run_job(raw, out, Settings(jobs=2), cache_dir=cache)
    assert result.status == "published" and not result.problems
    return generated_steps(Published.load(out), [rows[k] for k in STEPS])


def test_every_rule_of_the_generated_steps_goes_where_the_generator_put_it(checked: list[Verdict]) -> None:
    kinds = Counter(v.category for v in checked)
    # Six steps of about 3,000 rules each, every kind of change among them.
    assert len(checked) > 6 * 2900 and kinds["renumbered"] > 600 and kinds["removed"] >= 15 and kinds["added"] >= 15
    wrong = [f"{v.key_id}: expected {v.expected}, got {v.got}" for v in checked if not v.right]
    assert wrong == []


def test_every_removed_rule_ends_as_removed(checked: list[Verdict]) -> None:
    """Not merged into the rule re-lettered into its number, worded alike: that
    rule went on word for word (702.17n of generated release 18, a protection
    exception, had been merged so)."""
    merged = [v.key_id for v in checked if v.category == "removed" and v.got != "removed"]
    assert merged == []


def test_rules_cut_in_two_and_joined_go_where_the_generator_put_them(tmp_path_factory: pytest.TempPathFactory,
                                                                    bundled_cache: Path) -> None:
    """A chain of its own (``cuts``): each release also cuts a rule in two after
    its first sentence (it goes on under its number, the rest is split from it)
    and appends a rule to the one before it (merged into it). Identical wordings
    in one release are not confused either: two variants' "Exactly one of the
    attack left, attack right ... options must be used" (806.2b and 811.2b),
    one reworded and the other re-lettered, had been swapped."""
    gen = tmp_path_factory.mktemp("cuts")
    rows = benchgen.generate(BASE, gen, AFTER, count=12, cuts=True)
    raw = tmp_path_factory.mktemp("raw-cuts")
    (raw / BASE.name).write_bytes(BASE.read_bytes())
    for row in rows:
        (raw / row.name).write_bytes((gen / row.name).read_bytes())
    out = tmp_path_factory.mktemp("published-cuts") / "out"
    cache = _cache_with_the_history(bundled_cache, out.parent)
    result = run_job(raw, out, Settings(jobs=2), cache_dir=cache)
    assert result.status == "published" and not result.problems
    checked = generated_steps(Published.load(out), rows)
    kinds = Counter(v.category for v in checked)
    assert kinds["split"] == kinds["merged"] == 12 and len(checked) > 12 * 2800
    assert [f"{v.key_id}: expected {v.expected}, got {v.got}" for v in checked if not v.right] == []
    assert all(v.got == v.category for v in checked if v.category in ("removed", "merged"))
