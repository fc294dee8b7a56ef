"""The command line: one click group, a thin shell over the library, tools included.

Every command parses its options and calls the library; a library error
(``pipeline.errors``) becomes one ``Error:`` line and the exit code its class
names, told the way ``_TOLD`` says (the one table). The exit codes and what they
mean are ``pipeline.errors.ExitCode`` and ``MEANINGS``; the help is written from
them. Each command imports what it needs when it runs: the job inside
``ingest``, a query's module inside its command, and the maintainers' tools
(``pipeline.tools.commands``) only when one of them is asked for (or the help
lists them), so that a query loads no more than it uses: each is a process of
its own, and its imports were half of its time.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from pipeline import __version__
from pipeline.errors import (
    MEANINGS,
    ArgumentError,
    DatasetError,
    DecodeError,
    ExitCode,
    InvalidOutput,
    Overlap,
    PipelineError,
    SearchError,
    Shrinking,
    TraceError,
)

EXIT_CODES = ("Exit codes: " + "; ".join(f"{int(code)} {meaning}" for code, meaning in MEANINGS.items())
              + f". Only {int(ExitCode.OK)} and {int(ExitCode.QUARANTINED)} publish.")

# How each library error is told (its exit code is its class's, pipeline.errors); the
# first entry the error is an instance of wins. {out}: the folder a command publishes to;
# {where}: the file an OSError names, else {out}.
_TOLD: dict[type[Exception], str] = {
    Overlap: "{exc}: nothing read, nothing published",
    Shrinking: "nothing published, {out} is unchanged: {exc}; --allow-shrink if that is meant",
    InvalidOutput: "nothing published, {out} is unchanged: {where}: {exc}",
    OSError: "nothing published, {out} is unchanged: {where}: {exc}",
    PipelineError: "{exc}",
}


def fail(exc: Exception, out: Path | None = None) -> NoReturn:
    """Print ``exc`` as one ``Error:`` line, as ``_TOLD`` says, and exit with its code."""
    told = next(how for kind, how in _TOLD.items() if isinstance(exc, kind))
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    where = getattr(exc, "filename", None) or out
    click.echo("Error: " + told.format(exc=reason, out=out, where=where), err=True)
    raise SystemExit(exc.exit_code if isinstance(exc, PipelineError) else ExitCode.FAILED)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every cleanup on the way out runs."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Terminated()


class Guarded:
    """For a click command or group: Ctrl-C exits 130 and SIGTERM 143 after
    cleaning up, a library error is told by ``fail``, and an unexpected error
    is one line, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:  # not the main thread
            previous = None
        try:
            return super().invoke(ctx)  # type: ignore[misc]  # the click class it is mixed into
        except KeyboardInterrupt as exc:
            terminated = isinstance(exc, _Terminated)
            click.echo(f"Error: {'terminated' if terminated else 'interrupted'}: nothing more was written; "
                       "a published folder is never left half-written", err=True)
            raise SystemExit(ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except PipelineError as exc:
            fail(exc)
        except Exception as exc:
            if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
                # The reader stopped early (`| head`): what it read was right; end
                # quietly, with nothing left to flush into the closed pipe.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                raise SystemExit(0) from None
            if os.environ.get("PIPELINE_DEBUG"):
                raise
            click.echo(f"Error: unexpected {type(exc).__name__}: {exc}", err=True)
            raise SystemExit(ExitCode.FAILED) from None
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


class _Main(Guarded, click.Group):
    """The command group; the maintainers' tools join it when first looked for."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and _add_tools(self):
            found = super().get_command(ctx, cmd_name)
        return found

    def list_commands(self, ctx: click.Context) -> list[str]:
        _add_tools(self)
        return super().list_commands(ctx)


def _add_tools(group: click.Group) -> bool:
    """Add the maintainers' tools (``pipeline.tools.commands``) to ``group``; False if they were there."""
    from pipeline.tools.commands import COMMANDS

    if all(tool.name in group.commands for tool in COMMANDS):
        return False
    for tool in COMMANDS:
        group.add_command(tool)
    return True


_HELP = f"""Rules dumps in, one canonical dataset out: ingest, query and publish it, and the tools.

{EXIT_CODES} No command prints a traceback: a damaged or missing output is one line
(set PIPELINE_DEBUG=1 to see the traceback of an unexpected error)."""


@click.group(cls=_Main, help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="rules-pipeline", message="%(prog)s %(version)s")
def main() -> None:
    pass


# The lineage commands (trace, resolve, diff) answer from rules.sqlite, made from
# these tables (the columns they key on): each is checked to be as published.
_LINEAGE_TABLES = {
    "lineages.csv": ("lineage_id",), "rule_history.csv": ("lineage_id", "canonical_number", "source_id"),
    "renumber_map.csv": ("source_id", "number_as_written"), "sources.csv": ("source_id",),
}


@contextmanager
def _reading(out: Path) -> Iterator[None]:
    """Check the lineage tables of ``out`` and its database are there, the
    tables with their header, all as they were published (their sizes and
    times in run.json: cheap), then turn a lookup that fails, or a file
    damaged further down, into one line."""
    import csv
    import sqlite3

    from pipeline.query.dataset import DATABASE, unchanged

    for name, columns in _LINEAGE_TABLES.items():
        path = out / name
        _published(path)
        try:
            with path.open(encoding="utf-8", newline="") as fh:
                header = next(csv.reader(fh), [])
        except (OSError, ValueError, csv.Error) as exc:
            raise _damaged(path, exc) from None
        missing = [c for c in columns if c not in header]
        if missing:
            raise _damaged(path, KeyError(missing[0]))
    _published(out / DATABASE)
    # A file cut short or edited since it was published reads as well as a
    # whole one: its size (or, moved since, its sha256) in run.json tells them apart.
    try:
        unchanged(out, [*_LINEAGE_TABLES, DATABASE])
    except DatasetError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        yield
    except ArgumentError as exc:
        raise click.UsageError(str(exc)) from None
    except (TraceError, DatasetError) as exc:
        raise click.ClickException(str(exc)) from None
    except sqlite3.Error as exc:
        raise _damaged(out / DATABASE, exc) from None
    except (OSError, ValueError, csv.Error, LookupError) as exc:
        raise _damaged(out, exc) from None


def _published(path: Path) -> None:
    """Raise the one-line error for an output that is not there."""
    from pipeline.query.dataset import missing

    if not path.exists():
        raise click.ClickException(missing(path))
    if not path.is_file():
        raise click.ClickException(f"{path} is not a file: run `python -m pipeline ingest --full` to rebuild it")


def _damaged(path: Path, exc: BaseException) -> click.ClickException:
    if isinstance(exc, KeyError):
        reason = f"no column {exc.args[0]!r}" if exc.args else "a column is missing"
    else:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    return click.ClickException(
        f"{path} is damaged or unreadable ({reason}): run `python -m pipeline ingest --full` to rebuild it"
    )


# The search hit fields where an empty value means none (printed null by --json).
_NONE_IF_EMPTY = frozenset({"number", "ended", "merged_into"})


def _echo_json(doc: object) -> None:
    click.echo(json.dumps(doc, ensure_ascii=False, indent=1))


def _echo_lines(lines: Iterable[str]) -> None:
    """Lines, each as ``click.echo`` prints one, in one write: an echo a line
    took a diff of a few hundred lines a tenth of its time."""
    every = list(lines)
    if every:
        click.echo("\n".join(every))


class ProgressBar:
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
            self.close()

    def close(self) -> None:
        """End the bar's line and show the cursor again (the bar hides it), also when
        the run stops half-way (Ctrl-C, an error): what is printed next starts a line."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _setting(name: str) -> Callable[[], int]:
    """A limit's default, read from ``Settings`` when needed: at start it would load the job."""
    def default() -> int:
        from pipeline.ingest.read import Settings
        return int(getattr(Settings(), name))
    return default


class _Setting(click.Option):
    """An option whose default is a ``_setting``: the help shows its value, not "(dynamic)"."""

    def get_default(self, ctx: click.Context, call: bool = True) -> Any:
        return super().get_default(ctx, call=True)


@main.command(epilog=EXIT_CODES, short_help="Ingest RAW and publish the dataset to OUT.")
@click.option("--raw", type=click.Path(path_type=Path, file_okay=False), default=Path("raw"),
              show_default=True, help="Folder of raw dumps (read recursively).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True,
              help="Folder the dataset is published to (replaced whole): new, empty, or one the pipeline wrote.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Parallel parser processes [default: number of cores].")
@click.option("--full", is_flag=True, help="Ignore the cache and the unchanged-input shortcut; rebuild all.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Parse cache [default: .cache/ beside OUT]; "
                   "every run prunes it to what the last published run used.")
@click.option("--max-file-bytes", cls=_Setting, type=click.IntRange(min=1), default=_setting("max_file_bytes"),
              show_default=True, help="Larger files are quarantined.")
@click.option("--max-line-chars", cls=_Setting, type=click.IntRange(min=1), default=_setting("max_line_chars"),
              show_default=True, help="Files with a longer line are quarantined.")
@click.option("--allow-shrink", is_flag=True,
              help="Publish even when the dataset shrinks far below the published one (sources or rules gone).")
@click.option("--history", type=click.Path(path_type=Path, exists=True, file_okay=False), default=None,
              help="A dataset published earlier to map dumps through when RAW lacks their releases "
                   "[default: the history the package ships].")
@click.option("-q", "--quiet", is_flag=True, help="Print only problems (for cron).")
@click.option("-v", "--verbose", is_flag=True, help="Print per-stage counts.")
def ingest(
    raw: Path, out: Path, jobs: int | None, full: bool, cache_dir: Path | None, max_file_bytes: int,
    max_line_chars: int, allow_shrink: bool, history: Path | None, quiet: bool, verbose: bool,
) -> None:
    """Ingest every file under RAW and publish the dataset to OUT."""
    from dataclasses import replace

    from pipeline.ingest.read import Settings
    from pipeline.job import run_job
    from pipeline.publish.folder import check_folders

    if not raw.is_dir():
        raise click.UsageError(f"--raw {raw}: {'not a folder' if raw.exists() else 'no such folder'}")
    settings = replace(Settings(), max_file_bytes=max_file_bytes, max_line_chars=max_line_chars)
    if jobs:
        settings = replace(settings, jobs=jobs)
    cache = cache_dir if cache_dir is not None else out.parent / ".cache" / out.name
    bar = ProgressBar(not quiet and sys.stderr.isatty())
    try:
        check_folders(raw, out, cache)
        with bar:
            result = run_job(raw, out, settings, full=full, cache_dir=cache, progress=bar, allow_shrink=allow_shrink,
                             history=history)
    except (PipelineError, OSError) as exc:
        fail(exc, out)
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
            + (f" (history {report['history']})" if report.get("history") else "")
        )
    if verbose:
        for key, value in stages.items():
            click.echo(f"  {key}: {value}")
        for item in report["outputs"]:
            click.echo(f"  {item['file']}: {item['rows'] if item['rows'] is not None else '-'} rows")
    raise SystemExit(ExitCode.QUARANTINED if result.problems else ExitCode.OK)


_OUT = click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
                    show_default=True, help="Folder of a published run.")
_SOURCE = click.option("--source", default="", help="The number as this source (a source id) wrote it.")
def _date_option(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from pipeline.query.dataset import checked_date

    try:
        return checked_date(value) if value else value
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _source_or_date(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """A source id, or a date (YYYY-MM-DD): one shaped like a date must be a real one."""
    from pipeline.query.diff import date_shaped

    if date_shaped(value) and value[:4].isdigit():
        return _date_option(ctx, param, value)
    return value


_AS_OF = click.option("--as-of", default="", metavar="YYYY-MM-DD", callback=_date_option,
                      help="The number as the release in effect on this date wrote it.")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _one_of(source: str, as_of: str) -> None:
    if source and as_of:
        raise click.UsageError("give --source ID or --as-of YYYY-MM-DD, not both")


def _checked_number(number: str | None, text_hint: str = "") -> None:
    """A usage error for a NUMBER that is empty or not one rule or section number."""
    if number is None:
        return
    import re

    from pipeline import numbers
    from pipeline.query.dataset import cited_number

    cited = cited_number(number)
    if not cited:  # "", " ", ".", "CR ."
        raise click.UsageError("NUMBER is empty: give a rule or section number (e.g. 702.19a)")
    if not re.fullmatch(numbers.CANONICAL, cited):  # "see rule 502.68a", "702.42a 702.43a"
        raise click.UsageError(f"NUMBER {number!r} is not one rule or section number (e.g. 702.19a, "
                               f"\"CR 702.19a\" or 702){text_hint}")


@main.command("trace", short_help="The life of one rule, version by version.")
@click.argument("number")
@_OUT
@_SOURCE
@_AS_OF
@_JSON
def trace_command(number: str, out: Path, source: str, as_of: str, as_json: bool) -> None:
    """Print the life of rule NUMBER: each version, its number then, how its
    wording changed (a word diff), and where it ended if it did. NUMBER is a
    current number, or an old one with --source or --as-of, or a section."""
    from pipeline.query.trace import trace, trace_json

    _checked_number(number)
    _one_of(source, as_of)
    with _reading(out):
        if as_json:
            click.echo(json.dumps(trace_json(out, number, source, as_of), ensure_ascii=False, indent=1))
            return
        lines = list(trace(out, number, source, as_of))
    _echo_lines(lines)


@main.command("resolve", short_help="What an old rule citation is now.")
@click.argument("number", required=False)
@click.option("--file", "text_file", type=click.File("rb"),
              help="Resolve every rule citation in this text (- for standard input; any encoding a release "
                   "comes in).")
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
    from pipeline.query.trace import describe_resolved, resolve, resolve_text

    _checked_number(number, ": to resolve every citation in a text, give it with --file (- for standard input)")
    if number and text_file:
        raise click.UsageError("give a NUMBER or --file, not both")
    if not number and not text_file:
        raise click.UsageError("give a NUMBER (e.g. \"CR 502.32a\") or --file")
    if not source and not as_of:
        raise click.UsageError("say where the number comes from: --source ID or --as-of YYYY-MM-DD")
    _one_of(source, as_of)
    with _reading(out):
        if number:
            found = resolve(out, number, source, as_of)
            click.echo(json.dumps(found, ensure_ascii=False, indent=1) if as_json else describe_resolved(found))
            return
        results = resolve_text(out, _text_of(text_file), source, as_of)
    if not results:
        click.echo(f"no rule citations found in {text_file.name}", err=True)
    if as_json:
        click.echo(json.dumps(results, ensure_ascii=False, indent=1))
    else:
        for found in results:
            click.echo(f"line {found['line']}: " + describe_resolved(found))
    if any(r["status"] != "same" for r in results):
        sys.exit(ExitCode.QUARANTINED)


def _text_of(file: Any) -> str:
    """A text given with --file, read as a release is (UTF-8, UTF-16, a code page, ...)."""
    from pipeline.ingest.decode import decode, sniff_binary  # ftfy and the code pages: only for --file

    try:
        data = file.read()
        binary = sniff_binary(data)
        if binary:
            raise DecodeError(f"not text: {binary}")
        return decode(data).text
    except (OSError, DecodeError) as exc:
        raise click.ClickException(f"{file.name}: cannot be read as text ({exc})") from None


@main.command("diff", short_help="What changed between two releases, rule by rule.")
@click.argument("old", callback=_source_or_date)
@click.argument("new", callback=_source_or_date)
@click.option("--section", default="", help="Only this section (e.g. 702.42).")
@_OUT
@_JSON
def diff_command(old: str, new: str, section: str, out: Path, as_json: bool) -> None:
    """What changed from OLD to NEW (source ids, or dates meaning the release in
    effect then): rules added, removed, moved, edited, moved+edited, split and
    merged, matched through their lineages, with word diffs, by section."""
    from pipeline.query.diff import describe as describe_diff
    from pipeline.query.diff import diff

    with _reading(out):
        result = diff(out, old, new, section)
    if as_json:
        _echo_json(result)
        return
    _echo_lines(describe_diff(result))


@main.command("search", short_help="Full-text search of rules, glossary and Q&A.")
@click.argument("query")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True, help="Folder of a published run.")
@click.option("--limit", type=click.IntRange(min=1, max=1_000_000), default=20, show_default=True)
@click.option("--release", metavar="ID", default=None,
              help="Search only this source (a source_id), numbered as it numbered them.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list of the hits.")
def search_command(query: str, out: Path, limit: int, release: str | None, as_json: bool) -> None:
    """Full-text search of rules, glossary and Q&A: the current rules (the
    reference's) first, then older wordings. A word ending in * is a prefix
    (umbr*); accents are optional. A number (702.42, CR 702.42a) lists the
    rules so numbered, and under it, in rule order."""
    import sqlite3
    from dataclasses import asdict

    from pipeline.query.search import number_query
    from pipeline.query.search import search as search_db

    if not query.strip():
        raise click.BadParameter("give words or a rule number to search for", param_hint="QUERY")
    path = out / "rules.sqlite"
    _published(path)
    try:
        hits = search_db(path, query, limit, release)
    except SearchError as exc:
        raise click.ClickException(str(exc)) from exc
    except (sqlite3.Error, OSError) as exc:
        raise _damaged(path, exc) from None
    if as_json:
        # None is null, as resolve and diff say it: no current number, not ended.
        _echo_json([{k: v if v != "" or k not in _NONE_IF_EMPTY else None for k, v in asdict(hit).items()}
                    for hit in hits])
        return
    if not hits and (number := number_query(query)) and release:
        click.echo(f"no rule {number} in {release}")
    elif not hits and number:
        click.echo(f"no rule {number} in the current rules; an old number means something else in each release: "
                   f"`resolve {number} --as-of YYYY-MM-DD` (or --source ID) says what it is now")
    elif not hits:
        hint = "" if "*" in query else " (a word ending in * matches as a prefix: umbr*)"
        click.echo(f"no match for {query!r}{hint}")
    for hit in hits:
        number = hit.number or hit.number_as_written
        if hit.kind == "rule" and hit.number_as_written != hit.number:
            # Its number then, and now: or where its content went, or ? for a rule never mapped.
            now = hit.number or (f"merged into {hit.merged_into}" if hit.merged_into else hit.ended or "?")
            number = f"{hit.number_as_written} → {now}"
        label = {"rule": number, "glossary": f"glossary: {hit.title}", "qa": f"Q&A ({hit.number or '-'})"}
        where = "" if hit.current and hit.kind == "rule" and not release else f"  [{hit.source_id}]"
        click.echo(f"{label[hit.kind]:<14} {' '.join(hit.snippet.split())}{where}")  # one hit, one line


@main.command("site", short_help="Write a static, offline site of the dataset.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True, help="Folder of a published run (read only).")
@click.option("--dest", type=click.Path(path_type=Path, file_okay=False), default=Path("site"),
              show_default=True, help="Folder the site is written to (replaced whole; only a site this "
              "command wrote is ever replaced).")
@click.option("--raw", type=click.Path(path_type=Path, file_okay=False), default=Path("raw"),
              show_default=True, help="The input folder: the site is never written inside it.")
def site_command(out: Path, dest: Path, raw: Path) -> None:
    """Write a static, offline, hyperlinked site of the published dataset in OUT to DEST:
    a page per release and per copy, a page per rule lineage, change pages, search,
    a comparison of any two releases and the run report (run.html)."""
    from pipeline.site.build import build_site

    try:
        result = build_site(out, dest, raw)
    except OSError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"wrote {dest}: {result.pages} pages ({result.releases} releases, {result.dumps} other copies, "
        f"{result.lineages} lineages, {result.change_pages} change pages), {result.bytes / 1e6:.1f} MB "
        f"in {result.seconds:.1f} s; open {dest / 'index.html'}"
    )
    if result.unresolved_xrefs:
        click.echo(f"{result.unresolved_xrefs} cross-references name a rule that exists nowhere; shown unlinked")

