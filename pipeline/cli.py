"""The command line: a thin click shell over the library.

Exit codes: 0 every source ingested, 3 finished with quarantined or suspect sources,
1 failed (nothing published), 2 usage error, 75 another run holds the output.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from pipeline.clean import word_counts
from pipeline.database import search as search_db
from pipeline.job import run_job
from pipeline.package import InvalidOutput
from pipeline.publish import Busy
from pipeline.run import Settings, build
from pipeline.trace import TraceError, trace

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_QUARANTINED, EXIT_BUSY = 0, 1, 2, 3, 75

EXIT_CODES = """Exit codes: 0 all sources ingested; 3 finished, some sources quarantined or
suspect (a self-check failed; see sources.csv); 1 failed, nothing published;
2 usage error; 75 another run is writing the same output folder (try again later)."""


@click.group(help=__doc__)
def main() -> None:
    pass


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
    for problem in result.problems:
        click.echo(problem, err=True)
    report = result.report
    stages = report["stages"]
    if not quiet:
        verb = "unchanged" if result.status == "unchanged" else "published"
        click.echo(
            f"{verb} {out}: {stages['sources']} sources ({stages['sources_parsed']} parsed, "
            f"{stages['sources_quarantined']} quarantined, {stages.get('sources_suspect', 0)} suspect), "
            f"reference {report['reference'] or '-'}"
        )
    if verbose:
        for key, value in stages.items():
            click.echo(f"  {key}: {value}")
        for item in report["outputs"]:
            click.echo(f"  {item['file']}: {item['rows'] if item['rows'] is not None else '-'} rows")
    raise SystemExit(EXIT_QUARANTINED if result.problems else EXIT_OK)


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


@main.command("trace")
@click.argument("number")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True, help="Folder of a published run.")
def trace_command(number: str, out: Path) -> None:
    """Print the history of rule NUMBER (current numbering): each version, its
    number then, and how its wording changed, as a word diff."""
    try:
        for line in trace(out, number):
            click.echo(line)
    except (TraceError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from exc


@main.command("search")
@click.argument("query")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True, help="Folder of a published run.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
def search_command(query: str, out: Path, limit: int) -> None:
    """Full-text search of rules (by current number), glossary and Q&A."""
    path = out / "rules.sqlite"
    if not path.exists():
        raise click.ClickException(f"{path} not found: run `python -m pipeline ingest` first")
    hits = search_db(path, query, limit)
    if not hits:
        click.echo(f"no match for {query!r}")
    for hit in hits:
        label = {"rule": hit.number, "glossary": f"glossary: {hit.title}", "qa": f"Q&A ({hit.number or '-'})"}
        click.echo(f"{label[hit.kind]:<14} {hit.snippet}" + (f"  [{hit.source_id}]" if hit.kind != "rule" else ""))
