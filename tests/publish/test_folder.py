"""The output folder's safety: a staging folder's marker appears whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.publish import folder


def test_a_marker_appears_with_its_text(tmp_path: Path) -> None:
    folder.write_whole(tmp_path / "m.marker", "rules-pipeline staging folder of process 1\n")
    assert (tmp_path / "m.marker").read_text("utf-8") == "rules-pipeline staging folder of process 1\n"
    assert os.listdir(tmp_path) == ["m.marker"]  # nothing else made on the way
    folder.write_whole(tmp_path / "m.marker", "again\n")  # a name already taken: written over, as before
    assert (tmp_path / "m.marker").read_text("utf-8") == "again\n"


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="the marker is written the plain way here")
def test_a_run_killed_as_it_writes_its_marker_leaves_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped as the text is written (a kill in that moment), no file is left: a
    plain write left an empty marker that no later run could read, and so remove."""
    def stopped(fd: int, data: bytes) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "write", stopped)
    with pytest.raises(KeyboardInterrupt):
        folder.write_whole(tmp_path / "m.marker", "rules-pipeline staging folder of process 1\n")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []
