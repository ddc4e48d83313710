"""What a study asks its participants: survey items, comprehension questions, attention checks, and
the built-in items that put the paper's judge rubric to the participant.

A survey item is a Likert rating, a choice or free text. Three items are built in, so that every
study asks them the same way: `honesty` (the participant rates the other party's honesty on the
judge's 0-4 rubric), `credulity` (the participant rates their own credulity on the same rubric) and
`person_or_program`. The rubric's five level descriptions are read from the judge instrument
(bargain/data/judge_instrument.json) and reworded only to address the other party ("the seller" ->
"the other party", "the buyer" -> "you", with the verbs agreeing), so a participant's rating can be
compared level by level with the judge's. Honesty names the other party's price floor or ceiling,
so a built-in item takes its final form for the participant's role (`SurveyItem.for_role`).

Here too is how the study file is read (`read_yaml`, `Section` and its checks, shared with
bargain.study.config): every field is checked where it stands and every problem is recorded with
its field path, so that one load reports them all.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from re import _parser as sre  # type: ignore[attr-defined]  # a pattern's parse tree: no public module gives it
from typing import Any

import yaml

from bargain.analysis.judge import instrument
from bargain.engine.trial import Role


class ItemType(enum.StrEnum):
    """The kinds of survey item."""

    LIKERT = "likert"
    CHOICE = "choice"
    TEXT = "text"


class Builtin(enum.StrEnum):
    """The built-in survey items."""

    HONESTY = "honesty"
    CREDULITY = "credulity"
    PERSON_OR_PROGRAM = "person_or_program"


@dataclass(frozen=True)
class SurveyItem:
    """One survey question; a choice stores `values[i]` for `options[i]` (the option itself unless built in)."""

    id: str
    type: ItemType
    text: str
    required: bool = True
    options: tuple[str, ...] = ()
    values: tuple[int | str, ...] = ()
    scale: tuple[int, int] | None = None
    anchors: tuple[str, str] | None = None
    max_length: int | None = None
    builtin: Builtin | None = None

    def for_role(self, role: Role | None) -> SurveyItem:
        """The item as a participant playing `role` sees it (only built-in honesty depends on the role)."""
        return builtin_item(self.builtin, self.id, self.required, role) if self.builtin else self


@dataclass(frozen=True)
class Surveys:
    """The items asked after each game and once at the end."""

    per_game: tuple[SurveyItem, ...] = ()
    final: tuple[SurveyItem, ...] = ()


@dataclass(frozen=True)
class Question:
    """A comprehension question with one right answer among its options, asked of the participants who play `role`
    (None: of everyone), so that per-role instructions can be checked in their own terms."""

    id: str
    text: str
    options: tuple[str, ...]
    answer: str
    role: Role | None = dataclasses.field(default=None, kw_only=True)


@dataclass(frozen=True)
class Comprehension:
    """Questions on the instructions a participant must answer right, in at most `attempts` tries."""

    attempts: int = 1
    questions: tuple[Question, ...] = ()

    def for_roles(self, roles: Iterable[Role]) -> tuple[Question, ...]:
        """The questions asked of a participant who plays `roles`: everyone's, and their roles' own."""
        played = set(roles)
        return tuple(q for q in self.questions if q.role is None or q.role in played)


@dataclass(frozen=True)
class AttentionCheck(Question):
    """An instructed-response question shown in the survey after game `after_game` (1-based)."""

    after_game: int


def rubric_levels(template: str, header: str) -> tuple[str, ...]:
    """The five descriptions (levels 0-4) under `header` (e.g. "Seller's honesty:") in a judge template."""
    lines = template.splitlines()
    start = lines.index(header) + 1
    levels = []
    for level, line in enumerate(lines[start : start + 5]):
        number, _, description = line.partition(": ")
        if number != str(level) or not description:
            raise ValueError(f"the judge rubric under {header!r} is not five levels 0-4")
        levels.append(description)
    return tuple(levels)


def _judge_rubric(role: Role, score: str) -> tuple[str, ...]:
    """The judge's levels for the other party's honesty or the participant's credulity (`role`: the participant's)."""
    template = instrument()["templates"][
        f"{role.value}_unaware"
    ]  # the participant uninformed, the other party informed
    rated = role.other if score == "honesty" else role
    return rubric_levels(template, f"{rated.title}'s {score}:")


# Verb agreement after "the buyer" (or "the seller") becomes "you" in the credulity levels.
_SECOND_PERSON = (
    ("You is ", "You are "),
    ("but is ", "but are "),
    ("ignores or questions", "ignore or question"),
    ("engages ", "engage "),
    ("pursues their", "pursue your"),
    ("evaluates ", "evaluate "),
    ("tends ", "tend "),
    ("does not", "do not"),
    ("against their own", "against your own"),
)


def _address(level: str, role: Role) -> str:
    """A rubric level addressed to the participant playing `role`: the other side is "the other party", they "you"."""
    me, other = role.value, role.other.value
    words = level.replace(f"the {other}", "the other party")
    words = words.replace(f"The {me} ", "You ").replace(f"the {me.capitalize()} ", "you ").replace(f"the {me}", "you")
    if words.startswith("You "):
        for old, new in _SECOND_PERSON:
            words = words.replace(old, new)
    return words[0].upper() + words[1:]


def builtin_item(
    kind: Builtin, item_id: str | None = None, required: bool = True, role: Role | None = None
) -> SurveyItem:
    """A built-in item; honesty's levels name the other party's floor or ceiling: without `role` it has no options."""
    item_id = item_id or kind.value
    if kind is Builtin.PERSON_OR_PROGRAM:
        return SurveyItem(
            item_id,
            ItemType.CHOICE,
            "Was the other party a person or a computer program?",
            required,
            ("A person", "A computer program", "Not sure"),
            ("person", "program", "not sure"),
            builtin=kind,
        )
    if kind is Builtin.HONESTY:
        question = "The other party's honesty: which statement describes the other party best?"
    else:
        question = "Your credulity (how far you believed the other party's claims): which statement describes you best?"
        role = role or Role.BUYER  # the credulity levels read the same for either role once addressed to "you"
    levels = tuple(_address(level, role) for level in _judge_rubric(role, kind.value)) if role else ()
    return SurveyItem(item_id, ItemType.CHOICE, question, required, levels, tuple(range(len(levels))), builtin=kind)


class _Loader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key written twice in one mapping (YAML would silently keep the last)."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    seen = []
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if isinstance(key, (str, int)) and key in seen:
            raise yaml.MarkedYAMLError(
                problem=f"`{key}` is written twice in one mapping; keep one", problem_mark=key_node.start_mark
            )
        seen.append(key)
    return loader.construct_mapping(node)


def _guarded(construct: Callable[[yaml.SafeLoader, yaml.ScalarNode], Any]) -> Callable:
    """A scalar constructor whose ValueError (a date such as 2025-13-01, an integer of thousands of digits) is a
    YAML error at the value's place, rather than an exception no one reports in the project's words."""

    def build(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        try:
            return construct(loader, node)
        except ValueError as exc:
            shown = node.value if len(node.value) <= 40 else node.value[:40] + "..."
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"cannot read {shown!r} ({str(exc)[:80]}); write it in quotes if it is text",
                node.start_mark,
            ) from exc

    return build


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
for _tag, _construct in (
    ("int", yaml.SafeLoader.construct_yaml_int),
    ("timestamp", yaml.SafeLoader.construct_yaml_timestamp),
):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _guarded(_construct))

MAX_DEPTH = 10  # mappings and lists inside one another; the deepest field (surveys.per_game[0].anchors) is 5


def read_yaml(data: bytes) -> Any:
    """Parse a YAML document safely, refusing duplicate keys and nesting deeper than MAX_DEPTH (Invalid, naming the
    top-level field): PyYAML builds a document recursively, so thousands of levels would exhaust Python's stack."""
    _check_depth(data)
    return yaml.load(data, Loader=_Loader)  # noqa: S506 (a SafeLoader)


def _check_depth(data: bytes) -> None:
    """Refuse nesting deeper than MAX_DEPTH, read from the parser's events (made without recursion)."""
    depth, keyed, nodes, field = 0, False, 0, "(top level)"
    for event in yaml.parse(data, Loader=_Loader):
        if isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            continue
        if depth == 1 and keyed and isinstance(event, yaml.NodeEvent):  # the top mapping's keys and values in turn
            nodes += 1
            if nodes % 2 and isinstance(event, yaml.ScalarEvent):
                field = event.value
        if isinstance(event, yaml.CollectionStartEvent):
            keyed = keyed or (depth == 0 and isinstance(event, yaml.MappingStartEvent))
            depth += 1
            if depth > MAX_DEPTH:
                raise Invalid(
                    f"{field}: nested deeper than {MAX_DEPTH} levels (line {event.start_mark.line + 1}); "
                    "no study field needs more than 5: write it as bargain/studies/example.yaml does"
                )


class Invalid(Exception):
    """A value that fails its check; the message says what to write instead."""


MISSING = object()  # the default of a required field, the value of an absent section


def at(path: str, key: Any) -> str:
    """The field path of `key` inside `path` (`design` + `order` -> `design.order`)."""
    return f"{path}.{key}" if path else str(key)


def show(value: Any) -> str:
    """A value as an error message quotes it, with its YAML type."""
    return f"{type(value).__name__} {value!r}" if value is not None else "nothing"


def _where(path: str) -> str:
    return f"in {path}" if path else "at the top level"


class Section:
    """One mapping of the study file at `path` (MISSING: absent): its fields are read checked, problems to `errors`."""

    def __init__(self, errors: list[str], file: Path, value: Any, path: str, known: tuple[str, ...]):
        self.errors, self.file, self.path, self.ok = errors, file, path, isinstance(value, dict)
        self.data = value if self.ok else {}
        if not self.ok and value is not MISSING:
            self.error(path, f"expected a mapping of {', '.join(known)}; got {show(value)}")
        for key in self.data:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f" (did you mean `{close[0]}`?)" if close else ""
                fix = "; a study never shows public results, so remove it" if key == "public_results" else ""
                self.error(at(path, key), f"unknown field `{key}` {_where(path)}; known: {', '.join(known)}{hint}{fix}")

    def error(self, path: str, message: str) -> None:
        """Record one problem at `path`."""
        self.errors.append(f"{self.file}: {path or '(top level)'}: {message}")

    def get(self, key: str, check: Callable[[Any], Any], default: Any = MISSING) -> Any:
        """The checked value of `key`, its default when absent, None (and a recorded problem) when wrong."""
        if key not in self.data:
            if default is MISSING and self.ok:
                self.error(at(self.path, key), f"missing required field `{key}` {_where(self.path)}; add it")
            return None if default is MISSING else default
        try:
            return check(self.data[key])
        except Invalid as exc:
            self.error(at(self.path, key), str(exc))
            return None

    def section(self, key: str, known: tuple[str, ...], optional: bool = False) -> Section:
        """The mapping under `key` (an absent optional one reads as empty, giving every default)."""
        if key not in self.data and not optional:
            self.get(key, lambda value: value)
        return Section(
            self.errors, self.file, self.data.get(key, {} if optional else MISSING), at(self.path, key), known
        )

    def items(self, key: str) -> list[tuple[str, Any]]:
        """The elements of the (optional) list under `key`, each with its path."""
        value = self.get(key, of_type(list, "a list"), []) or []
        return [(f"{at(self.path, key)}[{i}]", element) for i, element in enumerate(value)]


def of_type(kind: type, what: str) -> Callable[[Any], Any]:
    """A check that a value has YAML type `kind` (a bool is not a number)."""

    def check(value: Any) -> Any:
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            quote = "; put it in quotes" if kind is str and isinstance(value, (bool, int, float)) else ""
            raise Invalid(f"must be {what}; got {show(value)}{quote}")
        return value

    return check


MAX_WHOLE = 1_000_000  # no count of the study file's needs more; it keeps every number storable (32-bit columns)
MAX_AMOUNT = 1_000_000.0  # no payment of a study is more, in any currency


def whole(lo: int, hi: int = MAX_WHOLE) -> Callable[[Any], int]:
    """A check for a whole number from `lo` to `hi` (every number is bounded: a typo of many digits is refused at
    load, not when the database cannot store it)."""

    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise Invalid(f"must be a whole number from {lo} to {hi}; got {show(value)[:60]}")
        return value

    return check


def text(pattern: str | None = None, what: str = "text") -> Callable[[Any], str]:
    """A check for non-blank text, matching `pattern` in full when given."""

    def check(value: Any) -> str:
        of_type(str, what)(value)
        if not value.strip() or (pattern and not re.fullmatch(pattern, value)):
            raise Invalid(f"must be {what}; got {value[:60]!r}{'...' if len(value) > 60 else ''}")
        return value

    return check


def texts(minimum: int, what: str) -> Callable[[Any], tuple[str, ...]]:
    """A check for a list of at least `minimum` distinct texts."""

    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or len(value) < minimum:
            raise Invalid(f"must be a list of at least {minimum} {what}s; got {show(value)}")
        for element in value:
            text(what=f"a {what}")(element)
        if len(set(value)) < len(value):
            twice = sorted({repr(v) for v in value if value.count(v) > 1})
            raise Invalid(f"lists {', '.join(twice)} twice; list each once")
        return tuple(value)

    return check


def one_of(names: type[enum.Enum] | tuple[str, ...]) -> Callable[[Any], Any]:
    """A check for one of an enum's values (giving the member) or one of some names (giving the name)."""
    allowed = names if isinstance(names, tuple) else tuple(member.value for member in names)

    def check(value: Any) -> Any:
        if value not in allowed:
            raise Invalid(f"must be one of {', '.join(allowed)}; got {show(value)}")
        return value if isinstance(names, tuple) else names(value)

    return check


def number(lo: float, hi: float, unit: str = "") -> Callable[[Any], float]:
    """A check for a number from `lo` to `hi`, whole or not (`unit`, e.g. "seconds", is named in the message)."""

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
            what = f"a number of {unit}" if unit else "a number"
            raise Invalid(f"must be {what} from {lo:g} to {hi:g}; got {show(value)[:60]}")
        return float(value)

    return check


def amount(value: Any) -> float:
    """A check for an amount of money: a number from 0 to MAX_AMOUNT."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_AMOUNT:
        raise Invalid(f"must be an amount from 0 to {MAX_AMOUNT:.0f}; got {show(value)[:60]}")
    return float(value)


MAX_ID = 128  # the longest participant id the records hold (bargain.study.records.ParticipantRow.participant)
MAX_SPLITS = 1_000_000  # ways a pattern's repetitions may divide an id: refusing a crafted id takes milliseconds
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def regex(value: Any) -> str:
    """A check for the pattern a participant id must match: no empty id, none longer than MAX_ID, and no repetition
    of a part that can itself match in more than one way, such as (a+)+, (a*)*, (a|a)* or ([a-z]?){1,50}.

    Python's matcher backtracks, and on such nested repetition a crafted id (aaaa...!) takes exponential time,
    in the request that checks it. The pattern is refused at load rather than matched with a time limit: `re`
    has none, and a timed match would need a thread or another regex engine on every request, for a pattern the
    researcher can always write flat ([0-9a-f]{24}). The check reads the pattern's parse tree and is conservative
    (a harmless (ab|cd)+ is refused too: [a-d]{2} or two classes say it flat). Adjacent repetitions cost the
    product of their ranges ([a-z]{0,20} six times over: 21**6 tries, half a second per id), so that product is
    bounded by MAX_SPLITS."""
    try:
        parsed = sre.parse(text(r".{1,200}", "a regular expression of at most 200 characters")(value))
    except re.error as exc:
        raise Invalid(f"is not a regular expression ({exc}); fix it, e.g. [A-Za-z0-9_-]{{1,64}}") from exc
    if _nested_repeat(parsed):
        raise Invalid(
            "repeats a part that can match in more than one way (as (a+)+, (a*)* or (a|a)* do), which can "
            "take exponential time on a crafted id; write one flat repetition, e.g. [A-Za-z0-9_-]{1,64}"
        )
    if parsed.getwidth()[1] > MAX_ID:
        raise Invalid(
            f"accepts ids longer than {MAX_ID} characters, which the records cannot hold; bound every "
            "repetition, e.g. [A-Za-z0-9_-]{1,64} rather than [A-Za-z0-9_-]+"
        )
    if _splits(parsed) > MAX_SPLITS:
        raise Invalid(
            f"has repetitions that can divide an id in more than {MAX_SPLITS} ways, which makes a wrong id "
            "slow to refuse; use fewer repetitions of variable length, e.g. [A-Za-z0-9_-]{1,64}"
        )
    if re.fullmatch(value, ""):
        raise Invalid("accepts an empty id; require at least one character, e.g. [A-Za-z0-9_-]{1,64}")
    return value


def _parts(argument: Any) -> Iterator[sre.SubPattern]:
    """The sub-patterns inside one node's argument (a group's, a repeat's, each branch of an alternation...)."""
    for part in argument if isinstance(argument, (tuple, list)) else (argument,):
        if isinstance(part, sre.SubPattern):
            yield part
        elif isinstance(part, list):
            yield from (branch for branch in part if isinstance(branch, sre.SubPattern))


def _ambiguous(pattern: sre.SubPattern) -> bool:
    """Whether a part of `pattern` can match in more than one way: a repeat of variable count, or an alternation."""
    return any(
        op is sre.BRANCH
        or (op in _REPEATS and argument[0] != argument[1])
        or any(_ambiguous(part) for part in _parts(argument))
        for op, argument in pattern
    )


def _splits(pattern: sre.SubPattern) -> int:
    """At most how many ways the repetitions of `pattern` can divide an id: the product of their ranges."""
    ways = 1
    for op, argument in pattern:
        if op in _REPEATS:
            ways *= argument[1] - argument[0] + 1
        for part in _parts(argument):
            ways *= _splits(part)
    return ways


def _nested_repeat(pattern: sre.SubPattern) -> bool:
    """Whether `pattern` repeats (more than once) a part that can match in more than one way."""
    return any(
        (op in _REPEATS and argument[1] > 1 and _ambiguous(argument[2]))
        or any(_nested_repeat(part) for part in _parts(argument))
        for op, argument in pattern
    )


FLAG = of_type(bool, "true or false")
ID = text(r"[a-z][a-z0-9_]{0,63}", "an id of lowercase letters, digits and _, starting with a letter")
_TYPED = ("scale", "anchors", "options", "max_length")  # the fields that belong to one item type
_NEEDS = {ItemType.LIKERT: ("scale", "anchors"), ItemType.CHOICE: ("options",), ItemType.TEXT: ("max_length",)}


def _scale(value: Any) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) or not -1000 <= v <= 1000 for v in value)
        or not 1 <= value[1] - value[0] <= 10
    ):
        raise Invalid(
            "must be [low, high], two whole numbers from -1000 to 1000, 2 to 11 points apart such as "
            f"[1, 7]; got {show(value)[:60]}"
        )
    return value[0], value[1]


def _anchors(value: Any) -> tuple[str, str]:
    labels = texts(2, "label")(value)
    if len(labels) != 2:
        raise Invalid(f"must be [low label, high label]; got {show(value)}")
    return labels


def read_surveys(top: Section, one_opponent: bool) -> Surveys:
    """Both surveys; without `one_opponent` per participant, the final survey may not rate the opponent."""
    surveys = top.section("surveys", ("per_game", "final"), optional=True)
    per_game, final = _read_survey(surveys, "per_game"), _read_survey(surveys, "final")
    for i, item in enumerate(final):
        if item.builtin in (Builtin.HONESTY, Builtin.CREDULITY) and not one_opponent:
            top.error(
                f"surveys.final[{i}]",
                f"built-in `{item.builtin}` rates one other party, but in a within design "
                "a participant meets several; move it to surveys.per_game",
            )
    return Surveys(per_game, final)


def _read_survey(surveys: Section, which: str) -> tuple[SurveyItem, ...]:
    """The items of survey `which` (`per_game` or `final`), built-in ones without a role yet."""
    items = []
    for path, value in surveys.items(which):
        kind = value.get("builtin") if isinstance(value, dict) else None
        known = ("builtin", "id", "required") if kind is not None else ("id", "type", "text", *_TYPED, "required")
        item = Section(surveys.errors, surveys.file, value, path, known)
        if kind is not None:
            builtin = item.get("builtin", one_of(Builtin))
            if builtin:
                items.append(builtin_item(builtin, item.get("id", ID, None), item.get("required", FLAG, True)))
            continue
        item_type = item.get("type", one_of(ItemType))
        for key in _TYPED:
            if key in item.data and item_type and key not in _NEEDS[item_type]:
                item.error(at(path, key), f"`{key}` does not apply to a {item_type} item; remove it")
        options = item.get("options", texts(2, "option")) if item_type is ItemType.CHOICE else ()
        items.append(
            SurveyItem(
                id=item.get("id", ID),
                type=item_type,
                text=item.get("text", text()),
                required=item.get("required", FLAG, True),
                options=options or (),
                values=options or (),
                scale=item.get("scale", _scale) if item_type is ItemType.LIKERT else None,
                anchors=item.get("anchors", _anchors) if item_type is ItemType.LIKERT else None,
                max_length=item.get("max_length", whole(1, 10000), 500) if item_type is ItemType.TEXT else None,
            )
        )
    _unique_ids(surveys, f"{surveys.path}.{which}", [item.id for item in items])
    return tuple(items)


def _question(
    section: Section, path: str, value: Any, extra: tuple[str, ...] = ()
) -> tuple[Section, tuple[Any, Any, Any, Any]]:
    """A question's mapping and its (id, text, options, answer); `extra` names further fields it may have."""
    item = Section(section.errors, section.file, value, path, ("id", "text", "options", "answer", *extra))
    options = item.get("options", texts(2, "option"))
    answer = item.get("answer", text())
    if options and answer is not None and answer not in options:
        item.error(
            at(path, "answer"), f"{answer!r} is not one of the options; copy one of {', '.join(map(repr, options))}"
        )
    return item, (item.get("id", ID), item.get("text", text()), options, answer)


def read_comprehension(top: Section, roles: tuple[Role, ...]) -> Comprehension:
    """The comprehension questions (none when the section is absent), each asked of everyone or of the participants
    of one of `roles` (its `role`)."""
    section = top.section("comprehension", ("attempts", "questions"), optional=True)
    questions = []
    for path, value in section.items("questions"):
        item, fields = _question(section, path, value, ("role",))
        role = item.get("role", one_of(Role), None)
        if role is not None and role not in roles:
            item.error(
                at(path, "role"),
                f"no participant plays the {role} (cells.roles: {', '.join(roles)}); remove the question or its role",
            )
        questions.append(Question(*fields, role=role))
    if "comprehension" in top.data and not questions:
        section.error("comprehension.questions", "no questions; add at least one or remove comprehension")
    _unique_ids(section, "comprehension.questions", [question.id for question in questions])
    return Comprehension(section.get("attempts", whole(1), 1), tuple(questions))


def read_attention_checks(
    top: Section, games: int | None, per_game: tuple[SurveyItem, ...]
) -> tuple[AttentionCheck, ...]:
    """The attention checks, each after one of the `games` games, with ids apart from the per-game survey's."""
    checks = []
    for path, value in top.items("attention_checks"):
        item, fields = _question(top, path, value, ("after_game",))
        checks.append(AttentionCheck(*fields, item.get("after_game", whole(1, games or MAX_WHOLE))))
    _unique_ids(top, "attention_checks", [check.id for check in checks], taken=[item.id for item in per_game])
    return tuple(checks)


def _unique_ids(section: Section, path: str, ids: list[str | None], taken: Iterable[str | None] = ()) -> None:
    """Report every id of `ids` used earlier in the list or in `taken`."""
    seen = set(taken)
    for i, item_id in enumerate(ids):
        if item_id is not None and item_id in seen:
            section.error(f"{path}[{i}].id", f"id `{item_id}` is already used; give each item its own id")
        seen.add(item_id)
