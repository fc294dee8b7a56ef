"""Every tuned constant of the lineage package, each with the evidence it rests on.

The similarity floors, margins and bonuses of the lineage steps (``step`` and
the pass families), and those of ``align``, which maps a source that is no
release onto the release it matches. A constant is changed here, against the
hand-traced keys and ``make lineage-report``; the comment beside it says what
it was set on. Similarities are rapidfuzz scores (0-100) of folded wordings;
cosines and shares are 0-1.
"""

from __future__ import annotations

# The lineage steps: one release to the next (``step.align_pair``).

# A rule pairs with a rule at the same place in the other release (between the
# same identical neighbours, or in the same titled section) at this similarity...
MIN_NEAR = 60.0
# ... and with one anywhere else in the release only at this one.
MIN_FAR = 80.0
# How much a subset match (``token_set_ratio``: one wording holds the other's words)
# counts against a straight one (``similarity``; and ``align``'s fuzzy runs, the same weight).
SUBSET_WEIGHT = 0.9
# A rule that kept its number wins a near tie (a split: the piece that kept the number).
SAME_NUMBER_BONUS = 8.0
# A new rule split off an old one, or an old one merged into a new one: the
# shorter wording lies inside the longer one at least this closely.
MIN_CONTAINED = 87.0
MIN_CONTAINED_CHARS = 25
# An old rule inside a new one that continues another lineage was merged there,
# unless a free rule matches it within this much (``_absorbed``).
ABSORBED_MARGIN = 20.0
# An old rule left unpaired whose words stand this much in a longer neighbour merged there.
MIN_ABSORBED = 75.0
# ... and one farther off in their section, when every word of it stands in the longer one.
MIN_ALL_WORDS = 98.0
# A piece split off stands near the rule it came from, and a rule merged away stood near
# the one that took it in: within this many places (``_near``).
NEAR = 3
# Context that makes a pair likelier: the rule kept its place between the same
# identical neighbours, or stayed in (what became of) its section.
GAP_BONUS = 5.0
SECTION_BONUS = 5.0
# A rule split in two goes on in the piece that kept its first sentence (or close to it).
HEAD_BONUS = 5.0
MIN_HEAD = 85.0
MIN_HEAD_WORDS = 8
# ... and, of two that open alike, the one whose first sentence is the same word for word.
SAME_OPENING_BONUS = 2.0
# ... or one whole first sentence of at least this many words opening the other.
MIN_OPENING_WORDS = 6
# An example reworded a little ("no special abilities" -> "no abilities") is this alike.
MIN_SAME_EXAMPLE = 85.0
# Rules left over in the same pair of sections (a rule rewritten in place) pair at this similarity.
MIN_SAME_SECTION = 50.0
MAX_IN_PLACE = 4
# Where the place says less (a renumbered release; the sections a section's rules
# went to, when no title or vote paired it), a rule rewritten in place must also be
# this alike letter by letter; in those sections, among at most MAX_SPREAD new rules.
MIN_SPREAD_LETTERS = 40.0
MAX_SPREAD = 12
# A pair below this similarity, little alike letter by letter, must keep this share of
# the longer words of one of the two (``_say_the_same``).
WEAK_PAIR = 70.0
MIN_WORDS_KEPT = 0.5
# A rule left over under its own number in its own section pairs at this similarity,
# keeping this share of the longer words of one of the two (on raw/, the wrong pairs
# keep 0.08 at most, the right ones 0.19 at least).
MIN_SAME_NUMBER = 40.0
MIN_WORDS_SAME_NUMBER = 0.15
# In a renumbered release, a rule and a new one left over that are each other's
# closest letter by letter, at least this alike and by this much more than any other
# rule left over on either side, are one rule rewritten (``_closest_letters``).
MIN_CLOSEST = 55.0
CLOSEST_MARGIN = 5.0
# ... or by their first sentences, in the section its own became (408.1c and 115.3a: 77.5, the next 51.3).
MIN_OPENING_ALIKE = 70.0
OPENING_MARGIN = 15.0
# ... or by the rarer words they share (``_rare_word_cosines``), at least this
# and this many times the next, in the section its own became.
MIN_RARE_WORDS_COSINE = 0.30
RARE_WORDS_LEAD = 1.5
# ... or, for a rule whose section became none, anywhere at this cosine.
MIN_HOMELESS_COSINE = 0.55
# A rule taken into a longer one after its opening, in other words (2022's 705.1 in 705.2: 86).
MIN_TAKEN_IN = 80.0
# A rule paired with a piece cut from it goes on in a free rule this much closer to it (``_whole_before_piece``).
MIN_WHOLE_GAIN = 10.0
# Sections of keyword abilities (DOMAIN.md: 502.x before July 2009, 702.x after; not the
# keyword actions of 701.x, whose names "cast", "play", "exile" are the words the 2009 rewording changed).
KEYWORD_SECTIONS = ("502.", "702.")

# A source aligned to the release it matches (``align``).

# A rule inside an aligned section maps when its wording is at least this similar.
MIN_RULE_SCORE = 60.0
# An unnumbered paragraph, or a rule whose section has no title, needs more.
MIN_LOOSE_SCORE = 75.0
# A section found by its rules' wording (its title being unknown) needs more still.
MIN_VOTE_SCORE = 80.0
# A paragraph with no exact match is rescored (``fuzz.WRatio``) only against this many
# reference rules, the closest to it by ``fuzz.ratio`` (batched in one ``cdist``). A bound
# on cost that came with the batched shortlists (f251a37), not measured against the keys.
SHORTLIST = 5

# The last pass (``whereabouts``): a rule left over goes on in the one new rule that
# holds at least this share of its words (weighted by rarity) ...
MIN_WENT = 0.7
# ... by this much more than the next best rule. Both set on the ending audit's
# tune half (tests/data/ending_key.csv, part=tune) before its check half was scored.
# There, rules folded into one that already said it hold 0.7-1.0 of their words with a
# lead of 0.29-0.67 (six rows), while three rules the readers found gone (the
# planeswalker uniqueness rule, a reversed shuffle rule, a dropped multiplayer rule)
# hold 0.60-0.66 with leads of 0.24-0.36 in the rule that replaced them; rules that
# went into a rule holding less of their words (0.2-0.6, most of the tune half's
# merges) are left to ending removed: a wrong number is worse than none.
WENT_MARGIN = 0.25
