"""One release to the next: the passes of a lineage step, in their order.

One step (``align_pair``) matches the rules of a release with those of its
successor, globally and one to one within the pair:

1. identical wordings (numbers masked, so a renumbered cross-reference is no
   edit), equal numbers paired first when a wording repeats, then numbers
   under the same rule; then rules that kept their first sentence and number,
   and rules cut into themselves and new subrules lettered under them (the
   opening stays under the number); then rules that the release's own
   cross-references place (rules that stayed word for word cite them under a
   new number: ``_cited_as``);
2. the runs between the identical rules that keep their order (a keyword
   inserted shifts a whole block), and the rules of sections paired by title
   (or by the newer release's "(Obsolete)" glossary renames), each paired
   order-preservingly by similarity (a rule split in place goes on in the
   piece that kept its first sentence, word for word if one did, or its
   number and opening); a weak pair, resting on the subset score, must keep
   the longer words of one of the two; a rule moves into a section new in
   the release only from its own chapter;
3. what is left, anywhere in the release (a rule moved to another section),
   by a stricter similarity (the near one in the section where its
   section-mates went, or when the two cite one rule), not by a subset
   match alone unless the two open
   alike; then a rule left over that kept an example no
   other rule has (reworded round it); between these passes, an old rule
   whose words now stand inside a neighbouring new rule that continues
   another lineage is merged there (``_absorbed``), not paired with a looser
   match, nor is one whose examples went into a new rule that continues
   another; a rule whose neighbour moved goes with it when that is closer;
   what is left of a section rewritten in place, at a lower similarity, in
   its own section or in those its rules went to; a rule under its own
   number, unless its subrules went on under another; a keyword's definition
   in its definition; a rule whose unique first sentence opens a new rule
   word for word, in place of one merged in after that opening, or, paired
   with a piece that does not open so, in the free rule that does (in the
   new terms, where July 2009 renamed them); a rule left over in the rule
   that kept its number and opens with what it said, in other words; a rule
   cut into a list of new subrules, in the rule they are lettered under; a
   rule paired with a piece cut from it, in the whole, when that is free and
   closer, and a new rule paired with a part of an old subrule, in the whole
   rule left over that is closer to it;
4. splits (a new rule whose wording lies inside an old one that continued
   elsewhere: ``split_from``), merges (an old rule whose wording lies inside a
   new one that continues another lineage, near it or, every word of it,
   farther off in that section: ``merged_into``), each between
   rules about the same keywords and never from or into a rule that went on
   word for word;
5. in a renumbered release only (July 2009), what is left: a rule and a new
   rule whose first sentences are one in other words, or each other's closest
   by a clear margin, letter by letter, or by the rarer words they share in the
   section its own became (anywhere, closer still, for a rule whose section
   became none), and the one subrule left over under a paired rule with the
   one left under its partner; the rest removed or added.

6. what is still left, anywhere in the release: the one rule that holds clearly
   most of its words, weighted by their rarity (``whereabouts``): continued
   there when that rule is free, merged into it when it continues another.

Last, a subrule paired with a new rule that opens with what its own rule said
is merged there, and the rule goes on in it; and sections that neither title
nor vote paired go where their rules went.

The passes live by family: ``identical``, ``context``, ``kept_numbers``,
``leftovers``, ``openings``, ``pieces`` and ``renumbered``; what they weigh,
and the helpers they share, in ``evidence``; their constants in ``thresholds``.
"""

from __future__ import annotations

from pipeline.lineage.context import _by_context, _vote_sections, sections_by_title
from pipeline.lineage.evidence import Release, Step, Subjects, _Alike, _numbering_kept
from pipeline.lineage.identical import _cited_as, _identical
from pipeline.lineage.kept_numbers import _kept_heads, _same_number, _split_into_subrules
from pipeline.lineage.leftovers import (
    _examples_went_with,
    _leftovers_in_place,
    _moved_with_its_block,
    _same_examples,
    keyword_defined,
)
from pipeline.lineage.openings import _opening_goes_on, _parent_opens, kept_number_opens, opening_over_piece
from pipeline.lineage.pieces import (
    _absorbed,
    _cut_into_a_list,
    _whole_before_part,
    _whole_before_piece,
    splits_and_merges,
)
from pipeline.lineage.renumbered import _closest_letters, _closest_openings, _closest_rare_words, _only_child_left
from pipeline.lineage.whereabouts import _went_to


def align_pair(a: Release, b: Release) -> Step:
    """Match the rules of release ``a`` with those of its successor ``b``."""
    step = Step()
    step.sections = sections_by_title(a, b)
    subjects = Subjects.of(a, b)
    alike = _Alike(a, b, subjects)
    _identical(a, b, step)
    _kept_heads(a, b, step)
    _split_into_subrules(a, b, step)
    _absorbed(a, b, step, subjects)
    _cited_as(a, b, step, subjects)
    _by_context(a, b, step, alike)
    _vote_sections(a, b, step)
    _absorbed(a, b, step, subjects)
    _by_context(a, b, step, alike)
    _same_examples(a, b, step, subjects)
    _absorbed(a, b, step, subjects)
    _examples_went_with(a, b, step)
    _leftovers_in_place(a, b, step, subjects)
    _same_number(a, b, step, subjects)
    _moved_with_its_block(a, b, step)
    keyword_defined(a, b, step)
    _opening_goes_on(a, b, step)
    opening_over_piece(a, b, step)
    kept_number_opens(a, b, step)
    _cut_into_a_list(a, b, step)
    _whole_before_piece(a, b, step)
    _whole_before_part(a, b, step)
    splits_and_merges(a, b, step, subjects)
    if not _numbering_kept(a, b, step):  # July 2009: numbers and sections say little of where a rule went
        _closest_openings(a, b, step, subjects)
        _closest_letters(a, b, step, subjects, alike)
        _closest_rare_words(a, b, step, subjects)
        _only_child_left(a, b, step, subjects)
    _went_to(a, b, step, subjects)
    _parent_opens(a, b, step)
    _vote_sections(a, b, step, last=True)
    return step
