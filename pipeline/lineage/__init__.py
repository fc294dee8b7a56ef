"""Lineages: every rule followed release by release, and where it is today.

Each dated, complete official release is aligned with the one before it
(neighbouring releases differ by a few percent, so each step is small and
certain); a rule's lineage is the chain of those steps and its canonical
number is where the chain ends in the newest release, or nothing, with the
release where it ended.

Undated or partial sources (FAQ and web pages, truncated copies) never end a
lineage: each is attached to the release whose numbers and wording it shares
most, aligned with that release (``align``), and mapped through its lineages.

The modules, in the order a run meets them:

- ``chain``: the release chain (``chain_of``: one release per date), follow
  the releases (``follow``), the ``Lineage`` records, where each ended, the
  process pool that aligns the steps as the cleaning stage hands over each
  release (``Ahead``);
- ``step``: one release to the next, the order of its passes (``align_pair``);
- the passes by family: ``identical``, ``context``, ``kept_numbers``,
  ``leftovers``, ``openings``, ``pieces``, ``renumbered``;
- ``evidence``: the indexed ``Release``, the ``Step``, ``similarity``,
  ``Subjects`` and the helpers the passes share;
- ``thresholds``: every tuned constant, with the evidence it rests on;
- ``numbering``: the numbering stage (canonical numbers, rule history);
  ``attach`` finds the release a non-release copy belongs to, and ``align``
  maps it through that release.
"""
