"""The study file: one YAML file that fixes everything a controlled human study with the arena does.

A researcher writes the study (its arms, the cells crossed, the rules of play, the scenarios, the
design, the texts shown, the questions asked, timing, payment, exclusions, what is kept about
participants) in one file, and `load` turns it into a typed, frozen `Study` or refuses it. The file
is checked as a whole: every problem is reported at once, one per line, each naming the file, the
field path (`surveys.per_game[2].options`) and what to write instead, so that a study never runs
half-configured. `Study.hash` fingerprints the file and the Markdown texts it names, so the data
collected stays tied to the exact study that produced it, and a file changed under the same name
and version can be refused. Pure: no database, no network. `studies/example.yaml` is the
annotated reference.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

import yaml

from bargain.agents.arms import ArmError, resolve
from bargain.engine.prompts import PromptVersion
from bargain.engine.scenarios import TIERS, ScenarioError, ScenarioSet, bundled
from bargain.engine.trial import Condition, Mode, Role, Scenario
from bargain.study.survey import (FLAG, MISSING, AttentionCheck, Comprehension, Invalid, Section, Surveys, amount, at,
                                  of_type, one_of, read_attention_checks, read_comprehension, read_surveys, read_yaml, regex,
                                  text, texts, whole)

TEXTS = ("consent", "instructions", "debrief")  # hashed after the YAML file, in this order
SPLITS = ("train", "val", "test")
DEFAULT_LABEL = "the other party"
_CODE = text(r"[A-Za-z0-9_-]{1,64}", "1-64 letters, digits, _ or -")


class StudyError(ValueError):
    """A study file that cannot be used; one line per problem, each saying where it is and what to write."""

    def __init__(self, errors: Iterable[str]):
        self.errors = tuple(errors)
        super().__init__("\n".join(self.errors))


class Assignment(enum.StrEnum):
    """Between: one cell for all of a participant's games; within: each game its own cell."""

    BETWEEN = "between"
    WITHIN = "within"


class Order(enum.StrEnum):
    """The order of a participant's cells in a within design: shuffled, or the study's cell order."""

    RANDOM = "random"
    FIXED = "fixed"


class TimeoutRule(enum.StrEnum):
    """What a game in which a move timed out earns towards the bonus: nothing, or what it scored."""

    NO_BONUS_FOR_TIMED_OUT_GAMES = "no_bonus_for_timed_out_games"
    BONUS_AS_PLAYED = "bonus_as_played"


class ExclusionRule(enum.StrEnum):
    """Why a participant's data is flagged as excluded (it is kept)."""

    FAILED_ATTENTION_CHECKS_OVER = "failed_attention_checks_over"
    TIMEOUTS_OVER = "timeouts_over"
    SECONDS_UNDER = "seconds_under"


@dataclass(frozen=True)
class StudyArm:
    """An opponent in the study: its agent spec and what participants are told it is."""

    key: str
    spec: str
    label: str = DEFAULT_LABEL


@dataclass(frozen=True)
class Cell:
    """One combination of the factors: the arm played against, the information condition, the participant's role."""

    arm: str
    condition: Condition
    role: Role


@dataclass(frozen=True)
class ScenarioPool:
    """Where a game's scenario is drawn from: one tier, one of the paper's splits, or a list of `tier:index`."""

    tier: str | None = None
    split: str | None = None
    refs: tuple[str, ...] = ()

    def scenarios(self, source: ScenarioSet | None = None) -> tuple[Scenario, ...]:
        """The scenarios of the pool, from `source` (default: the bundled dataset)."""
        source = source or bundled()
        if self.tier:
            return source.tier(self.tier)
        return source.split(self.split) if self.split else tuple(source.get(ref) for ref in self.refs)


@dataclass(frozen=True)
class Design:
    """How participants are assigned to cells, and how many games (within) or participants (between) a cell gets."""

    assignment: Assignment
    quota_per_cell: int
    order: Order = Order.RANDOM


@dataclass(frozen=True)
class Texts:
    """The Markdown shown to participants, and the version of the consent they agree to."""

    consent: str
    instructions: str
    debrief: str
    consent_version: str


@dataclass(frozen=True)
class Timing:
    """The time a move may take (a move not made in time is a pass) and when an idle participant's slot is released."""

    move_seconds: int = 120
    idle_minutes: int = 20


@dataclass(frozen=True)
class Bonus:
    """Money per unit of normalised utility summed over a participant's games, at most `cap`."""

    per_unit: float
    cap: float
    floor_at_zero: bool = True


@dataclass(frozen=True)
class Payment:
    """A base payment plus a performance bonus."""

    currency: str
    base: float
    bonus: Bonus
    timeout_rule: TimeoutRule

    def bonus_for(self, games: Iterable[tuple[float, bool]]) -> float:
        """The bonus for a participant's games, each given as (normalised utility, whether a move timed out)."""
        skip = self.timeout_rule is TimeoutRule.NO_BONUS_FOR_TIMED_OUT_GAMES
        amount = min(self.bonus.per_unit * sum(u for u, timed_out in games if not (skip and timed_out)), self.bonus.cap)
        return max(amount, 0.0) if self.bonus.floor_at_zero else amount


@dataclass(frozen=True)
class Completion:
    """What a participant gets at the end (the completion code, or the screened-out code) and where they go next."""

    code: str
    screened_out_code: str
    declined_message: str
    redirect_url: str | None = None

    def redirect(self, code: str) -> str | None:
        """The URL that takes the participant back with `code`, if the study has one."""
        return self.redirect_url.replace("{code}", code) if self.redirect_url else None


@dataclass(frozen=True)
class Exclusion:
    """One exclusion rule: over the threshold (under it, for seconds) a participant is flagged excluded."""

    rule: ExclusionRule
    threshold: int

    def excludes(self, failed_attention_checks: int, timeouts: int, seconds: float) -> bool:
        """Whether a participant with these counts and this total time is excluded by this rule."""
        if self.rule is ExclusionRule.SECONDS_UNDER:
            return seconds < self.threshold
        count = failed_attention_checks if self.rule is ExclusionRule.FAILED_ATTENTION_CHECKS_OVER else timeouts
        return count > self.threshold


@dataclass(frozen=True)
class ParticipantId:
    """The URL parameters that carry the participant id (the first present wins) and the form it must match in full."""

    parameters: tuple[str, ...] = ("PROLIFIC_PID", "participant")
    id_pattern: str = r"[A-Za-z0-9_-]{1,64}"


@dataclass(frozen=True)
class Study:
    """A loaded, checked study file. Public results are always off in a study (there is no field for them)."""

    path: Path
    name: str
    version: int
    arms: Mapping[str, StudyArm]
    cells: tuple[Cell, ...]
    mode: Mode
    rounds: int
    first_actor: Role
    prompt_version: PromptVersion
    scenarios: ScenarioPool
    games_per_participant: int
    design: Design
    texts: Texts
    comprehension: Comprehension
    attention_checks: tuple[AttentionCheck, ...]
    surveys: Surveys
    timing: Timing
    payment: Payment
    completion: Completion
    exclusions: tuple[Exclusion, ...]
    participant_id: ParticipantId
    retention_days: int | None
    hash_participant_ids_in_exports: bool
    hash: str

    def cell_key(self, cell: Cell) -> str:
        """The cell's stable name, `arm/condition/role` (e.g. `a/buyer_unaware/buyer`)."""
        return f"{cell.arm}/{cell.condition.value}/{cell.role.value}"

    def cell_by_key(self, key: str) -> Cell:
        """The cell named `key` (as `cell_key` names it)."""
        for cell in self.cells:
            if self.cell_key(cell) == key:
                return cell
        raise KeyError(f"study {self.name} v{self.version} has no cell {key!r}")

    def label(self, arm_key: str) -> str:
        """What participants are told the arm is."""
        return self.arms[arm_key].label

    def to_dict(self) -> dict:
        """The study as JSON-ready data (enums as their values, tuples as lists), e.g. to store beside its records."""
        plain = dataclasses.replace(self, arms=dict(self.arms), path=str(self.path))
        return json.loads(json.dumps(dataclasses.asdict(plain)))


_TOP = tuple(field.name for field in dataclasses.fields(Study) if field.name not in ("path", "hash"))


def load(path: str | Path) -> Study:
    """Read and check a study file and the texts it names; every problem found is raised in one StudyError."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StudyError([f"{path}: cannot read the study file ({exc.strerror})"]) from exc
    try:
        document = read_yaml(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(file)"
        raise StudyError([f"{path}: {where}: not valid YAML: {getattr(exc, 'problem', None) or exc}"]) from exc
    errors: list[str] = []
    top = Section(errors, path, MISSING if document is None else document, "", _TOP)
    study = _parse(top, path, raw) if top.ok else None
    if errors or study is None:
        order = {str(key): i for i, key in enumerate(top.data)}  # report in the order the file is written
        errors.sort(key=lambda line: order.get(re.split(r"[.\[:]", line[len(f"{path}: "):])[0], len(order)))
        raise StudyError(errors or [f"{path}: (top level): the study file is empty; start from studies/example.yaml"])
    return study


def _parse(top: Section, path: Path, raw: bytes) -> Study:
    """Build the study from the document's top mapping, recording every problem in `top.errors`."""
    arms = _arms(top)
    cells = top.section("cells", ("arms", "conditions", "roles"))
    arm_keys = cells.get("arms", texts(1, "arm key"))
    conditions, roles = cells.get("conditions", _factor(Condition)), cells.get("roles", _factor(Role))
    for i, key in enumerate(arm_keys if arms and arm_keys else ()):
        if key not in arms:
            cells.error(f"cells.arms[{i}]", f"`{key}` is not an arm; define it under arms or use one of {', '.join(arms)}")
    for key in set(arms) - set(arm_keys or arms):
        top.error(f"arms.{key}", f"arm `{key}` is not in cells.arms; add it there or remove it")
    product = tuple(Cell(*cell) for cell in itertools.product(arm_keys or (), conditions or (), roles or ()))
    games = top.get("games_per_participant", whole(1))
    design = _design(top, len(product), games)
    shown, digest = _texts_and_hash(top, path, raw)
    surveys = read_surveys(top, one_opponent=design.assignment is not Assignment.WITHIN)
    checks = read_attention_checks(top, games, surveys.per_game)
    return Study(
        path=path, name=top.get("name", text(r"[a-z0-9]+(-[a-z0-9]+)*", "a slug of lowercase letters, digits and -")),
        version=top.get("version", whole(1)), arms=MappingProxyType(arms), cells=product,
        mode=top.get("mode", one_of(Mode), Mode.SIMULTANEOUS), rounds=top.get("rounds", whole(1, 20), 4),
        first_actor=top.get("first_actor", one_of(Role), Role.BUYER),
        prompt_version=top.get("prompt_version", one_of(PromptVersion), PromptVersion.TRAIN),
        scenarios=_scenarios(top), games_per_participant=games, design=design, texts=shown,
        comprehension=read_comprehension(top), attention_checks=checks, surveys=surveys,
        timing=_timing(top), payment=_payment(top), completion=_completion(top),
        exclusions=_exclusions(top, len(checks)), participant_id=_participant_id(top),
        retention_days=top.get("retention_days", whole(1), None),
        hash_participant_ids_in_exports=top.get("hash_participant_ids_in_exports", FLAG, True), hash=digest)


def _factor(cls: type[enum.Enum]) -> Callable[[Any], tuple]:
    def check(value: Any) -> tuple:
        return tuple(one_of(cls)(name) for name in texts(1, f"{cls.__name__.lower()} name")(value))
    return check


def _arms(top: Section) -> dict[str, StudyArm]:
    mapping = top.get("arms", of_type(dict, "a mapping of arm key to {spec, label}"))
    if mapping == {}:
        top.error("arms", "no arms; define at least one, e.g. `a: {spec: arm:seller-grpo}`")
    arms = {}
    for key, value in (mapping or {}).items():
        if not isinstance(key, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,31}", key):
            top.error(f"arms.{key}", f"arm key {key!r} must be 1-32 lowercase letters, digits, _ or -, not starting with _ or -")
            continue
        arm = Section(top.errors, top.file, value, f"arms.{key}", ("spec", "label"))
        arms[key] = StudyArm(key, arm.get("spec", _spec), arm.get("label", text(what="what participants see"), DEFAULT_LABEL))
    return arms


def _spec(value: Any) -> str:
    try:
        resolve(text(what="an agent spec such as arm:seller-grpo or tactic:boulware")(value))
    except ArmError as exc:
        raise Invalid(str(exc)) from exc
    return value


def _design(top: Section, n_cells: int, games: int | None) -> Design:
    section = top.section("design", ("assignment", "quota_per_cell", "order"))
    design = Design(section.get("assignment", one_of(Assignment)), section.get("quota_per_cell", whole(1)),
                    section.get("order", one_of(Order), Order.RANDOM))
    if design.assignment is Assignment.WITHIN and games and n_cells and games > n_cells:
        top.error("games_per_participant", f"a within design gives each of a participant's games its own cell, but "
                                           f"{games} games exceed the {n_cells} cells; play at most {n_cells} games, "
                                           "add cells, or use design.assignment: between")
    return design


def _texts_and_hash(top: Section, path: Path, raw: bytes) -> tuple[Texts, str]:
    """The Markdown texts and the study's hash: sha256 over the YAML's bytes then each text's, each length-prefixed."""
    section = top.section("texts", (*TEXTS, "consent_version"))
    digest = hashlib.sha256(len(raw).to_bytes(8, "big") + raw)
    loaded = {}
    for field in TEXTS:
        relative = section.get(field, text(what="the path of a Markdown file, relative to the study file"))
        if relative is None:
            continue
        file = path.parent / relative
        try:
            data = file.read_bytes()
            loaded[field] = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
            section.error(f"texts.{field}", f"cannot read {file} ({why}); write that file in UTF-8 or fix the path")
            continue
        if not loaded[field].strip():
            section.error(f"texts.{field}", f"{file} is empty; write the {field} text")
        digest.update(len(data).to_bytes(8, "big") + data)
    version = section.get("consent_version", text(what='text naming the consent form\'s version, e.g. "1.0"'))
    return Texts(*(loaded.get(field, "") for field in TEXTS), version), digest.hexdigest()


def _scenarios(top: Section) -> ScenarioPool:
    section = top.section("scenarios", ("tier", "split", "list"))
    if section.ok and len(section.data) != 1:
        section.error("scenarios", "write exactly one of tier (low, medium, high, very_high), split (train, val, "
                                   "test) or list (of TIER:INDEX such as low:12)")
    refs, canonical = section.get("list", texts(1, "scenario reference"), ()), []
    for i, ref in enumerate(refs or ()):
        try:
            canonical.append(bundled().get(ref).ref)
        except ScenarioError as exc:
            section.error(f"scenarios.list[{i}]", f"{exc}; name a bundled scenario")
    if len(set(canonical)) < len(canonical):
        section.error("scenarios.list", "names a scenario twice; list each once")
    return ScenarioPool(section.get("tier", one_of(TIERS), None), section.get("split", one_of(SPLITS), None),
                        tuple(canonical))


def _timing(top: Section) -> Timing:
    section = top.section("timing", ("move_seconds", "idle_minutes"), optional=True)
    return Timing(section.get("move_seconds", whole(10, 3600), 120), section.get("idle_minutes", whole(1, 1440), 20))


def _payment(top: Section) -> Payment:
    section = top.section("payment", ("currency", "base", "bonus", "timeout_rule"))
    bonus = section.section("bonus", ("per_unit", "cap", "floor_at_zero"))
    return Payment(section.get("currency", text(r"[A-Z]{3}", "a three-letter ISO 4217 code such as GBP")),
                   section.get("base", amount),
                   Bonus(bonus.get("per_unit", amount), bonus.get("cap", amount), bonus.get("floor_at_zero", FLAG, True)),
                   section.get("timeout_rule", one_of(TimeoutRule)))


def _completion(top: Section) -> Completion:
    section = top.section("completion", ("code", "screened_out_code", "redirect_url", "declined_message"))
    return Completion(section.get("code", _CODE), section.get("screened_out_code", _CODE),
                      section.get("declined_message", text()), section.get("redirect_url", _redirect, None))


def _redirect(value: Any) -> str:
    url = text(r"https?://\S+", "an http(s) URL")(value)
    if re.search(r"[{}]", url.replace("{code}", "")):
        raise Invalid(f"may contain no braces but the placeholder {{code}}; got {url!r}")
    return url


def _exclusions(top: Section, n_checks: int) -> tuple[Exclusion, ...]:
    rules = []
    for path, value in top.items("exclusions"):
        rule = Section(top.errors, top.file, value, path, tuple(ExclusionRule))
        if rule.ok and len(rule.data) != 1:
            rule.error(path, f"write exactly one rule per element: one of {', '.join(ExclusionRule)}")
        for key in set(rule.data) & set(ExclusionRule):
            threshold = rule.get(key, whole(1 if key == ExclusionRule.SECONDS_UNDER else 0))
            if key == ExclusionRule.FAILED_ATTENTION_CHECKS_OVER and threshold is not None and threshold >= n_checks:
                rule.error(at(path, key), f"can never apply with {n_checks} attention checks; use a number below "
                                          f"{n_checks} or add attention_checks")
            rules.append(Exclusion(ExclusionRule(key), threshold))
    if len({rule.rule for rule in rules}) < len(rules):
        top.error("exclusions", "names one rule twice; keep one")
    return tuple(rules)


def _participant_id(top: Section) -> ParticipantId:
    section = top.section("participant_id", ("parameters", "id_pattern"), optional=True)
    parameters = section.get("parameters", texts(1, "URL parameter name"), ParticipantId.parameters)
    for i, name in enumerate(parameters or ()):
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
            section.error(f"participant_id.parameters[{i}]", f"{name!r} is not a URL parameter name (letters, digits, _ . -)")
    return ParticipantId(parameters, section.get("id_pattern", regex, ParticipantId.id_pattern))
