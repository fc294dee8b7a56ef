"""The maintainers' tools as commands of the one click group (``pipeline.cli`` adds
``COMMANDS`` to it): vocabulary, bench (and the two hidden commands its runs call),
lineage-report, lineage-stability and tidy. Each imports its tool when it runs, so
the group starts without loading any of them; their errors are told as every
command's are (``pipeline.cli.Guarded``). The library never imports click: this
module is the command line's, as ``pipeline.cli`` is.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command(short_help="Print the word counts of the official CR documents.")
@click.argument("raw", type=click.Path(path_type=Path, exists=True, file_okay=False), default=Path("raw"))
def vocabulary(raw: Path) -> None:
    """Print the word counts of the official CR documents under RAW.

    The output is the base vocabulary shipped as pipeline/data/vocabulary.txt.
    """
    from pipeline.corpus.clean import word_counts
    from pipeline.run import build

    corpus = build(raw)
    official = {s.source_id for s in corpus.sources if s.format == "cr_document"}
    if not official:  # printed, an empty list would replace the shipped one (make vocabulary)
        raise click.ClickException(f"{raw}: no official Comprehensive Rules document, so no vocabulary")
    counts = word_counts(el.text for el in corpus.elements if el.source_id in official)
    click.echo("# Words of the bundled Comprehensive Rules with their counts:")
    click.echo("# the base vocabulary for splitting glued words. Rebuild: make vocabulary")
    for word, n in sorted(counts.items()):
        click.echo(f"{word} {n}")


@click.command("bench", short_help="Time the job on real and generated releases.")
@click.option("--corpus", type=click.Path(path_type=Path), default=None,
              help="Folder of real releases [default: the checkout's raw/].")
@click.option("--scale", type=int, default=1, show_default=True,
              help="Largest scale, in units of 1x: 1 runs real and 1x, 10 also 10x.")
@click.option("--unit-mb", type=float, default=None, help="The size of 1x [default: 90 MB].")
@click.option("--max-rss-mb", type=float, default=None,
              help="Kill a run whose processes hold more [default: 3/4 of the memory available now].")
@click.option("--timeout", type=float, default=None, help="Kill a run that takes longer (seconds).")
@click.option("--generate-only", is_flag=True,
              help="Write the generated releases of the largest scale into bench/work/generated and stop.")
def bench_command(corpus: Path | None, scale: int, unit_mb: float | None, max_rss_mb: float | None,
                  timeout: float | None, generate_only: bool) -> None:
    """The whole job cold, cached and incremental on the releases in CORPUS, then with
    generated releases to SCALE x 90 MB, beside a bare line scan and Lark parse; results in
    bench/results/latest.json (bench/README.md). A CORPUS not a folder of releases exits 2."""
    from pipeline.tools import bench

    click.echo(bench.benchmark(corpus, scale, unit_mb, max_rss_mb, timeout, generate_only))


@click.command("bench-job", hidden=True)
@click.argument("folders", nargs=3, type=click.Path(path_type=Path), metavar="RAW OUT CACHE")
@click.option("--full", is_flag=True)
def bench_job(folders: tuple[Path, Path, Path], full: bool) -> None:
    """One run of the job in a fresh process, described as JSON (``bench`` runs this)."""
    from pipeline.tools import bench

    click.echo(json.dumps(bench.one_run(*folders, full)))


@click.command("bench-refs", hidden=True)
@click.argument("raw", type=click.Path(path_type=Path))
def bench_refs(raw: Path) -> None:
    """The references' seconds on RAW as JSON (``bench`` runs this)."""
    from pipeline.tools import bench

    click.echo(json.dumps(bench.references(raw)))


@click.command("lineage-report", short_help="Score the lineages against the hand-traced keys.")
@click.argument("out", type=click.Path(path_type=Path), default=Path("out"))
def lineage_report_command(out: Path) -> None:
    """Score the lineages in OUT (default out) against the hand-traced keys
    (tests/data/*_key.csv); count what starts and ends in each release."""
    from pipeline.tools import lineage_report

    click.echo(lineage_report.scored(out))


@click.command("lineage-stability", short_help="Follow the rules again, every other release left out.")
@click.argument("raw", type=click.Path(path_type=Path), default=Path("raw"))
@click.argument("out", type=click.Path(path_type=Path), default=Path("out"))
def stability_command(raw: Path, out: Path) -> None:
    """Follow the rules of the dataset in OUT (default out) again with every other
    release of RAW (default raw, the folder OUT was made from) left out, and list
    the rules whose current number then differs."""
    from pipeline.tools import stability

    click.echo(stability.report(raw, out))


@click.command("tidy", short_help="Remove what the pipeline generated, nothing else.")
@click.argument("outs", nargs=-1, metavar="[OUT]...")
def tidy_command(outs: tuple[str, ...]) -> None:
    """Remove what the pipeline generated here: the folders OUT (default out) as far as
    their marker lists, their leftovers, the parse cache, the benchmark's work, the site's
    files, the bytecode caches. Whatever else is there stays, and is named."""
    from pipeline.tools.tidy import tidy

    for line in tidy(Path.cwd(), list(outs) or ["out"]):
        click.echo(line)


COMMANDS = (vocabulary, bench_command, bench_job, bench_refs, lineage_report_command, stability_command, tidy_command)
