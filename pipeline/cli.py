"""The command line: a thin click shell over the library.

Exit codes: 0 every source ingested, 3 finished with quarantined sources,
1 failed (nothing written), 2 usage error.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from pipeline import emit
from pipeline.clean import word_counts
from pipeline.trace import TraceError, trace
from pipeline.run import Settings, build

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_QUARANTINED = 0, 1, 2, 3


@click.group(help=__doc__)
def main() -> None:
    pass


@main.command(epilog="Exit codes: 0 all sources ok, 3 some quarantined, 1 failed, 2 usage error.")
@click.option("--raw", type=click.Path(path_type=Path, file_okay=False), default=Path("raw"),
              show_default=True, help="Folder of raw dumps (read recursively).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True, help="Folder the tables are written to.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Parallel parser processes [default: number of cores].")
@click.option("--max-file-bytes", type=click.IntRange(min=1), default=Settings().max_file_bytes,
              show_default=True, help="Larger files are quarantined.")
@click.option("--max-line-chars", type=click.IntRange(min=1), default=Settings().max_line_chars,
              show_default=True, help="Files with a longer line are quarantined.")
@click.option("-q", "--quiet", is_flag=True, help="Print only problems.")
def ingest(raw: Path, out: Path, jobs: int | None, max_file_bytes: int, max_line_chars: int, quiet: bool) -> None:
    """Ingest every file under RAW and write the contract's tables to OUT."""
    if not raw.is_dir():
        raise click.UsageError(f"--raw {raw}: no such folder")
    settings = replace(Settings(), max_file_bytes=max_file_bytes, max_line_chars=max_line_chars)
    if jobs:
        settings = replace(settings, jobs=jobs)
    try:
        corpus = build(raw, settings)
        counts = emit.write(corpus, out)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc}") from exc
    bad = [s for s in corpus.sources if s.status != "ok"]
    for src in bad:
        click.echo(f"quarantined: {src.error}", err=True)
    if not quiet:
        click.echo(f"{len(corpus.sources)} sources ({len(bad)} quarantined), reference {corpus.reference or '-'}")
        for name, n in counts.items():
            click.echo(f"  {out / name}: {n} rows")
    raise SystemExit(EXIT_QUARANTINED if bad else EXIT_OK)


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
