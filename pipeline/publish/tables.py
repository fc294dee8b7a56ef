"""The output contract in one place: every table, its columns, their types, keys and meanings.

``rows`` makes every table's rows in this column order; the ``csv``, ``parquet``
and ``sqlite`` writers write them with these types; ``datapackage`` describes them
as a Frictionless Data Package (with each column's meaning from ``MEANINGS``).
``docs/CONTRACT.md`` is the contract in prose; a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("chapter", "section", "rule", "example", "glossary", "qa", "prose", "front_matter", "noise")

INTEGER = {"line_start", "line_end", "bytes", "lines", "rules", "qa", "variants"} | {f"lines_{k}" for k in KINDS}
NUMBER = {"score"}
# Dates (ISO 8601, YYYY-MM-DD; empty when none): text in the CSV and SQLite, a date in
# Parquet and in ``pipeline.load``.
DATE = {"effective_date"}


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[tuple[str, str, str], ...] = ()  # (column, table, column)
    indexes: tuple[str, ...] = field(default=())
    description: str = ""

    def type_of(self, column: str) -> str:
        return ("integer" if column in INTEGER else "number" if column in NUMBER else "date" if column in DATE
                else "string")

    def meaning(self, column: str) -> str:
        """What ``column`` holds in this table (docs/CONTRACT.md), for ``datapackage.json``."""
        return MEANINGS.get(f"{self.name}.{column}") or MEANINGS.get(column, "")


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
        *[f"lines_{k}" for k in KINDS], "checks", "suspect",
    ), ("source_id",), description="One row per raw file: how it was read and its status: ok, suspect (read "
                                   "and published, but a self-check failed) or quarantined (not read)."),
    Table("elements", ELEMENT_COLUMNS, ("element_id",), _ELEMENT_FKS,
          ("source_id", "kind", "canonical_number"),
          "The ledger: every element of every source; spans cover every non-blank line once."),
    Table("sections", ("number", "title", "chapter", "rules", "qa", "sources"), ("number",),
          description="Sections of the reference numbering."),
    Table("rules", ("number", "section", "text", "variants", "sources", "lineage_id"), ("number",),
          (("section", "sections", "number"), ("lineage_id", "lineages", "lineage_id")), ("section",),
          "One row per rule of the reference numbering, with the newest wording."),
    Table("lineages", ("lineage_id", "canonical_number", "first_source", "first_number", "last_source",
                       "last_number", "ended", "ended_in", "split_from", "merged_into"), ("lineage_id",),
          (("first_source", "sources", "source_id"), ("last_source", "sources", "source_id"),
           ("ended_in", "sources", "source_id"), ("split_from", "lineages", "lineage_id"),
           ("merged_into", "lineages", "lineage_id")), ("canonical_number",),
          "One rule followed release by release: where it started, where it is now or where it ended."),
    Table("renumber_map", ("source_id", "number_as_written", "title", "lineage_id", "canonical_number", "method",
                           "score", "reason"),
          ("source_id", "number_as_written", "title"),
          (("source_id", "sources", "source_id"), ("lineage_id", "lineages", "lineage_id")),
          ("canonical_number", "lineage_id"), "Each number (or unnumbered title) of each source and where it maps."),
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
    Table("rule_history", ("lineage_id", "canonical_number", "source_id", "effective_date", "number_as_written",
                           "change", "text"),
          ("lineage_id", "source_id"),
          (("lineage_id", "lineages", "lineage_id"), ("source_id", "sources", "source_id")),
          ("lineage_id", "canonical_number"),
          "Each lineage in each source it appears in, in date order, with where it ended."),
    Table("noise", ELEMENT_COLUMNS, ("element_id",), (("element_id", "elements", "element_id"),), (),
          "The noise rows of the ledger, for review."),
    Table("keywords", ("keyword", "kind", "source_id", "effective_date", "section_as_written", "canonical_section",
                       "lineage_id", "renamed_to"), ("source_id", "kind", "keyword"),
          (("source_id", "sources", "source_id"), ("lineage_id", "lineages", "lineage_id")),
          ("keyword", "canonical_section"),
          "Each keyword ability, keyword action and ability word of each release: its section then and now."),
)

BY_NAME = {t.name: t for t in TABLES}

# Each column's meaning, as docs/CONTRACT.md gives it: by column name, or by
# "table.column" where one name means different things in different tables.
# Columns of tables still to come (lineages) are here too, so they arrive described.
MEANINGS: dict[str, str] = {
    # the ledger and the columns every table shares
    "element_id": "Stable id of an element: source id and first line, e.g. 001_a2791e0f90a089aa:L123.",
    "source_id": "The raw file's name without extension.",
    "line_start": "First line of the span in the source (1-based, universal newlines).",
    "line_end": "Last line of the span in the source (1-based, universal newlines).",
    "kind": "chapter, section, rule, example, glossary, qa, prose (an unnumbered paragraph), "
            "front_matter (title, date line, introduction, contents, credits) or noise.",
    "number_as_written": "The rule or section number exactly as the source wrote it (502.32, 702.2b); "
                         "empty when unnumbered.",
    "canonical_number": "The number in the reference numbering (the newest official release); empty if unmapped.",
    "parent_id": "The element this one belongs to (an example's rule, a rule's section, a Q&A's section).",
    "text_raw": "The element's text as decoded, before cleanup.",
    "text": "The cleaned body, without its number.",
    "duplicate_of": "element_id of the first identical element (after cleanup); empty if none.",
    "noise_kind": "For noise: epigraph, vim_filler, page_chrome or another named kind.",
    "question": "The question of a Q&A.",
    "answer": "The answer of a Q&A.",
    "term": "The glossary term (its definition is text).",
    "flags": "What cleanup or decoding noticed or changed, ;-separated (truncated, number_repaired, "
             "words_split, encoding_fixed, ...).",
    # sources
    "path": "The raw file's path under the raw folder.",
    "sha256": "SHA-256 of the raw file's bytes.",
    "bytes": "Size of the raw file in bytes.",
    "encoding": "The encoding the file was decoded from.",
    "encoding_evidence": "Why that encoding was chosen (a BOM, a score, the accented card names it decoded).",
    "newline": "Line-ending style: LF, CRLF, CR, or mixed(...) with the count of each.",
    "format": "cr_document, cr_numbered, cr_legacy, faq, web or unknown.",
    "effective_date": "The date the document states (These rules are effective as of ...); empty if none.",
    "era": "The wording era its text shows (pre-2009, 2009-2018, 2018-2021, 2021+); dates an undated source.",
    "lines": "Lines in the decoded source.",
    "status": "ok (read and published), suspect (read and published, but a self-check failed: see checks and "
              "suspect) or quarantined (not read: see error).",
    "suspect": "Empty when every self-check passed; else why the source is suspect: it was read and "
               "published, but a check failed (names the file and each failed check with its figures).",
    "checks": "Every self-check on this source, ;-separated, as name=ok or name=failed with its figures "
              "(numbered lines vs rules read, rule order, glossary text, rule count vs neighbours).",
    "error": "Why the file was quarantined, naming the file and, where it applies, the line.",
    "numbering_like": "The release whose numbering this source shares (a release shares its own).",
    "sources.flags": "What decoding noticed or repaired in the file, ;-separated.",
    # sections and rules
    "number": "The number in the reference numbering.",
    "title": "The section's title in the reference.",
    "chapter": "The chapter (first digit) of the section.",
    "rules": "Rules of the reference in this section.",
    "qa": "Q&A entries attached to this section.",
    "sources": "Sources with an element mapped to this number, ;-separated.",
    "section": "The section (canonical number) it belongs to.",
    "rules.text": "The rule's wording in the newest source that has it (the reference).",
    "variants": "Distinct wordings of this rule across all sources.",
    # renumber_map
    "renumber_map.title": "Section title, for a section seen without a number; else empty.",
    "method": "How the number was found: same (already canonical), lineage (followed release by release), "
              "title (section aligned by keyword title), text (rule aligned by wording), "
              "xref (from the source's own cross-references) or unmapped.",
    "score": "Match score of the alignment, 0-100.",
    "reason": "Why a number is unmapped.",
    "lineage_id": "The lineage (one rule followed through the releases) this row belongs to; see lineages.csv.",
    # qa
    "qa_id": "element_id of the Q&A in the ledger.",
    "qa.section": "The canonical section the Q&A is filed under (that of the rule or section it follows).",
    "section_as_written": "The section number the Q&A follows, as the source wrote it.",
    # xrefs
    "xrefs.element_id": "The element whose text holds the cross-reference.",
    "target_as_written": "The reference as written (601.2b, or a range such as 601.2e-g).",
    "target": "One rule it refers to, in the source's own numbering (ranges expanded).",
    "target_canonical": "That rule's canonical number; empty if unmapped.",
    # glossary
    "glossary.text": "The definition.",
    "glossary.line_start": "Line of the source where the entry starts.",
    # rule_history
    "change": "added, unchanged, edited (reworded), moved (renumbered), moved+edited, split, merged, "
              "or removed (the first release without it).",
    "rule_history.text": "The rule's wording in this source (empty where it was removed).",
    "rule_history.number_as_written": "The rule's number in this source (empty where it was removed).",
    "rule_history.canonical_number": "The rule's number in the reference numbering (empty if its lineage ended).",
    # lineages
    "lineages.canonical_number": "Where the lineage ends today; empty if it ended.",
    "first_source": "The first source the lineage appears in.",
    "first_number": "Its number there.",
    "last_source": "The last source the lineage appears in.",
    "last_number": "Its number there.",
    "ended": "removed, merged, or empty if it continues to the reference.",
    "ended_in": "The first release without it.",
    "split_from": "The lineage it split from.",
    "merged_into": "The lineage it was merged into.",
    # keywords
    "keyword": "The keyword's name as the release writes it (its section's title; an ability word as listed).",
    "keywords.kind": "keyword_ability, keyword_action or ability_word.",
    "keywords.source_id": "The release that defines it.",
    "keywords.effective_date": "That release's effective date.",
    "keywords.section_as_written": "Its section's number in that release (an ability word: the rule that lists it).",
    "canonical_section": "Its section today, through the lineage of its first rule; empty if it ended.",
    "keywords.lineage_id": "The lineage of its section's first rule (of the listing rule, for an ability word).",
    "renamed_to": "Its later name, as a glossary's (Obsolete) entry says (Totem Armor: Umbra Armor); else empty.",
}
MEANINGS.update({f"lines_{k}": f"Lines of the source in {k} elements." for k in KINDS})
