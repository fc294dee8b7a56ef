"""Self-description of ``out/``: a Frictionless Data Package and the rules.json schema.

``datapackage.json`` lists every CSV with its field types and meanings,
primary and foreign keys, byte size and sha256, then the Parquet copy of each
(same fields; its foreign keys are the CSV's); ``rules.schema.json`` (JSON
Schema 2020-12) ships in ``pipeline/data`` and is copied beside ``rules.json``.
``licenses`` names the code's licence and the rules text's terms (``notice``).
Last, ``SHA256SUMS`` (``checksums``) lists every file of the dataset.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator

from pipeline import __version__, numbers
from pipeline.errors import InvalidOutput
from pipeline.publish import checksums, parquet
from pipeline.publish.notice import CODE_LICENSE, FAN_CONTENT_POLICY, NOTICE
from pipeline.publish.sink import sha256_of as sha256_of  # the job hashes files with it too
from pipeline.publish.sink import write_text
from pipeline.publish.tables import TABLES, Table

SCHEMA_NAME = "rules.schema.json"
DESCRIPTOR = "datapackage.json"
NAME = "mtg-comprehensive-rules"
TITLE = "Magic: The Gathering Comprehensive Rules and FAQs, canonical"
DESCRIPTION = ("Every rule of every ingested source mapped to the current numbering. "
               "The meaning of each table and column is the contract in docs/CONTRACT.md "
               "of the rules-pipeline repository; each field's description gives it in short.")
# The code's licence and the terms of the rules text (Data Package ``licenses``).
LICENSES = [
    {"name": CODE_LICENSE, "path": "https://opensource.org/license/mit",
     "title": f"{CODE_LICENSE}: the rules-pipeline code that made this dataset (its LICENSE file)"},
    {"name": "wotc-fan-content-policy", "path": FAN_CONTENT_POLICY,
     "title": f"The Comprehensive Rules text: Wizards of the Coast's Fan Content Policy. {NOTICE}"},
]


@lru_cache(maxsize=1)
def rules_schema() -> dict[str, Any]:
    text = resources.files("pipeline").joinpath(f"data/{SCHEMA_NAME}").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    # Numbers have one definition, the grammar's (pipeline.numbers).
    schema["$defs"]["number"]["pattern"] = numbers.CANONICAL
    Draft202012Validator.check_schema(schema)
    return schema


@lru_cache(maxsize=1)
def _validator() -> Any:
    return jsonschema_rs.validator_for(rules_schema())


def validate_rules_json(doc: dict[str, Any]) -> None:
    """Raise InvalidOutput naming the first violation of the schema and where it is.

    The run validates with jsonschema-rs (the Rust validator: 0.07 s on the
    1x benchmark's rules.json, where fastjsonschema's generated Python took
    0.5 s); the tests hold it to jsonschema's Draft 2020-12 validator.
    """
    try:
        _validator().validate(doc)
    except jsonschema_rs.ValidationError as exc:
        where = "/".join(str(part) for part in exc.instance_path) or "(the document)"
        raise InvalidOutput(f"rules.json does not match {SCHEMA_NAME} at {where}: {exc.message}") from exc


def _schema(table: Table) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "fields": [{"name": c, "type": table.type_of(c), "description": table.meaning(c)} for c in table.columns],
        "missingValues": [""],
    }
    if table.primary_key:
        schema["primaryKey"] = list(table.primary_key)
    return schema


def _parquet_resource(out: Path, table: Table, hashed: Callable[[Path], str]) -> dict[str, Any]:
    """The Parquet copy of a table. No ``bytes``: Frictionless cannot count a Parquet
    file's bytes and would report every one as wrong; the sha256 is there."""
    path = parquet.path_of(out, table)
    return {
        "name": f"{table.name}-parquet",
        "path": path.relative_to(out).as_posix(),
        "profile": "tabular-data-resource",
        "description": f"{table.description} A Parquet copy of {table.name}.csv.",
        "format": "parquet",
        "mediatype": "application/vnd.apache.parquet",
        "hash": "sha256:" + hashed(path),
        "schema": _schema(table),
    }


def datapackage(out: Path, sha256: Mapping[str, str] | None = None, history: str = "") -> dict[str, Any]:
    """The Data Package descriptor for the CSVs (and their Parquet copies) already written in
    ``out``; ``sha256`` gives the digests already known, by path relative to ``out``.
    ``history``: the history a run on dumps alone mapped through (``run.json``'s), whose
    releases its lineages name though they are no rows of ``sources``: those
    references are no foreign keys of such a dataset, and its description says so."""
    known = sha256 or {}

    def hashed(path: Path) -> str:
        return known.get(path.relative_to(out).as_posix()) or sha256_of(path)

    resources_ = []
    for table in TABLES:
        path = out / f"{table.name}.csv"
        schema = _schema(table)
        if table.foreign_keys:
            schema["foreignKeys"] = [
                {"fields": col, "reference": {"resource": "" if ref == table.name else ref, "fields": ref_col}}
                for col, ref, ref_col in table.foreign_keys if not (history and _names_releases(table, ref))
            ]
        resources_.append({
            "name": table.name,
            "path": path.name,
            "profile": "tabular-data-resource",
            "description": table.description,
            "format": "csv",
            "mediatype": "text/csv",
            "encoding": "utf-8",
            "bytes": path.stat().st_size,
            "hash": "sha256:" + hashed(path),
            "dialect": {"delimiter": ",", "lineTerminator": "\n", "quoteChar": '"', "header": True},
            "schema": schema,
        })
    resources_ += [_parquet_resource(out, t, hashed) for t in TABLES if parquet.path_of(out, t).exists()]
    return {
        "profile": "tabular-data-package",
        "name": NAME,
        "title": TITLE,
        "version": __version__,
        "description": DESCRIPTION + (f" Its dumps were mapped through the history {history}: lineages.csv "
                                      "names that history's releases, which are no rows of sources.csv."
                                      if history else ""),
        "licenses": LICENSES,
        "resources": resources_,
    }


def _names_releases(table: Table, ref: str) -> bool:
    """Whether a foreign key of ``table`` into ``ref`` names a chain release (the
    lineages' first, last and ending release), which a history may have lent."""
    return table.name == "lineages" and ref == "sources"


def write(out: Path, sha256: Mapping[str, str] | None = None, history: str = "") -> dict[str, str]:
    """Write ``datapackage.json``, the rules.json schema and then ``SHA256SUMS`` into
    ``out``; returns the sha256 of each file it described or wrote, so that nobody
    hashes them again (``sha256``: the digests already known, by path relative to ``out``)."""
    descriptor = datapackage(out, sha256, history)
    hashes = {r["path"]: r["hash"].removeprefix("sha256:") for r in descriptor["resources"]}
    hashes[DESCRIPTOR] = write_text(out / DESCRIPTOR, json.dumps(descriptor, ensure_ascii=False, indent=1) + "\n")
    hashes[SCHEMA_NAME] = write_text(out / SCHEMA_NAME, json.dumps(rules_schema(), indent=1) + "\n")
    hashes[checksums.SUMS] = checksums.write(out, {**(sha256 or {}), **hashes})
    return hashes
