"""The query commands (resolve, trace, diff, search) answer as they did before
they read rules.sqlite: golden answers recorded on the bundled data
(tests/data/queries/, ``record.py`` there), byte for byte, exit codes too."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.errors import DatasetError
from pipeline.query.dataset import DATABASE, Published, unchanged
from pipeline.run import Corpus
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "data" / "queries"
EXPECTED: dict[str, dict[str, object]] = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))


def _case(line: str) -> tuple[list[str], bytes | None]:
    if line.startswith("<"):
        name, rest = line[1:].split(" ", 1)
        return shlex.split(rest), (GOLDEN / name).read_bytes()
    return shlex.split(line), None


@pytest.mark.parametrize("line", list(EXPECTED))
def test_query_answers_as_recorded(line: str, bundled: tuple[Corpus, Path]) -> None:
    _, out = bundled
    args, stdin = _case(line)
    result = CliRunner().invoke(main, [*args, "--out", str(out)], input=stdin, prog_name="python -m pipeline")
    expected = EXPECTED[line]
    got = {"exit": result.exit_code, "stdout": result.stdout.replace(str(out), "OUT"),
           "stderr": result.stderr.replace(str(out), "OUT")}
    assert got == expected


def test_every_case_is_recorded() -> None:
    lines = [line for line in (GOLDEN / "cases.txt").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines == list(EXPECTED)


HEAVY = ("pandas", "pyarrow", "numpy", "rapidfuzz", "ftfy", "lark", "pipeline.ingest", "pipeline.corpus",
         "pipeline.lineage", "pipeline.publish", "pipeline.run", "pipeline.job", "pipeline.site")


def _heavy_after(code: str) -> list[str]:
    code += f"\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    found: list[str] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_the_queries_load_no_heavy_module(bundled: tuple[Corpus, Path]) -> None:
    """What a query needs is a few rows of rules.sqlite: no pandas, arrow, numpy,
    rapidfuzz, nor the stages that made the dataset."""
    _, out = bundled
    assert _heavy_after(
        "from pathlib import Path\n"
        "from pipeline.query import diff, search, trace\n"
        f"out = Path({str(out)!r})\n"
        "trace.resolve(out, '502.32a', as_of='2004-12-01'), list(trace.trace(out, '702.42'))\n"
        "diff.diff(out, 'cr-2025-09-19', 'cr-2026-04-17'), search.search(out / 'rules.sqlite', 'entwine')") == []


def test_the_query_commands_load_no_heavy_module(bundled: tuple[Corpus, Path]) -> None:
    _, out = bundled
    assert _heavy_after(
        "import runpy, sys\n"
        f"sys.argv = ['pipeline', 'resolve', '502.32a', '--as-of', '2004-12-01', '--out', {str(out)!r}]\n"
        "try:\n    runpy.run_module('pipeline', run_name='__main__')\nexcept SystemExit:\n    pass") == []


def test_a_database_of_another_version_is_named(bundled: tuple[Corpus, Path], tmp_path: Path) -> None:
    import sqlite3

    _, out = bundled
    old = tmp_path / "out"
    old.mkdir()
    (old / DATABASE).write_bytes((out / DATABASE).read_bytes())
    con = sqlite3.connect(old / DATABASE)
    con.execute("DROP TABLE cited")
    con.commit()
    con.close()
    with pytest.raises(DatasetError, match=r"rules\.sqlite: no such table: cited: made by another version; run "):
        Published(old)


def test_a_file_changed_since_it_was_published_is_named(bundled: tuple[Corpus, Path], tmp_path: Path) -> None:
    import shutil

    _, published = bundled
    out = tmp_path / "out"
    shutil.copytree(published, out)  # times kept: no file is hashed
    unchanged(out, ["lineages.csv", DATABASE])
    lineages = out / "lineages.csv"
    lineages.write_bytes(lineages.read_bytes() + b"x")
    with pytest.raises(DatasetError, match=r"lineages\.csv: \d+ bytes, not the \d+ it was published with"):
        unchanged(out, ["lineages.csv"])
    data = bytearray((published / "lineages.csv").read_bytes())
    data[len(data) // 2] ^= 1  # the same size, another time: hashed
    lineages.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match=r"lineages\.csv: does not match its sha256 in run\.json"):
        unchanged(out, ["lineages.csv"])
    shutil.copy(published / "lineages.csv", lineages)  # a copy with a new time: hashed, and the same
    unchanged(out, ["lineages.csv"])


def test_the_whole_tables_are_the_csvs(bundled: tuple[Corpus, Path]) -> None:
    """The tools' view (every lineage, every history row) reads as the CSVs do."""
    import csv

    _, out = bundled
    data = Published(out)
    with (out / "rule_history.csv").open(encoding="utf-8", newline="") as fh:
        history = list(csv.DictReader(fh))
    assert [r for rows in data.history.values() for r in rows] == history
    with (out / "lineages.csv").open(encoding="utf-8", newline="") as fh:
        assert list(data.lineages.values()) == list(csv.DictReader(fh))
    lid = data.find("502.32a", source="cr-2004-10-01")
    assert data.lineages[lid]["canonical_number"] == "702.42a" and data.history_of(lid) == data.history[lid]


# What each query command must not load: the other commands' modules, the tools, and
# importlib.resources (the grammar is read from the package's folder). Each is a
# process of its own: what it imports is most of its time.
NOT_LOADED = {
    "resolve": ("pipeline.query.diff", "pipeline.query.search", "pipeline.tools", "importlib.resources"),
    "trace": ("pipeline.query.diff", "pipeline.query.search", "pipeline.tools", "importlib.resources"),
    "diff": ("pipeline.query.trace", "pipeline.query.search", "pipeline.tools", "importlib.resources", "hashlib"),
    "search": ("pipeline.query.diff", "pipeline.query.trace", "pipeline.changes", "pipeline.tools",
               "importlib.resources", "hashlib"),
}
ASKED = {"resolve": ["502.32a", "--as-of", "2004-12-01"], "trace": ["702.42a"],
         "diff": ["cr-2025-09-19", "cr-2026-04-17"], "search": ["entwine"]}


@pytest.mark.parametrize("command", list(NOT_LOADED))
def test_a_query_command_loads_only_what_it_uses(command: str, bundled: tuple[Corpus, Path]) -> None:
    _, out = bundled
    code = (
        "import json, runpy, sys\n"
        f"sys.argv = ['pipeline', {command!r}, *{ASKED[command]!r}, '--out', {str(out)!r}]\n"
        "try:\n    runpy.run_module('pipeline', run_name='__main__')\nexcept SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert f"pipeline.query.{command}" in loaded or command == "resolve"  # (resolve is trace's)
    assert [m for m in loaded if m.startswith(NOT_LOADED[command])] == []


def _rows_that_differ(out: Path, old: str, new: str) -> list[dict[str, str]]:
    """``Published.rows_in`` as it was first written: one query of the database."""
    import sqlite3

    con = sqlite3.connect(out / DATABASE)
    try:
        cursor = con.execute(
            "SELECT * FROM rule_history h WHERE h.source_id IN (:old, :new) AND h.number_as_written IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM rule_history o WHERE o.lineage_id = h.lineage_id AND o.source_id = "
            " CASE h.source_id WHEN :old THEN :new ELSE :old END "
            " AND o.number_as_written = h.number_as_written AND o.text IS h.text) ORDER BY h.rowid",
            {"old": old, "new": new})
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, ["" if v is None else str(v) for v in row], strict=True)) for row in cursor]
    finally:
        con.close()


def test_the_rows_two_sources_differ_in_are_those_one_query_finds(bundled: tuple[Corpus, Path]) -> None:
    """Every release with the next, both ways round, with the dumps, and with itself."""
    _, out = bundled
    data = Published(out)
    dumps = [s for s in data.sources if s not in data.releases]
    pairs = [*pairwise(data.releases), *((new, old) for old, new in pairwise(data.releases)),
             *((d, r) for d in dumps for r in data.releases[-3:]), (data.releases[0], data.releases[-1]),
             (data.releases[-1], data.releases[-1]), ("nope", data.releases[-1])]
    differing = 0
    for old, new in pairs:
        rows = data.rows_in(old, new)
        assert rows == _rows_that_differ(out, old, new), (old, new)
        differing += len(rows)
    assert differing > 1000
    assert data.rows_in(data.releases[-1], data.releases[-1]) == []


def test_the_lineages_looked_up_one_by_one_are_the_tables_rows(bundled: tuple[Corpus, Path]) -> None:
    _, out = bundled
    whole = Published(out).lineages
    table = dict(whole.items())
    asked = Published(out).lineages  # a new handle: nothing read yet
    lid = next(iter(table))
    assert asked[lid] == table[lid] and asked.get(lid) == table[lid] and lid in asked
    assert "nope" not in asked and "" not in asked and asked.get("nope") is None
    with pytest.raises(KeyError):
        asked["nope"]
    assert {k: asked[k] for k in table} == table
    assert list(asked) == list(table) and len(asked) == len(table) > 1000
    data = Published(out)
    current = {r["canonical_number"] for r in table.values()} - {""}
    for number in sorted(current)[:200]:
        assert data.numbered_now(number) == [k for k, r in table.items() if r["canonical_number"] == number]
    assert data.numbered_now("") == [k for k, r in table.items() if not r["canonical_number"]] != []
    split = {r["split_from"] for r in table.values()} - {""}
    assert split
    for lid in split:
        assert data.split_from(lid) == [r for r in table.values() if r["split_from"] == lid]
