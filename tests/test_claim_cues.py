"""The claim checker's rules one by one (bargain.analysis.claim_cues, claim_cancellers): every cue reads the messages
it exists for and leaves its near misses alone; every canceller cancels its examples and keeps its own; no pattern
holds an alternative twice. Like Duckling's corpus and negative corpus, beside each rule."""

from __future__ import annotations

import re

import pytest

try:
    from re import _parser as sre_parse  # Python 3.11+
except ImportError:  # pragma: no cover
    import sre_parse

from bargain.analysis import claim_cancellers, claim_words
from bargain.analysis import claim_cues as cues
from bargain.analysis.claim_cancellers import FINAL_CANCELLERS, LIMIT_CANCELLERS, LIMIT_EXCEPTIONS
from bargain.analysis.claims import extract_claims, readings
from benchmarks.claims import example_alternatives, rule_counts

FINAL_CUES = frozenset(cue.name for cue in cues.CUES if cue.side == "sentence")


def _fires(name: str, message: str) -> bool:
    """Whether the cue `name` finds a price its clause asserts in `message`, read without a speaker's side."""
    return any(r.cue == name and r.asserted for r in readings(message, None))


def test_every_cue_has_a_unique_name_two_examples_and_a_near_miss():
    names = [cue.name for cue in cues.CUES]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    thin = [cue.name for cue in cues.CUES if len(set(cue.fires)) < 2 or not cue.misses]
    assert not thin, f"cues without two examples and a near miss: {thin}"


@pytest.mark.parametrize("name, message", [(cue.name, m) for cue in cues.CUES for m in cue.fires])
def test_a_cue_reads_its_examples(name, message):
    assert _fires(name, message), (
        f"{name} does not fire on {message!r}: {[(r.cue, r.cancelled_by) for r in readings(message, None)]}"
    )


@pytest.mark.parametrize("name, message", [(cue.name, m) for cue in cues.CUES for m in cue.misses])
def test_a_cue_leaves_its_near_misses(name, message):
    assert not _fires(name, message)


def _top_level(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern ("a|b(?:c|d)" has two), read from its text: the parser flattens a
    non-capturing group into its parent, so its tree cannot tell them apart."""
    found, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 2 if pattern[i + 1 : i + 2] == "]" else 3 if pattern[i + 1 : i + 3] == "^]" else 1
            continue
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            found.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*found, pattern[start:]]


@pytest.mark.parametrize("cue", cues.CUES, ids=[cue.name for cue in cues.CUES])
def test_a_cue_lists_its_alternatives_one_by_one(cue):
    """Each listed alternative is one: none hides a top-level "|" of its own."""
    assert [_top_level(alt) for alt in cue.alternatives] == [[alt] for alt in cue.alternatives], cue.name
    assert cue.pattern.pattern == "|".join(cue.alternatives)


def test_the_top_level_split_leaves_groups_and_classes_whole():
    assert _top_level(r"a|b(?:c|d)|[|]|\|") == ["a", "b(?:c|d)", "[|]", "\\|"]


SEVERAL = [cue for cue in cues.CUES if len(cue.alternatives) > 1]


@pytest.mark.parametrize("cue", SEVERAL, ids=[cue.name for cue in SEVERAL])
def test_every_alternative_of_a_cue_reads_one_of_its_examples(cue):
    """An alternative no example of its cue reads is untested: give it an example, or drop it."""
    shown = example_alternatives(cue.name, cue.fires)
    unexampled = [alt for i, alt in enumerate(cue.alternatives) if i not in shown]
    assert not unexampled, f"{cue.name}: no example of the cue is read by {unexampled}"


def test_the_alternative_check_finds_an_unexampled_alternative():
    cue = next(cue for cue in cues.CUES if cue.name == "refuse-hi")
    assert len(example_alternatives(cue.name, cue.fires[:1])) == 1 < len(cue.alternatives)


def _cancelled_by(rule: str, final: bool, role: str, message: str) -> bool:
    """Whether `rule` (a final-offer canceller when `final`) cancels a cue in `message` said by `role`."""
    return any(r.cancelled_by == rule and (r.cue in FINAL_CUES) == final for r in readings(message, role))


CANCELLERS = [
    (rule, final)
    for final, rules in ((False, LIMIT_EXCEPTIONS + LIMIT_CANCELLERS), (True, FINAL_CANCELLERS))
    for rule in rules
]


def test_every_canceller_has_a_unique_name_and_examples_both_ways():
    for rules in (LIMIT_EXCEPTIONS + LIMIT_CANCELLERS, FINAL_CANCELLERS):
        assert len({rule.name for rule in rules}) == len(rules)
    assert all(rule.cancels and rule.keeps for rule, _ in CANCELLERS)


@pytest.mark.parametrize(
    "rule, final, role, message",
    [(rule.name, final, role, m) for rule, final in CANCELLERS for role, m in rule.cancels],
)
def test_a_canceller_cancels_its_examples(rule, final, role, message):
    assert _cancelled_by(rule, final, role, message), f"{[(r.cue, r.cancelled_by) for r in readings(message, role)]}"


@pytest.mark.parametrize(
    "rule, final, role, message", [(rule.name, final, role, m) for rule, final in CANCELLERS for role, m in rule.keeps]
)
def test_a_canceller_keeps_what_it_must_not_cancel(rule, final, role, message):
    assert not _cancelled_by(rule, final, role, message) and extract_claims(message, role), (
        f"{[(r.cue, r.cancelled_by) for r in readings(message, role)]}"
    )


def _repeats(tree: sre_parse.SubPattern) -> list[str]:
    """The alternatives that occur twice in one alternation anywhere in a parsed pattern."""
    found = []
    for op, arg in tree.data:
        subs: list = []
        if op is sre_parse.BRANCH:
            keys = [str(alt.data) for alt in arg[1]]
            found += [key for i, key in enumerate(keys) if key in keys[:i]]
            subs = arg[1]
        elif op is sre_parse.IN:
            items = [str(item) for item in arg]
            found += [item for i, item in enumerate(items) if item in items[:i]]
        elif op is sre_parse.SUBPATTERN:
            subs = [arg[-1]]
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT):
            subs = [arg[2]]
        elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
            subs = [arg[1]]
        elif op is sre_parse.GROUPREF_EXISTS:
            subs = [s for s in arg[1:] if s is not None]
        for sub in subs:
            found += _repeats(sub)
    return found


PATTERNS = (
    [(cue.name, cue.pattern) for cue in cues.CUES]
    + [
        (name, value)
        for module in (cues, claim_cancellers)
        for name, value in vars(module).items()
        if isinstance(value, re.Pattern)
    ]
    + [(f"THRESHOLD[{key}]", value) for key, value in cues.THRESHOLD.items()]
)


@pytest.mark.parametrize("name, pattern", PATTERNS, ids=[name for name, _ in PATTERNS])
def test_no_pattern_holds_an_alternative_twice(name, pattern):
    assert not _repeats(sre_parse.parse(pattern.pattern, pattern.flags)), name


WORD_LISTS = {name: value for name, value in vars(claim_words).items() if isinstance(value, tuple)}


@pytest.mark.parametrize("name", sorted(WORD_LISTS))
def test_no_word_list_holds_a_word_twice(name):
    words = WORD_LISTS[name]
    assert len(words) == len(set(words)), [w for i, w in enumerate(words) if w in words[:i]]


def test_the_duplicate_check_catches_a_repeated_alternative():
    assert _repeats(sre_parse.parse(r"\b(?:out\s+of|beyond|out\s+of)\b"))
    assert _repeats(sre_parse.parse(r"x(?:ab|(?:bc|cd|bc))"))
    assert not _repeats(sre_parse.parse(r"\b(?:out\s+of|beyond|outside)\b"))


def test_the_rule_counts_name_what_fired_and_what_cancelled():
    counts = rule_counts(
        [
            {"message": "My budget is 300.", "role": "buyer", "claims": [{"kind": "own_limit", "value": 300}]},
            {"message": "Is 50 your max?", "role": "seller", "claims": []},
        ]
    )
    assert (counts["fired"]["my-noun-hi"], counts["right"]["my-noun-hi"]) == (1, 1)
    assert (counts["cancelled"]["question"], counts["kept_out"]["question"]) == (1, 1)
