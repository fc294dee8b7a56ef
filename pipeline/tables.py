"""The output contract in one place: every table, its columns, their types and keys.

``emit`` writes the CSVs in this column order, ``package`` describes them as a
Frictionless Data Package, and ``database`` builds SQLite tables from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("chapter", "section", "rule", "example", "glossary", "qa", "prose", "front_matter", "noise")

INTEGER = {"line_start", "line_end", "bytes", "lines", "rules", "qa", "variants"} | {f"lines_{k}" for k in KINDS}
NUMBER = {"score"}


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[tuple[str, str, str], ...] = ()  # (column, table, column)
    indexes: tuple[str, ...] = field(default=())
    description: str = ""

    def type_of(self, column: str) -> str:
        return "integer" if column in INTEGER else "number" if column in NUMBER else "string"


ELEMENT_COLUMNS = (
    "element_id", "source_id", "line_start", "line_end", "kind", "number_as_written", "canonical_number",
    "parent_id", "text_raw", "text", "duplicate_of", "noise_kind", "question", "answer", "term", "flags",
)
_ELEMENT_FKS = (
    ("source_id", "sources", "source_id"),
    ("parent_id", "elements", "element_id"),
    ("duplicate_of", "elements", "element_id"),
)

TABLES: tuple[Table, ...] = (
    Table("sources", (
        "source_id", "path", "sha256", "bytes", "encoding", "newline", "format", "effective_date", "era",
        "lines", "status", "error", "encoding_evidence", "numbering_like", "flags",
        *[f"lines_{k}" for k in KINDS], "checks",
    ), ("source_id",), description="One row per raw file: how it was read, whether it was ingested "
                                   "(ok, suspect, quarantined) and its self-checks."),
    Table("elements", ELEMENT_COLUMNS, ("element_id",), _ELEMENT_FKS,
          ("source_id", "kind", "canonical_number"),
          "The ledger: every element of every source; spans cover every non-blank line once."),
    Table("sections", ("number", "title", "chapter", "rules", "qa", "sources"), ("number",),
          description="Sections of the reference numbering."),
    Table("rules", ("number", "section", "text", "variants", "sources"), ("number",),
          (("section", "sections", "number"),), ("section",),
          "One row per rule of the reference numbering, with the newest wording."),
    Table("renumber_map", ("source_id", "number_as_written", "title", "canonical_number", "method", "score",
                           "reason"),
          ("source_id", "number_as_written", "title"), (("source_id", "sources", "source_id"),),
          ("canonical_number",), "Each number (or unnumbered title) of each source and where it maps."),
    Table("qa", ("qa_id", "section", "question", "answer", "source_id", "line_start", "line_end",
                 "duplicate_of", "section_as_written"), ("qa_id",),
          (("qa_id", "elements", "element_id"), ("source_id", "sources", "source_id"),
           ("duplicate_of", "elements", "element_id")), ("section",), "FAQ questions and answers."),
    Table("xrefs", ("element_id", "target_as_written", "target_canonical", "target"), (),
          (("element_id", "elements", "element_id"),), ("element_id", "target_canonical"),
          "Cross-references in rule, example, answer and glossary text, ranges expanded."),
    Table("glossary", ("term", "text", "source_id", "duplicate_of", "element_id", "line_start"), ("element_id",),
          (("element_id", "elements", "element_id"), ("source_id", "sources", "source_id"),
           ("duplicate_of", "elements", "element_id")), ("term",), "Glossary entries of every source."),
    Table("rule_history", ("canonical_number", "source_id", "effective_date", "number_as_written", "change",
                           "text"),
          ("canonical_number", "source_id", "number_as_written"),
          (("canonical_number", "rules", "number"), ("source_id", "sources", "source_id")),
          ("canonical_number",), "Each canonical rule in each source it appears in, in date order."),
    Table("noise", ELEMENT_COLUMNS, ("element_id",), (("element_id", "elements", "element_id"),), (),
          "The noise rows of the ledger, for review."),
)

BY_NAME = {t.name: t for t in TABLES}
