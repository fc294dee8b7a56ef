"""Every exception the pipeline raises to its callers, and the exit code each means.

Each is a ``PipelineError`` and also the built-in exception it has always been
(``except ValueError`` still catches a ``DatasetError``). ``exit_code`` is what
the command line exits with when one reaches it (``pipeline.cli`` maps them in
one table); the library itself never exits. The exit codes are defined here
once, with what each means, and the CLI's help is written from them.

Standard library only: ``make clean`` and ``import pipeline`` load this module.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class ExitCode(IntEnum):
    """The exit codes of ``python -m pipeline``; nothing is published unless OK or QUARANTINED."""

    OK = 0
    FAILED = 1
    USAGE = 2
    QUARANTINED = 3
    SHRINK = 65  # sysexits' EX_DATAERR
    NOT_OURS = 73  # EX_CANTCREAT
    BUSY = 75  # EX_TEMPFAIL: try again later
    INTERRUPTED = 130  # 128 + SIGINT
    TERMINATED = 143  # 128 + SIGTERM


# What each code means, as the help of the commands that publish says it.
MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "all sources ingested",
    ExitCode.QUARANTINED: "finished, some sources quarantined or suspect (a self-check failed; see sources.csv)",
    ExitCode.FAILED: "failed, nothing published",
    ExitCode.USAGE: "usage error (also: --out and --raw overlap)",
    ExitCode.BUSY: "another run is writing the same output folder (try again later)",
    ExitCode.SHRINK: "refused, the dataset would shrink far below the published one (--allow-shrink)",
    ExitCode.NOT_OURS: "refused, --out holds files the pipeline did not write",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
    ExitCode.TERMINATED: "terminated (SIGTERM)",
}


class PipelineError(Exception):
    """Anything the pipeline refuses or fails at; the message names the file (and line) where it can."""

    exit_code: ClassVar[ExitCode] = ExitCode.FAILED


# -- reading one source: the job quarantines the source and goes on (exit 3) -------------------

class Quarantine(PipelineError):
    """A source that cannot be ingested; the message names the file and line."""

    exit_code = ExitCode.QUARANTINED


class DecodeError(PipelineError, ValueError):
    """The bytes are not text in any encoding the pipeline reads."""

    exit_code = ExitCode.QUARANTINED


class ParseError(PipelineError, ValueError):
    """A source could not be parsed; names the file, line and column."""

    exit_code = ExitCode.QUARANTINED

    def __init__(self, source: str, line: int, column: int, context: str) -> None:
        super().__init__(f"{source}:{line}:{column}: cannot parse near {context!r}")
        self.source, self.line, self.column, self.context = source, line, column, context


# -- publishing: nothing is published, the output folder is left as it was ---------------------

class Overlap(PipelineError, ValueError):
    """The input and output folders overlap."""

    exit_code = ExitCode.USAGE


class Busy(PipelineError, RuntimeError):
    """Another run holds the lock on this output folder."""

    exit_code = ExitCode.BUSY


class ForeignOutput(PipelineError, RuntimeError):
    """The output folder holds files this pipeline did not write."""

    exit_code = ExitCode.NOT_OURS


class Shrinking(PipelineError, RuntimeError):
    """The run would publish far less than the published run; nothing was published."""

    exit_code = ExitCode.SHRINK


class InvalidOutput(PipelineError, ValueError):
    """Output that fails its own schema: nothing is published."""


# -- reading a published folder ------------------------------------------------------------------

class DatasetError(PipelineError, ValueError):
    """A published folder that is missing, incomplete or damaged; the message names the file."""


class ArgumentError(PipelineError, ValueError):
    """Arguments each valid alone but wrong together (the newer release given first): a usage error."""

    exit_code = ExitCode.USAGE


class TraceError(PipelineError, LookupError):
    """The number cannot be found (or not told apart) in the published dataset."""


class SearchError(PipelineError, LookupError):
    """A search that cannot run: an unknown release, a database of another version."""


class SiteError(PipelineError):
    """The published folder cannot be read as a dataset (names the file and, where it applies, the line)."""


# -- the tools -----------------------------------------------------------------------------------

class CorpusError(PipelineError, ValueError):
    """A folder the benchmark cannot time: not a folder of releases, or one it rewrites as it runs."""

    exit_code = ExitCode.USAGE
