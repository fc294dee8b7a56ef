"""Record the answers of the query commands (``cases.txt``) on a published folder.

    python tests/data/queries/record.py OUT > tests/data/queries/expected.json

Each case runs as a user runs it (``python -m pipeline ...``); the folder's
path in an answer is written ``OUT``. ``tests/query/test_query.py`` holds the
commands to these answers, on the bundled data published afresh.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cases() -> list[tuple[str, list[str], str]]:
    """(the case's line, its arguments, the file it reads on standard input or "")."""
    found = []
    for line in (HERE / "cases.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        stdin = ""
        if line.startswith("<"):
            stdin, line = line[1:].split(" ", 1)
        found.append((line if not stdin else f"<{stdin} {line}", shlex.split(line), stdin))
    return found


def answer(out: Path, args: list[str], stdin: str) -> dict[str, object]:
    feed = (HERE / stdin).read_bytes() if stdin else b""
    done = subprocess.run([sys.executable, "-m", "pipeline", *args, "--out", str(out)], input=feed,
                          capture_output=True, check=False)
    return {"exit": done.returncode, "stdout": done.stdout.decode().replace(str(out), "OUT"),
            "stderr": done.stderr.decode().replace(str(out), "OUT")}


def main() -> None:
    out = Path(sys.argv[1])
    recorded = {line: answer(out, args, stdin) for line, args, stdin in cases()}
    print(json.dumps(recorded, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
