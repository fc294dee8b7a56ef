"""``README.md`` of a published folder: its dataset card, in the Hugging Face format.

YAML front matter first: ``configs`` names each table's Parquet copy, so that
``datasets.load_dataset("out", "rules")`` loads one table by name (``rules`` is
the default), then ``license``, ``language`` and ``pretty_name``. The rules
text is Wizards of the Coast's, not the project's, so the card's licence is
``other``, named and linked (the Fan Content Policy); the code's own licence
is said in words. Then the tables and their columns, in the words of the
contract (``tables.py``, as ``datapackage.json`` describes them), and the
data notice (``notice.py``). Every value of the front matter is written as a
JSON string, which YAML reads as the same string.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from pipeline.publish import parquet
from pipeline.publish.datapackage import DESCRIPTION, NAME, TITLE
from pipeline.publish.meta import Meta
from pipeline.publish.notice import CODE_LICENSE, FAN_CONTENT_POLICY, NOTICE
from pipeline.publish.sink import write_text
from pipeline.publish.tables import TABLES

CARD = "README.md"
DEFAULT_CONFIG = "rules"
LICENSE_NAME = "wizards-of-the-coast-fan-content-policy"
# The files beside the tables, and what each is.
FILES = {
    "rules.json": "the canonical dataset as one tree: sections, rules, examples, variants, cross-references, "
                  "Q&A, and a `meta` that says what made it (rules.schema.json is its JSON Schema)",
    "rules.sqlite": "every table, keyed and indexed, with full-text search (`rules_fts`, `glossary_fts`, `search`) "
                    "and a `meta` table; `datasette rules.sqlite -m metadata.json` serves it",
    "metadata.json": "Datasette's metadata for rules.sqlite: each table's and column's meaning, the licences",
    "datapackage.json": "a Frictionless Data Package: every CSV and Parquet file with its fields, keys and sha256",
    "SHA256SUMS": "the sha256 of every file of the dataset: `sha256sum -c SHA256SUMS` checks a download",
}


def _q(text: str) -> str:
    """A YAML scalar: the JSON string, which YAML reads back as ``text``."""
    return json.dumps(text, ensure_ascii=False)


def front_matter() -> str:
    """The card's YAML header."""
    lines = [
        "---",
        f"pretty_name: {_q(TITLE)}",
        "license: other",
        f"license_name: {_q(LICENSE_NAME)}",
        f"license_link: {_q(FAN_CONTENT_POLICY)}",
        "language:",
        "- en",
        "configs:",
    ]
    for table in TABLES:
        lines += [f"- config_name: {_q(table.name)}",
                  f"  data_files: {_q(f'{parquet.FOLDER}/{table.name}.parquet')}"]
        if table.name == DEFAULT_CONFIG:
            lines.append("  default: true")
    return "\n".join(lines) + "\n---\n"


def card(meta: Meta, rows: Mapping[str, int]) -> str:
    """The whole card; ``rows`` the rows of each file written, by its name (``rules.csv``)."""
    parts = [
        front_matter(),
        f"# {TITLE}\n",
        f"{DESCRIPTION}\n",
        f"Reference numbering: `{meta.reference}`" + (f", effective {meta.reference_date}" if meta.reference_date
                                                      else "")
        + f". Made by rules-pipeline {meta.pipeline_version} (`{NAME}`, schema {meta.schema_version}) "
        f"from {len(meta.sources)} sources.\n",
        "## Loading\n",
        "```python\nfrom datasets import load_dataset\n\n"
        f'rules = load_dataset("path/to/this/folder", "{DEFAULT_CONFIG}")  # or any table below by its name\n'
        "```\n",
        "Each table is a CSV file (UTF-8, `\\n` line ends, an empty cell for unknown) and a Parquet copy "
        f"with the same columns and types, in `{parquet.FOLDER}/`. Numbers such as `702.2` and `702.20` are "
        "text: read the CSVs with every column as a string (`dtype=str`), or read the Parquet copies.\n",
        "## Tables\n",
    ]
    for table in TABLES:
        count = rows.get(f"{table.name}.csv")
        parts.append(f"### {table.name}\n")
        parts.append(f"{table.description}" + (f" {count:,} rows." if count is not None else "") + "\n")
        parts.append("| column | type | meaning |\n|---|---|---|\n"
                     + "".join(f"| `{c}` | {table.type_of(c)} | {_cell(table.meaning(c))} |\n" for c in table.columns))
    parts.append("## Other files\n")
    parts.append("".join(f"- `{name}`: {what}.\n" for name, what in FILES.items()))
    parts.append("## Licence and data notice\n")
    parts.append(f"{NOTICE} See the Fan Content Policy: {FAN_CONTENT_POLICY}\n")
    parts.append(f"The code that made this dataset (rules-pipeline) is under the {CODE_LICENSE} licence, "
                 "in its repository's LICENSE file; that licence does not cover the rules text.\n")
    return "\n".join(parts)


def _cell(text: str) -> str:
    """Text for a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def write(out: Path, meta: Meta, rows: Mapping[str, int]) -> str:
    """Write the card into ``out``; returns its sha256."""
    return write_text(out / CARD, card(meta, rows))
