"""The command line: a thin click shell over the library.

Exit codes: 0 every source ingested, 3 finished with quarantined sources,
1 failed (nothing published), 2 usage error, 75 another run holds the output.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import click

from pipeline import __version__
from pipeline.clean import word_counts
from pipeline.database import SearchError
from pipeline.database import search as search_db
from pipeline.diff import describe as describe_diff
from pipeline.diff import diff
from pipeline.job import run_job
from pipeline.package import InvalidOutput
from pipeline.publish import Busy
from pipeline.run import Settings, build
from pipeline.trace import TraceError, describe_resolved, resolve, resolve_text, trace, trace_json

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_QUARANTINED, EXIT_BUSY = 0, 1, 2, 3, 75

EXIT_CODES = """Exit codes: 0 all sources ingested; 3 finished, some sources quarantined (see
sources.csv); 1 failed, nothing published; 2 usage error; 75 another run is
writing the same output folder (try again later)."""


@click.group(help=__doc__)
@click.version_option(__version__, "--version", prog_name="rules-pipeline", message="%(prog)s %(version)s")
def main() -> None:
    pass


def _echo_json(doc: object) -> None:
    click.echo(json.dumps(doc, ensure_ascii=False, indent=1))


class _Bar:
    """A progress bar on a terminal; silent under cron, in tests and with -q."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=f"{stage:<8}", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)
        if done >= total:
            self.bar.__exit__(None, None, None)
            self.bar = None


@main.command(epilog=EXIT_CODES)
@click.option("--raw", type=click.Path(path_type=Path, file_okay=False), default=Path("raw"),
              show_default=True, help="Folder of raw dumps (read recursively).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True, help="Folder the dataset is published to (replaced whole).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Parallel parser processes [default: number of cores].")
@click.option("--full", is_flag=True, help="Ignore the cache and the unchanged-input shortcut; rebuild all.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Parse cache [default: .cache/ beside OUT].")
@click.option("--max-file-bytes", type=click.IntRange(min=1), default=Settings().max_file_bytes,
              show_default=True, help="Larger files are quarantined.")
@click.option("--max-line-chars", type=click.IntRange(min=1), default=Settings().max_line_chars,
              show_default=True, help="Files with a longer line are quarantined.")
@click.option("-q", "--quiet", is_flag=True, help="Print only problems (for cron).")
@click.option("-v", "--verbose", is_flag=True, help="Print per-stage counts.")
def ingest(
    raw: Path, out: Path, jobs: int | None, full: bool, cache_dir: Path | None, max_file_bytes: int,
    max_line_chars: int, quiet: bool, verbose: bool,
) -> None:
    """Ingest every file under RAW and publish the dataset to OUT."""
    if not raw.is_dir():
        raise click.UsageError(f"--raw {raw}: no such folder")
    settings = replace(Settings(), max_file_bytes=max_file_bytes, max_line_chars=max_line_chars)
    if jobs:
        settings = replace(settings, jobs=jobs)
    cache = cache_dir if cache_dir is not None else out.parent / ".cache" / out.name
    bar = _Bar(not quiet and sys.stderr.isatty())
    try:
        result = run_job(raw, out, settings, full=full, cache_dir=cache, progress=bar)
    except Busy as exc:
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(EXIT_BUSY) from None
    except (OSError, InvalidOutput) as exc:
        where = getattr(exc, "filename", None) or out
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        click.echo(f"Error: nothing published, {out} is unchanged: {where}: {reason}", err=True)
        raise SystemExit(EXIT_FAILED) from None
    for problem in result.quarantined:
        click.echo(f"quarantined: {problem}", err=True)
    report = result.report
    stages = report["stages"]
    if not quiet:
        verb = "unchanged" if result.status == "unchanged" else "published"
        click.echo(
            f"{verb} {out}: {stages['sources']} sources ({stages['sources_parsed']} parsed, "
            f"{stages['sources_quarantined']} quarantined), reference {report['reference'] or '-'}"
        )
    if verbose:
        for key, value in stages.items():
            click.echo(f"  {key}: {value}")
        for item in report["outputs"]:
            click.echo(f"  {item['file']}: {item['rows'] if item['rows'] is not None else '-'} rows")
    raise SystemExit(EXIT_QUARANTINED if result.quarantined else EXIT_OK)


@main.command()
@click.argument("raw", type=click.Path(path_type=Path, exists=True, file_okay=False), default=Path("raw"))
def vocabulary(raw: Path) -> None:
    """Print the word counts of the official CR documents under RAW.

    The output is the base vocabulary shipped as pipeline/data/vocabulary.txt.
    """
    corpus = build(raw)
    official = {s.source_id for s in corpus.sources if s.format == "cr_document"}
    counts = word_counts(el.text for el in corpus.elements if el.source_id in official)
    click.echo("# Words of the bundled Comprehensive Rules with their counts:")
    click.echo("# the base vocabulary for splitting glued words. Rebuild: make vocabulary")
    for word, n in sorted(counts.items()):
        click.echo(f"{word} {n}")


_OUT = click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
                    show_default=True, help="Folder of a published run.")
_SOURCE = click.option("--source", default="", help="The number as this source (a source id) wrote it.")
_AS_OF = click.option("--as-of", default="", metavar="YYYY-MM-DD",
                      help="The number as the release in effect on this date wrote it.")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


@main.command("trace")
@click.argument("number")
@_OUT
@_SOURCE
@_AS_OF
@_JSON
def trace_command(number: str, out: Path, source: str, as_of: str, as_json: bool) -> None:
    """Print the life of rule NUMBER: each version, its number then, how its
    wording changed (a word diff), and where it ended if it did. NUMBER is a
    current number, or an old one with --source or --as-of, or a section."""
    try:
        if as_json:
            click.echo(json.dumps(trace_json(out, number, source, as_of), ensure_ascii=False, indent=1))
            return
        for line in trace(out, number, source, as_of):
            click.echo(line)
    except TraceError as exc:
        raise click.ClickException(str(exc)) from exc


@main.command("resolve")
@click.argument("number", required=False)
@click.option("--file", "text_file", type=click.File(encoding="utf-8", errors="replace"),
              help="Resolve every rule citation in this text (- for standard input).")
@_OUT
@_SOURCE
@_AS_OF
@_JSON
def resolve_command(number: str | None, text_file: Any, out: Path, source: str, as_of: str, as_json: bool) -> None:
    """What an old citation is now: NUMBER (e.g. "CR 502.32a") as --source ID or
    the release in effect --as-of a date cited it -> its current number, its
    status (same, moved, edited, moved+edited, split, merged, removed), the
    release where that happened, and its chain of numbers. With --file, every
    citation in a text; exit 0 when all are current, 3 when some are not."""
    if bool(number) == bool(text_file):
        raise click.UsageError("give a NUMBER or --file, not both")
    if bool(source) == bool(as_of):
        raise click.UsageError("say where the number comes from: --source ID or --as-of YYYY-MM-DD")
    try:
        if number:
            found = resolve(out, number, source, as_of)
            click.echo(json.dumps(found, ensure_ascii=False, indent=1) if as_json else describe_resolved(found))
            return
        results = resolve_text(out, text_file.read(), source, as_of)
    except TraceError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(results, ensure_ascii=False, indent=1))
    else:
        for found in results:
            click.echo(f"line {found['line']}: " + describe_resolved(found))
    if any(r["status"] != "same" for r in results):
        sys.exit(EXIT_QUARANTINED)


@main.command("diff")
@click.argument("old")
@click.argument("new")
@click.option("--section", default="", help="Only this section (e.g. 702.42).")
@_OUT
@_JSON
def diff_command(old: str, new: str, section: str, out: Path, as_json: bool) -> None:
    """What changed from OLD to NEW (source ids, or dates meaning the release in
    effect then): rules added, removed, moved, edited, moved+edited, split and
    merged, matched through their lineages, with word diffs, by section."""
    try:
        result = diff(out, old, new, section)
    except TraceError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(result["changes"], ensure_ascii=False, indent=1))
        return
    for line in describe_diff(result):
        click.echo(line)


@main.command("search")
@click.argument("query")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True, help="Folder of a published run.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--release", metavar="ID", default=None,
              help="Search only this source (a source_id), numbered as it numbered them.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list of the hits.")
def search_command(query: str, out: Path, limit: int, release: str | None, as_json: bool) -> None:
    """Full-text search of rules, glossary and Q&A: the current rules (the
    reference's) first, then older wordings. A word ending in * is a prefix
    (umbr*); accents are optional."""
    path = out / "rules.sqlite"
    if not path.exists():
        raise click.ClickException(f"{path} not found: run `python -m pipeline ingest` first")
    try:
        hits = search_db(path, query, limit, release)
    except SearchError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        _echo_json([asdict(hit) for hit in hits])
        return
    if not hits:
        hint = "" if "*" in query else " (a word ending in * matches as a prefix: umbr*)"
        click.echo(f"no match for {query!r}{hint}")
    for hit in hits:
        number = hit.number or hit.number_as_written
        if hit.kind == "rule" and hit.number_as_written != hit.number:
            number = f"{hit.number_as_written} → {hit.number or '?'}"  # its number then, and now (? unmapped)
        label = {"rule": number, "glossary": f"glossary: {hit.title}", "qa": f"Q&A ({hit.number or '-'})"}
        where = "" if hit.current and hit.kind == "rule" and not release else f"  [{hit.source_id}]"
        click.echo(f"{label[hit.kind]:<14} {hit.snippet}{where}")
