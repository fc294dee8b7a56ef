"""``metadata.json``: what Datasette shows of ``rules.sqlite`` (``datasette rules.sqlite -m metadata.json``).

Made from the same descriptions as ``datapackage.json`` (``tables.py``): each
table's and column's meaning, the title, the licences and the data notice;
each table of the contract searchable with ``_search`` where it has a tied
full-text index (``sqlite.TIED_FTS``). The database's own tables for the
queries (``cited``, ``search_in``) are hidden; ``search`` and ``meta`` are described.
The format is Datasette 0.65's metadata file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.publish.datapackage import DESCRIPTION, TITLE
from pipeline.publish.meta import Meta
from pipeline.publish.notice import CODE_LICENSE, FAN_CONTENT_POLICY, NOTICE
from pipeline.publish.sink import write_text
from pipeline.publish.sqlite import TIED_FTS
from pipeline.publish.tables import TABLES

METADATA = "metadata.json"
DATABASE_NAME = "rules"  # Datasette names a database by its file's stem: rules.sqlite
# The database's tables beside the contract's.
OTHER_TABLES: dict[str, dict[str, Any]] = {
    "meta": {"description": "What made this file: schema, pipeline and code versions, the reference release "
                            "and its date, when the content is as of, and the sources read (JSON: id -> sha256)."},
    "search": {"description": "Full-text index of every distinct wording of a rule, glossary entry or Q&A in any "
                              "source, under its canonical number (current = the reference has it)."},
    "cited": {"hidden": True},
    "search_in": {"hidden": True},
}


def metadata(meta: Meta) -> dict[str, Any]:
    """The metadata document for a database made with ``meta``."""
    tables: dict[str, dict[str, Any]] = {}
    for table in TABLES:
        entry: dict[str, Any] = {
            "description": table.description,
            "columns": {c: table.meaning(c) for c in table.columns},
        }
        if table.name in TIED_FTS:
            entry.update(fts_table=f"{table.name}_fts", fts_pk="rowid")
        tables[table.name] = entry
    tables.update(OTHER_TABLES)
    reference = meta.reference + (f" ({meta.reference_date})" if meta.reference_date else "")
    return {
        "title": TITLE,
        "description": f"{DESCRIPTION} Reference numbering: {reference}.",
        "license": f"Rules text: Wizards of the Coast's Fan Content Policy; code: {CODE_LICENSE}",
        "license_url": FAN_CONTENT_POLICY,
        "source": "rules-pipeline " + meta.pipeline_version,
        "about": NOTICE,
        "databases": {DATABASE_NAME: {"description": f"{TITLE}. {NOTICE}", "tables": tables}},
    }


def write(out: Path, meta: Meta) -> str:
    """Write ``metadata.json`` into ``out``; returns its sha256."""
    return write_text(out / METADATA, json.dumps(metadata(meta), ensure_ascii=False, indent=1) + "\n")
