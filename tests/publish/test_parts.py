"""The dataset's own parts: keywords, the card, SHA256SUMS, the licences, what each file
says of itself, the full-text indexes tied to their tables, and Datasette over them."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from pipeline import __version__
from pipeline.cache import code_version
from pipeline.publish import card, checksums, datasette, keywords, meta, parquet
from pipeline.publish.folder import MARKER
from pipeline.publish.notice import CODE_LICENSE, FAN_CONTENT_POLICY, NOTICE
from pipeline.publish.rows import source_row
from pipeline.publish.tables import BY_NAME, TABLES
from pipeline.query.dataset import source_status
from pipeline.records import Source
from tests.conftest import RAW, ROOT, Bundled, Table

REFERENCE = "cr-2026-08-07"
SHARED_CONTRACT = ROOT.parent / "shared" / "CONTRACT.md"


@pytest.mark.skipif(not SHARED_CONTRACT.is_file(), reason=f"no shared contract at {SHARED_CONTRACT}")
def test_docs_contract_is_the_shared_contract_byte_for_byte() -> None:
    assert (ROOT / "docs" / "CONTRACT.md").read_bytes() == SHARED_CONTRACT.read_bytes()


# --- sources.csv's status ---------------------------------------------------------------

def test_a_suspect_source_is_published_suspect_and_both_readers_agree() -> None:
    """The contract's three statuses; the reader takes a folder published before
    (a suspect source written ``ok``, its reasons under ``suspect``) the same way."""
    src = Source("half", "half.txt", "0" * 64, 10, status="suspect", error="half.txt: rule_count: 3 rules")
    row = source_row(src)
    assert (row["status"], row["error"], row["suspect"]) == ("suspect", "", "half.txt: rule_count: 3 rules")
    old = {**row, "status": "ok"}
    assert source_status(row) == source_status(old) == "suspect"
    gone = source_row(Source("bad", "bad.txt", "", 0, status="quarantined", error="bad.txt: line 3: not text"))
    assert (gone["status"], gone["error"], gone["suspect"]) == ("quarantined", "bad.txt: line 3: not text", "")
    assert source_status(source_row(Source("a", "a.txt", "0" * 64, 1))) == "ok"


# --- keywords.csv ------------------------------------------------------------------------

def test_entwine_in_2004_was_502_32_and_is_702_42(table: Table) -> None:
    """The question users ask most, answered by one row."""
    kw = table("keywords")
    row = kw[(kw.keyword == "Entwine") & (kw.source_id == "cr-2004-10-01")].iloc[0].to_dict()
    assert row == {"keyword": "Entwine", "kind": "keyword_ability", "source_id": "cr-2004-10-01",
                   "effective_date": "2004-10-01", "section_as_written": "502.32", "canonical_section": "702.42",
                   "lineage_id": "cr-2003-10-01:502.32a", "renamed_to": ""}
    # Every release since 2003-10 has it, one lineage throughout, as DOMAIN.md gives its numbers.
    entwine = kw[kw.keyword == "Entwine"]
    assert set(entwine.lineage_id) == {"cr-2003-10-01:502.32a"} and set(entwine.canonical_section) == {"702.42"}
    assert list(dict.fromkeys(entwine.section_as_written)) == ["502.32", "702.39", "702.40", "702.41", "702.42"]


def test_totem_armor_is_renamed_umbra_armor_and_linked(table: Table) -> None:
    kw = table("keywords")
    totem, umbra = kw[kw.keyword == "Totem Armor"], kw[kw.keyword == "Umbra Armor"]
    assert len(totem) > 0 and len(umbra) > 0
    assert set(totem.renamed_to) == {"Umbra Armor"} and set(umbra.renamed_to) == {""}
    assert set(totem.lineage_id) == set(umbra.lineage_id) == {"cr-2010-06-18:702.86a"}
    assert set(totem.canonical_section) == set(umbra.canonical_section) == {"702.89"}
    assert totem.effective_date.max() < umbra.effective_date.min() == "2024-07-30"


def test_the_newest_release_has_a_keyword_ability_for_each_702_section(table: Table) -> None:
    kw, elements = table("keywords"), table("elements")
    newest = kw[kw.source_id == REFERENCE]
    sections = elements[(elements.source_id == REFERENCE) & (elements.kind == "section")
                        & elements.number_as_written.str.fullmatch(r"702\.\d+")]
    abilities = newest[newest.kind == "keyword_ability"]
    assert len(abilities) == len(sections) == 194
    assert list(abilities.section_as_written) == list(sections.number_as_written)
    assert list(abilities.keyword) == list(sections.text)
    assert (abilities.section_as_written == abilities.canonical_section).all()  # the reference maps to itself
    assert len(newest[newest.kind == "keyword_action"]) == len(
        elements[(elements.source_id == REFERENCE) & (elements.kind == "section")
                 & elements.number_as_written.str.fullmatch(r"701\.\d+")]) == 69


def test_ability_words_are_those_the_ability_word_rule_lists(table: Table) -> None:
    """207.2c's list, read from the raw file; 206.2c's in 2009 (found by what it says)."""
    kw = table("keywords")
    text = (RAW / f"{REFERENCE}.txt").read_text("utf-8-sig")
    listed = re.search(r"^207\.2c .*The ability words are (.*)\.$", text, re.M)
    assert listed
    words = [w.removeprefix("and ") for w in listed.group(1).split(", ")]
    newest = kw[(kw.source_id == REFERENCE) & (kw.kind == "ability_word")]
    assert list(newest.keyword) == words and len(words) == 61
    assert {"council’s dilemma", "will of the council", "descend 8"} <= set(words)
    assert set(newest.section_as_written) == set(newest.canonical_section) == {"207.2c"}
    first = kw[(kw.kind == "ability_word")].groupby("source_id").section_as_written.first()
    assert first.index.min() == "cr-2009-07-11" and first["cr-2009-07-11"] == "206.2c"
    # Imprint: a keyword ability until July 2009 (its lineage ended then), an ability word since.
    imprint = kw[kw.keyword.str.casefold() == "imprint"]
    assert set(imprint[imprint.kind == "keyword_ability"].canonical_section) == {""}
    assert imprint[imprint.kind == "ability_word"].effective_date.min() == "2009-07-11"


def test_scry_moved_from_abilities_to_actions_and_keyword_actions_start_in_2007(table: Table) -> None:
    kw = table("keywords")
    scry = kw[kw.keyword == "Scry"].drop_duplicates("kind").set_index("kind")
    assert scry.loc["keyword_ability", "section_as_written"] == "502.36"
    assert scry.loc["keyword_action", "section_as_written"] == "501.8"
    assert set(kw[kw.keyword == "Scry"].canonical_section) == {"701.22"}
    actions = kw[kw.kind == "keyword_action"]
    assert actions.effective_date.min() == "2007-05-01"  # the first release with a Keyword Actions section


def test_keywords_are_keyed_and_come_from_the_releases(table: Table) -> None:
    kw, sources = table("keywords"), table("sources")
    assert not kw.duplicated(["source_id", "kind", "keyword"]).any()
    releases = sources[sources.source_id == sources.numbering_like]
    assert set(kw.source_id) == set(releases[releases.format == "cr_document"].source_id)
    assert set(kw.kind) == {"keyword_ability", "keyword_action", "ability_word"}
    lineages = set(table("lineages").lineage_id)
    assert set(kw.lineage_id) - {""} <= lineages


def test_a_number_written_twice_keeps_its_headings_mapping(table: Table) -> None:
    """702.175 in September 2024 is Offspring and Impending: no lineage of their
    first rules, so each keeps the number its heading was mapped to."""
    kw = table("keywords")
    rows = kw[(kw.source_id == "cr-2024-09-20") & (kw.section_as_written == "702.175")].set_index("keyword")
    assert rows.canonical_section.to_dict() == {"Offspring": "702.175", "Impending": "702.176"}


# --- what each file says of itself --------------------------------------------------------

def test_rules_json_and_the_database_say_what_made_them(bundled: Bundled, table: Table) -> None:
    _, out = bundled
    doc = json.loads((out / "rules.json").read_text("utf-8"))
    sources = table("sources")
    assert {k: v for k, v in doc["meta"].items() if k != "generated_from"} == {
        "schema_version": meta.SCHEMA_VERSION, "pipeline_version": __version__, "reference": REFERENCE,
        "reference_date": "2026-08-07", "generated_at": "2026-08-07T00:00:00Z",
    }
    assert doc["meta"]["generated_from"] == sorted(sources.sha256)
    with closing(sqlite3.connect(f"file:{out / 'rules.sqlite'}?mode=ro", uri=True)) as con:
        stored = dict(con.execute("SELECT key, value FROM meta"))
    assert stored.keys() == {"schema_version", "pipeline_version", "code_version", "reference", "reference_date",
                             "generated_at", "sources"}
    assert stored["code_version"] == code_version() and stored["generated_at"] == doc["meta"]["generated_at"]
    assert json.loads(stored["sources"]) == dict(zip(sources.source_id, sources.sha256, strict=True))


def test_rules_fts_and_glossary_fts_are_tied_to_their_tables(published: Path) -> None:
    """As ``sqlite-utils enable-fts`` makes them (content= the table), each agreeing
    with its table (FTS5's own integrity check), and searched through it."""
    with closing(sqlite3.connect(published / "rules.sqlite")) as con:
        for name in ("rules", "glossary"):
            sql = con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (f"{name}_fts",)).fetchone()[0]
            assert f"content=[{name}]" in sql
            con.execute(f"INSERT INTO {name}_fts ({name}_fts) VALUES ('integrity-check')")
        found = [n for (n,) in con.execute("SELECT number FROM rules WHERE rowid IN "
                                           "(SELECT rowid FROM rules_fts WHERE rules_fts MATCH 'entwine')")]
        assert found == ["702.42a", "702.42b"]
        terms = {t for (t,) in con.execute(
            "SELECT term FROM glossary WHERE rowid IN (SELECT rowid FROM glossary_fts WHERE glossary_fts MATCH ?)",
            ('"umbra armor"',))}
        assert terms == {"Umbra Armor", "Totem Armor (Obsolete)"}
        # "Dandan" finds "Dandân", as the search index does.
        assert con.execute("SELECT count(*) FROM rules_fts WHERE rules_fts MATCH 'dandan'").fetchone()[0] > 0


# --- SHA256SUMS ------------------------------------------------------------------------------

def _sha256sum_check(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sha256sum", "--check", *options, checksums.SUMS], cwd=folder, capture_output=True,
                          text=True)


def test_sha256sums_lists_every_file_of_the_dataset(bundled: Bundled) -> None:
    _, out = bundled
    listed = [line.split("  ", 1)[1] for line in (out / checksums.SUMS).read_text("utf-8").splitlines()]
    every = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert listed == sorted(set(every) - {"run.json", "changes.md", MARKER, checksums.SUMS})
    assert {"README.md", "metadata.json", "datapackage.json", "keywords.csv", "parquet/keywords.parquet",
            "rules.sqlite"} <= set(listed)
    # run.json lists it as an output with the rest; the marker owns it.
    report = json.loads((out / "run.json").read_text("utf-8"))
    assert checksums.SUMS in {o["file"] for o in report["outputs"]}
    assert checksums.SUMS in (out / MARKER).read_text("utf-8").splitlines()


@pytest.mark.slow  # sha256sum reads the full dataset, 500 MB
def test_sha256sum_checks_the_full_dataset(bundled: Bundled) -> None:
    _, out = bundled
    checked = _sha256sum_check(out, "--strict")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count(": OK\n") == len((out / checksums.SUMS).read_text("utf-8").splitlines())


def test_sha256sum_checks_a_folder_and_finds_a_damaged_file(published: Path) -> None:
    checked = _sha256sum_check(published, "--strict")
    assert checked.returncode == 0 and ": FAILED" not in checked.stdout, checked.stdout + checked.stderr
    with (published / "keywords.csv").open("a", encoding="utf-8") as fh:
        fh.write("x\n")
    checked = _sha256sum_check(published, "--quiet")
    assert checked.returncode == 1 and checked.stdout == "keywords.csv: FAILED\n"


# --- the card and the licences --------------------------------------------------------------

def _front_matter(text: str) -> dict[str, Any]:
    head = re.match(r"---\n(.*?\n)---\n", text, re.S)
    assert head, "no YAML front matter"
    found: dict[str, Any] = yaml.safe_load(head.group(1))
    return found


def test_the_card_names_each_parquet_table_the_licence_and_every_column(bundled: Bundled, table: Table) -> None:
    _, out = bundled
    text = (out / card.CARD).read_text("utf-8")
    front = _front_matter(text)
    assert (front["license"], front["license_link"], front["language"]) == ("other", FAN_CONTENT_POLICY, ["en"])
    assert front["pretty_name"].startswith("Magic: The Gathering Comprehensive Rules")
    configs = {c["config_name"]: c for c in front["configs"]}
    assert list(configs) == [t.name for t in TABLES]
    assert [name for name, c in configs.items() if c.get("default")] == ["rules"]
    for name, config in configs.items():
        assert config["data_files"] == f"parquet/{name}.parquet" and (out / config["data_files"]).is_file()
    body = text.split("\n---\n", 1)[1]
    for t in TABLES:
        section = body.split(f"\n### {t.name}\n", 1)[1].split("\n### ", 1)[0]
        assert t.description in section
        for column in t.columns:
            assert f"| `{column}` | {t.type_of(column)} |" in section, (t.name, column)
    assert f"{len(table('keywords')):,} rows." in body.split("\n### keywords\n", 1)[1]
    assert NOTICE in body and f"{CODE_LICENSE} licence" in body


@pytest.mark.slow  # datasets imported, and four tables generated into its cache
def test_datasets_loads_each_table_by_name(bundled: Bundled, table: Table, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Hugging Face ``datasets`` reads the card's configs: each table by name, offline,
    its cache outside the published folder, which it leaves as it was."""
    for var, value in (("HF_HOME", tmp_path / "hf"), ("HF_DATASETS_OFFLINE", "1"), ("HF_HUB_OFFLINE", "1"),
                       ("HF_HUB_DISABLE_TELEMETRY", "1")):
        monkeypatch.setenv(var, str(value))
    datasets = pytest.importorskip("datasets")
    datasets.disable_progress_bars()
    _, out = bundled
    before = sorted(p.name for p in out.rglob("*"))
    assert datasets.get_dataset_config_names(str(out)) == [t.name for t in TABLES]
    for name in ("keywords", "sections", "rules"):
        loaded = datasets.load_dataset(str(out), name, split="train", cache_dir=str(tmp_path / "cache"))
        expected = table(name)
        assert loaded.column_names == list(BY_NAME[name].columns)
        assert loaded.num_rows == len(expected), name
        assert loaded[0]["number" if name != "keywords" else "keyword"] == expected.iloc[0, 0]
    default = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    assert default.column_names == list(BY_NAME["rules"].columns)
    assert sorted(p.name for p in out.rglob("*")) == before


def test_licences_in_datapackage_the_repository_and_its_readme(bundled: Bundled) -> None:
    _, out = bundled
    descriptor = json.loads((out / "datapackage.json").read_text("utf-8"))
    names = {lic["name"]: lic for lic in descriptor["licenses"]}
    assert names.keys() == {CODE_LICENSE, "wotc-fan-content-policy"}
    assert names["wotc-fan-content-policy"]["path"] == FAN_CONTENT_POLICY
    assert NOTICE in names["wotc-fan-content-policy"]["title"]
    licence = (ROOT / "LICENSE").read_text("utf-8")
    assert licence.startswith(f"{CODE_LICENSE} License\n") and "Fan Content Policy" in licence
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme.split("\n## Licence and data notice\n", 1)[1]
    assert NOTICE in section and "(LICENSE)" in section


# --- Datasette ----------------------------------------------------------------------------------

def test_datasette_metadata_describes_every_table_and_column(bundled: Bundled) -> None:
    _, out = bundled
    doc = json.loads((out / datasette.METADATA).read_text("utf-8"))
    with closing(sqlite3.connect(f"file:{out / 'rules.sqlite'}?mode=ro", uri=True)) as con:
        in_db = {n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    described = doc["databases"]["rules"]["tables"]
    assert set(described) <= in_db
    for t in TABLES:
        assert described[t.name]["description"] == t.description
        assert described[t.name]["columns"] == {c: t.meaning(c) for c in t.columns}
    assert described["rules"]["fts_table"] == "rules_fts" and described["glossary"]["fts_table"] == "glossary_fts"
    assert described["cited"] == {"hidden": True}
    assert (doc["license_url"], doc["about"]) == (FAN_CONTENT_POLICY, NOTICE)


def _free_port() -> int:
    with closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _get(base: str, path: str, **query: str) -> Any:
    url = f"{base}{path}?{urllib.parse.urlencode(query)}"
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.slow  # a Datasette server over the full database
def test_datasette_serves_a_rule_by_number_and_searches_rules_and_glossary(bundled: Bundled, tmp_path: Path) -> None:
    """``datasette rules.sqlite -m metadata.json`` on 127.0.0.1: a rule by its number,
    ``_search`` on the rules and glossary tables (tied FTS), and the metadata shown."""
    pytest.importorskip("datasette")
    _, out = bundled
    port = _free_port()
    log = (tmp_path / "datasette.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "datasette", "serve", "-i", str(out / "rules.sqlite"), "-m", str(out / "metadata.json"),
         "-h", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "DATASETTE_SECRET": "test"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _get(base, "/-/versions.json")
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "datasette.log").read_text()
                time.sleep(0.2)
        rule = _get(base, "/rules/rules.json", number="702.42a", _shape="array")
        assert len(rule) == 1 and rule[0]["text"].startswith("Entwine is a static ability of modal spells")
        found = _get(base, "/rules/rules.json", _search="entwine", _shape="array", _col="number")
        assert [r["number"] for r in found] == ["702.42a", "702.42b"]
        terms = _get(base, "/rules/glossary.json", _search="umbra armor", _shape="array", _size="max")
        assert {"Umbra Armor", "Totem Armor (Obsolete)"} == {t["term"] for t in terms}
        kws = _get(base, "/rules/keywords.json", keyword="Entwine", source_id="cr-2004-10-01", _shape="array")
        assert (kws[0]["section_as_written"], kws[0]["canonical_section"]) == ("502.32", "702.42")
        with urllib.request.urlopen(f"{base}/rules/rules", timeout=30) as response:
            page = response.read().decode("utf-8")
        assert 'name="_search"' in page and BY_NAME["rules"].meaning("section") in page
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_parquet_copy_of_keywords_is_the_csv(bundled: Bundled, table: Table) -> None:
    _, out = bundled
    frame = pd.read_parquet(parquet.path_of(out, BY_NAME["keywords"]))
    frame["effective_date"] = frame["effective_date"].astype("string")  # a date in Parquet, ISO text in the CSV
    assert frame.astype(object).fillna("").values.tolist() == table("keywords").values.tolist()


def test_keyword_helpers_read_real_wordings() -> None:
    assert keywords.renamed("Tribal (Obsolete)", "An obsolete card type that has been renamed. See rule 308, "
                                                 "“Kindreds.”") == ("Tribal", "Kindreds")
    assert keywords.ability_words("The ability words are channel, chroma, domain, grandeur, hellbent, imprint, "
                                  "kinship, radiance, sweep, and threshold.")[-2:] == ["sweep", "threshold"]


def test_meta_dates_the_reference_by_its_source_or_as_told() -> None:
    """A reference that is a source is dated by it; one that is none (a history's
    release, on a run of dumps alone) by the date given, else left empty."""
    release = Source(REFERENCE, f"{REFERENCE}.txt", "a" * 64, 1, format="cr_document", effective_date="2026-08-07")
    dump = Source("dump", "dump.txt", "b" * 64, 1, format="faq")
    gone = Source("gone", "gone.txt", "", 0, status="quarantined")
    made = meta.of([release, dump, gone], REFERENCE, "1999-01-01")
    assert (made.reference_date, made.generated_at) == ("2026-08-07", "2026-08-07T00:00:00Z")
    assert made.sources == {REFERENCE: "a" * 64, "dump": "b" * 64}
    assert made.rules_json()["generated_from"] == ["a" * 64, "b" * 64]
    assert meta.of([dump], REFERENCE, "2026-08-07").generated_at == "2026-08-07T00:00:00Z"
    assert (meta.of([dump], REFERENCE).reference_date, meta.of([dump], REFERENCE).generated_at) == ("", "")
