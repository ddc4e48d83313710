"""The study file: one YAML file that fixes everything a controlled human study with the arena does.

A researcher writes the study (its arms, the cells crossed, the rules of play, the scenarios, the
design, the texts shown, the questions asked, timing, payment, exclusions, what is kept about
participants) in one file, and `load` turns it into a typed, frozen `Study` or refuses it. The file
is checked as a whole: every problem is reported at once, one per line, each naming the file, the
field path (`surveys.per_game[2].options`) and what to write instead, so that a study never runs
half-configured. `Study.hash` fingerprints the file and the Markdown texts it names, so the data
collected stays tied to the exact study that produced it, and a file changed under the same name
and version can be refused. Pure: no database, no network. `bargain/studies/example.yaml` (`--study example`) is the
annotated reference.

The file may be careless or hostile, and loading it never raises anything but a StudyError of one line per
problem: the file and each text are regular files of at most MAX_BYTES, read with that bound (a text must lie in
the study file's folder, symlinks resolved), nesting is bounded (survey.MAX_DEPTH), every number is bounded,
and a participant-id pattern that could backtrack catastrophically is refused (survey.regex says why that
rather than a timed match). What is coherent but doubtful (a consent that says the other party is a program
and a debrief that says participants were not told; a text that calls the other party a program in a study of
people; instructions that tell sellers "You are the buyer") is logged as a warning by `load`
(`disclosure_warnings`, bargain.study.disclosure), so that every caller, the app included, shows it without its
signature changing.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import hashlib
import hmac
import itertools
import json
import logging
import math
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from bargain.agents.arms import ArmError, resolve
from bargain.arena import PERSON
from bargain.arena.pacing import Pace
from bargain.engine.prompts import PromptVersion
from bargain.engine.scenarios import TIERS, ScenarioError, ScenarioSet, bundled
from bargain.engine.trial import Condition, Mode, Role, Scenario
from bargain.study.disclosure import disclosure_warnings
from bargain.study.survey import (
    FLAG,
    MISSING,
    AttentionCheck,
    Comprehension,
    Invalid,
    Section,
    Surveys,
    amount,
    at,
    number,
    of_type,
    one_of,
    read_attention_checks,
    read_comprehension,
    read_surveys,
    read_yaml,
    regex,
    show,
    text,
    texts,
    whole,
)

log = logging.getLogger(__name__)
EXAMPLE = Path(__file__).resolve().parents[1] / "studies" / "example.yaml"  # shipped in the package
TEXTS = ("consent", "instructions", "debrief")  # hashed after the YAML file, in this order
SPLITS = ("train", "val", "test")
DEFAULT_LABEL = "the other party"
DEFAULT_TITLE = "A bargaining study"  # neutral: the tab's title says nothing of what the other party is
MAX_BYTES = 100_000  # the most the study file or one of its texts may hold
MAX_GAMES = 100  # games per participant: each takes minutes of a paid person's time
_CODE = text(r"[A-Za-z0-9_-]{1,64}", "1-64 letters, digits, _ or -")
PROLIFIC_ID = r"[0-9a-fA-F]{24}"  # Prolific's PROLIFIC_PID: 24 hexadecimal characters (lower-case in practice)
LOOSE_ID = r"[A-Za-z0-9_-]{1,64}"  # the form of an id under any other parameter, unless the file sets one
PLATFORM_IDS = MappingProxyType({"PROLIFIC_PID": PROLIFIC_ID})  # a platform's own parameter has its platform's form
DEFAULT_ID_PARAMETERS = ("PROLIFIC_PID", "participant")
SETTINGS_FILE = "study.json"  # an export's copy of the study's settings (bargain.study.export), which analyses read


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
    MOVES_PER_GAME_UNDER = "moves_per_game_under"  # a game with fewer of the participant's own moves (not timeouts)
    SECONDS_PER_GAME_UNDER = "seconds_per_game_under"  # a game over in fewer seconds
    FIRST_ROUND_WALKAWAYS_OVER = "first_round_walkaways_over"  # more games the participant walked away from in round 1

    @property
    def under(self) -> bool:
        """Whether the rule excludes below its threshold (else above it)."""
        return self.value.endswith("_under")


@dataclass(frozen=True)
class StudyArm:
    """An opponent in the study: its agent spec and what participants are told it is."""

    key: str
    spec: str
    label: str = DEFAULT_LABEL


@dataclass(frozen=True)
class Pairing:
    """How participants who play a person arm (spec `person`) are paired: each waits at most `max_wait_s` for a
    partner in the other role of the same arm and condition; past it, `otherwise`: the key of a program arm, which
    they then play instead (recorded as such), or `end`: their study ends there, paid the base and `end_bonus`."""

    max_wait_s: int
    otherwise: str
    end_bonus: float


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
    distinct_arms: bool = False  # within: each of a participant's games against another arm


@dataclass(frozen=True)
class Texts:
    """The Markdown shown to participants, and the version of the consent they agree to. The instructions are one
    text for everyone, or one per role of the cells, so that a seller never reads "You are the buyer"."""

    consent: str
    instructions: str | dict[Role, str]
    debrief: str
    consent_version: str

    def instructions_for(self, roles: Iterable[Role]) -> str:
        """The instructions a participant who plays `roles` reads: everyone's, or their role's, or in a within design
        that gives them both roles each role's in the order of their games."""
        if isinstance(self.instructions, str):
            return self.instructions
        return "\n\n---\n\n".join(self.instructions[role] for role in roles)


@dataclass(frozen=True)
class Timing:
    """The time a move may take (a move not made in time is a pass), when an idle participant's slot is released, and
    the human-like pace of the program's replies, if any (bargain.arena.pacing: the speed of an answer should not
    tell a person from a program)."""

    move_seconds: int = 120
    idle_minutes: int = 20
    reply_delay: Pace | None = None
    matching: Pace | None = None  # a program game first waits this long for "the other party" (blinding)


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
    per_participant_codes: bool = False

    def redirect(self, code: str) -> str | None:
        """The URL that takes the participant back with `code`, if the study has one."""
        return self.redirect_url.replace("{code}", code) if self.redirect_url else None

    def code_for(self, salt: str, participant: str) -> str:
        """The code a participant who completed gets: the study's, or with per-participant codes their own, derived
        from the study's secret salt (records.StudyRow.salt) and their id."""
        return participant_code(salt, participant) if self.per_participant_codes else self.code


def participant_code(salt: str, participant: str) -> str:
    """A participant's own completion code: 10 upper-case letters and digits (base32 of an HMAC-SHA256 keyed with the
    study's salt), which no one can make from an id without the salt, so a code shows that its holder completed."""
    digest = hmac.new(salt.encode(), f"completion:{participant}".encode(), hashlib.sha256).digest()
    return base64.b32encode(digest).decode()[:10]


@dataclass(frozen=True)
class Played:
    """What a participant did in one game, as the exclusion rules read it."""

    own_moves: int  # moves the participant made (a move not made in time is not one)
    seconds: float  # from the game's start to its end
    walked_away_first_round: bool


@dataclass(frozen=True)
class Conduct:
    """What a participant did over the whole study, as the exclusion rules read it."""

    failed_attention_checks: int
    timeouts: int
    seconds: float  # from arrival to completion
    games: tuple[Played, ...] = ()


_MEASURES: dict[ExclusionRule, Callable[[Conduct], float]] = {  # what each rule compares with its threshold
    ExclusionRule.FAILED_ATTENTION_CHECKS_OVER: lambda c: c.failed_attention_checks,
    ExclusionRule.TIMEOUTS_OVER: lambda c: c.timeouts,
    ExclusionRule.SECONDS_UNDER: lambda c: c.seconds,
    ExclusionRule.MOVES_PER_GAME_UNDER: lambda c: min((g.own_moves for g in c.games), default=math.inf),
    ExclusionRule.SECONDS_PER_GAME_UNDER: lambda c: min((g.seconds for g in c.games), default=math.inf),
    ExclusionRule.FIRST_ROUND_WALKAWAYS_OVER: lambda c: sum(g.walked_away_first_round for g in c.games),
}


@dataclass(frozen=True)
class Exclusion:
    """One exclusion rule: over the threshold (under it, for a rule ending `_under`) a participant is flagged
    excluded; a rule on games (per game) applies when any one game is under it."""

    rule: ExclusionRule
    threshold: int

    def excludes(self, conduct: Conduct) -> bool:
        """Whether a participant who did this is excluded by this rule."""
        measure = _MEASURES[self.rule](conduct)
        return measure < self.threshold if self.rule.under else measure > self.threshold


def default_id_pattern(parameter: str) -> str:
    """The form an id must have under `parameter` when the file sets none: its platform's, or a loose one."""
    return PLATFORM_IDS.get(parameter, LOOSE_ID)


@dataclass(frozen=True)
class ParticipantId:
    """The URL parameters that carry the participant id (the first present wins) and, for each, the form the id
    must match in full."""

    parameters: tuple[str, ...] = DEFAULT_ID_PARAMETERS
    patterns: Mapping[str, str] = dataclasses.field(
        default_factory=lambda: {name: default_id_pattern(name) for name in DEFAULT_ID_PARAMETERS}
    )

    def accepts(self, parameter: str, value: object) -> bool:
        """Whether `value` is a valid id under URL parameter `parameter` (one of the study's)."""
        pattern = self.patterns.get(parameter)
        return pattern is not None and isinstance(value, str) and re.fullmatch(pattern, value) is not None


@dataclass(frozen=True)
class Study:
    """A loaded, checked study file. Public results are always off in a study (there is no field for them)."""

    path: Path
    name: str
    version: int
    title: str  # the page's title, as participants see it in their tab
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
    pairing: Pairing | None  # None: no person arm
    payment: Payment
    completion: Completion
    exclusions: tuple[Exclusion, ...]
    participant_id: ParticipantId
    retention_days: int | None
    hash_participant_ids_in_exports: bool
    hash: str

    @property
    def roles(self) -> tuple[Role, ...]:
        """The roles participants play, in the cells' order."""
        return tuple(dict.fromkeys(cell.role for cell in self.cells))

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
        plain = dataclasses.asdict(dataclasses.replace(self, arms=dict(self.arms))) | {"path": str(self.path)}
        return json.loads(json.dumps(plain))


_TOP = tuple(field.name for field in dataclasses.fields(Study) if field.name not in ("path", "hash"))


def load(path: str | Path) -> Study:
    """Read and check a study file and the texts it names (`example`: the annotated example that ships with the
    package, EXAMPLE); every problem found is raised in one StudyError, and what participants are told that
    disagrees is logged as a warning (`disclosure_warnings`)."""
    path = EXAMPLE if str(path) == "example" else Path(path)
    try:
        raw = read_bounded(path, "the study file")
        document = read_yaml(raw)
    except Invalid as exc:
        raise StudyError([f"{path}: {exc}"]) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(file)"
        raise StudyError([f"{path}: {where}: not valid YAML: {getattr(exc, 'problem', None) or exc}"]) from exc
    errors: list[str] = []
    top = Section(errors, path, MISSING if document is None else document, "", _TOP)
    study = _parse(top, path, raw) if top.ok else None
    if errors or study is None:
        order = {str(key): i for i, key in enumerate(top.data)}  # report in the order the file is written
        errors.sort(key=lambda line: order.get(re.split(r"[.\[:]", line[len(f"{path}: ") :])[0], len(order)))
        raise StudyError(
            errors
            or [f"{path}: (top level): the study file is empty; start from the example, bargain/studies/example.yaml"]
        )
    for warning in disclosure_warnings(study):
        log.warning(warning)
    return study


def read_bounded(file: Path, what: str, folder: Path | None = None) -> bytes:
    """The bytes of `file`, a regular file (inside `folder`, when given, once symlinks are resolved) of at most
    MAX_BYTES, read with that bound: a path to /etc/passwd, /dev/zero or a pipe is refused, never read. Invalid
    says why, naming the file as `what`."""
    try:
        real, home = file.resolve(strict=True), folder.resolve() if folder is not None else None
        if home is not None and not real.is_relative_to(home):
            raise Invalid(
                f"{what} lies outside the study's folder {home}; put the text beside the study file and "
                "give its path relative to it"
            )
        if not stat.S_ISREG(real.stat().st_mode):
            raise Invalid(f"{what} is not a regular file; name a file")
        with real.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise Invalid(f"cannot read {what} ({getattr(exc, 'strerror', None) or exc}); fix the path") from exc
    if len(data) > MAX_BYTES:
        raise Invalid(f"{what} is larger than {MAX_BYTES // 1000} KB; shorten it")
    return data


def _parse(top: Section, path: Path, raw: bytes) -> Study:
    """Build the study from the document's top mapping, recording every problem in `top.errors`."""
    arms = _arms(top)
    cells = top.section("cells", ("arms", "conditions", "roles"))
    arm_keys = cells.get("arms", texts(1, "arm key"))
    conditions, roles = cells.get("conditions", _factor(Condition)), cells.get("roles", _factor(Role))
    for i, key in enumerate(arm_keys if arms and arm_keys else ()):
        if key not in arms:
            cells.error(
                f"cells.arms[{i}]", f"`{key}` is not an arm; define it under arms or use one of {', '.join(arms)}"
            )
    fallback = (top.data.get("pairing") or {}).get("otherwise") if isinstance(top.data.get("pairing"), dict) else None
    for key in set(arms) - set(arm_keys or arms) - {fallback}:  # a person arm's fallback is played by no cell
        top.error(f"arms.{key}", f"arm `{key}` is not in cells.arms; add it there or remove it")
    product = tuple(Cell(*cell) for cell in itertools.product(arm_keys or (), conditions or (), roles or ()))
    games = top.get("games_per_participant", whole(1, MAX_GAMES))
    design = _design(top, len(product), len(arm_keys or ()), games)
    pool = _scenarios(top, games)
    shown, digest = _texts_and_hash(top, path, raw, roles or tuple(Role))
    surveys = read_surveys(top, one_opponent=design.assignment is not Assignment.WITHIN)
    checks = read_attention_checks(top, games, surveys.per_game)
    return Study(
        path=path,
        name=top.get(
            "name", text(r"(?=.{1,64}\Z)[a-z0-9]+(-[a-z0-9]+)*", "a slug of at most 64 lowercase letters, digits and -")
        ),
        version=top.get("version", whole(1)),
        arms=MappingProxyType(arms),
        cells=product,
        title=top.get("title", text(r"[^\r\n]{1,100}", "one line of at most 100 characters"), DEFAULT_TITLE),
        mode=top.get("mode", one_of(Mode), Mode.SIMULTANEOUS),
        rounds=top.get("rounds", whole(1, 20), 4),
        first_actor=top.get("first_actor", one_of(Role), Role.BUYER),
        prompt_version=top.get("prompt_version", one_of(PromptVersion), PromptVersion.TRAIN),
        scenarios=pool,
        games_per_participant=games,
        design=design,
        texts=shown,
        comprehension=read_comprehension(top, roles or tuple(Role)),
        attention_checks=checks,
        surveys=surveys,
        timing=_timing(top),
        pairing=_pairing(top, arms, roles or ()),
        payment=_payment(top),
        completion=_completion(top),
        exclusions=_exclusions(top, len(checks)),
        participant_id=_participant_id(top),
        retention_days=top.get("retention_days", whole(1), None),
        hash_participant_ids_in_exports=top.get("hash_participant_ids_in_exports", FLAG, True),
        hash=digest,
    )


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
            top.error(
                f"arms.{key}",
                f"arm key {key!r} must be 1-32 lowercase letters, digits, _ or -, not starting with _ or -",
            )
            continue
        arm = Section(top.errors, top.file, value, f"arms.{key}", ("spec", "label"))
        arms[key] = StudyArm(
            key, arm.get("spec", _spec), arm.get("label", text(what="what participants see"), DEFAULT_LABEL)
        )
    return arms


def _spec(value: Any) -> str:
    if value == PERSON:  # another participant (bargain.arena.people)
        return value
    try:
        resolve(text(what="an agent spec such as arm:seller-grpo or tactic:boulware")(value))
    except ArmError as exc:
        raise Invalid(str(exc)) from exc
    return value


def _design(top: Section, n_cells: int, n_arms: int, games: int | None) -> Design:
    section = top.section("design", ("assignment", "quota_per_cell", "order", "distinct_arms"))
    design = Design(
        section.get("assignment", one_of(Assignment)),
        section.get("quota_per_cell", whole(1)),
        section.get("order", one_of(Order), Order.RANDOM),
        section.get("distinct_arms", FLAG, False),
    )
    if design.assignment is Assignment.WITHIN and games and n_cells and games > n_cells:
        top.error(
            "games_per_participant",
            f"a within design gives each of a participant's games its own cell, but "
            f"{games} games exceed the {n_cells} cells; play at most {n_cells} games, "
            "add cells, or use design.assignment: between",
        )
    if design.distinct_arms and design.assignment is Assignment.BETWEEN:
        section.error(
            "design.distinct_arms",
            "applies to a within design (between, all of a participant's games "
            "are in one cell, against one arm); remove it or use assignment: within",
        )
    elif design.distinct_arms and games and n_arms and games > n_arms:
        section.error(
            "design.distinct_arms",
            f"a participant's {games} games cannot each meet a different one of the "
            f"{n_arms} arms; play at most {n_arms} games, add arms, or remove it",
        )
    return design


def _texts_and_hash(top: Section, path: Path, raw: bytes, roles: tuple[Role, ...]) -> tuple[Texts, str]:
    """The Markdown texts and the study's hash: sha256 over the YAML's bytes then each text's, each length-prefixed
    (the instructions given per role, each role's in the order written). `roles`: the participants' roles, which
    per-role instructions must cover."""
    section = top.section("texts", (*TEXTS, "consent_version"))
    digest = hashlib.sha256(len(raw).to_bytes(8, "big") + raw)

    def read(field: str, relative: str) -> str:
        file = path.parent / relative
        try:
            data = read_bounded(file, str(file), path.parent)
            words = data.decode("utf-8")
        except Invalid as exc:
            section.error(field, str(exc))
            return ""
        except UnicodeDecodeError:
            section.error(field, f"{file} is not UTF-8 text; save it in UTF-8")
            return ""
        if not words.strip():
            section.error(field, f"{file} is empty; write the {field.split('.')[1]} text")
        digest.update(len(data).to_bytes(8, "big") + data)
        return words

    loaded: dict[str, Any] = {}
    for field in TEXTS:
        relative = section.get(field, _per_role if field == "instructions" else _TEXT_PATH)
        if isinstance(relative, dict):
            _cover_roles(section, f"texts.{field}", relative, roles)
            loaded[field] = {role: read(f"texts.{field}.{role}", file) for role, file in relative.items()}
        elif relative is not None:
            loaded[field] = read(f"texts.{field}", relative)
    version = section.get(
        "consent_version",
        text(r".{1,64}", 'text of at most 64 characters naming the consent form\'s version, e.g. "1.0"'),
    )
    consent, instructions, debrief = (loaded.get(field, "") for field in TEXTS)
    return Texts(consent, instructions, debrief, version), digest.hexdigest()


_TEXT_PATH = text(what="the path of a Markdown file, relative to the study file")


def _per_role(value: Any) -> str | dict[Role, str]:
    """A text's path, or one path per role ({buyer: FILE, seller: FILE})."""
    if not isinstance(value, dict):
        return _TEXT_PATH(value)
    if not value or any(key not in tuple(Role) for key in value):
        raise Invalid(
            "must be the path of a Markdown file, or a mapping of role to one ({buyer: FILE, seller: FILE}); "
            f"got {show(value)[:80]}"
        )
    return {Role(key): _TEXT_PATH(file) for key, file in value.items()}


def _cover_roles(section: Section, field: str, given: Mapping[Role, Any], roles: tuple[Role, ...]) -> None:
    """Per-role texts name exactly the participants' roles: one for each, none for a role nobody plays."""
    for role in roles:
        if role not in given:
            section.error(field, f"gives nothing for the {role} (cells.roles has it); add `{role}: ...`")
    for role in given:
        if role not in roles:
            section.error(
                f"{field}.{role}",
                f"no participant plays the {role} (cells.roles: {', '.join(roles)}); remove it, or add {role} "
                "to cells.roles",
            )


def _scenarios(top: Section, games: int | None) -> ScenarioPool:
    """The pool games are drawn from, with no fewer items than a participant's games (nobody meets one twice)."""
    section = top.section("scenarios", ("tier", "split", "list"))
    if section.ok and len(section.data) != 1:
        section.error(
            "scenarios",
            "write exactly one of tier (low, medium, high, very_high), split (train, val, "
            "test) or list (of TIER:INDEX such as low:12)",
        )
    refs, canonical = section.get("list", texts(1, "scenario reference"), ()), []
    for i, ref in enumerate(refs or ()):
        try:
            canonical.append(bundled().get(ref).ref)
        except ScenarioError as exc:
            section.error(f"scenarios.list[{i}]", f"{exc}; name a bundled scenario")
    if len(set(canonical)) < len(canonical):
        section.error("scenarios.list", "names a scenario twice; list each once")
    pool = ScenarioPool(
        section.get("tier", one_of(TIERS), None), section.get("split", one_of(SPLITS), None), tuple(canonical)
    )
    if section.ok and (pool.tier or pool.split or pool.refs) and games:
        items = len({scenario.product_name for scenario in pool.scenarios()})
        if games > items:
            top.error(
                "games_per_participant",
                f"{games} games exceed the {items} distinct items of the scenarios, and a participant never "
                f"bargains over an item twice; play at most {items} games or draw from more scenarios",
            )
    return pool


def _pairing(top: Section, arms: Mapping[str, StudyArm], roles: tuple[Role, ...]) -> Pairing | None:
    """The pairing of person arms: required with one, refused without."""
    people = [key for key, arm in arms.items() if arm.spec == PERSON]
    if not people:
        if "pairing" in top.data:
            top.error("pairing", "no arm has spec `person`: remove pairing, or add a person arm")
        return None
    if set(roles) != {Role.BUYER, Role.SELLER}:
        top.error(
            "cells.roles", f"a person arm (`{people[0]}`) pairs a buyer with a seller: list both roles in cells.roles"
        )
    if "pairing" not in top.data:
        top.error(
            "pairing",
            f"arm `{people[0]}` is a person: say how long a participant waits for a partner and what then "
            "(pairing: {max_wait_s: 180, otherwise: ARM_KEY or end, end_bonus: 0})",
        )
        return None
    section = top.section("pairing", ("max_wait_s", "otherwise", "end_bonus"))
    otherwise = section.get("otherwise", text(what="the key of a program arm, or end"))
    if otherwise is not None and otherwise != "end" and (otherwise not in arms or arms[otherwise].spec == PERSON):
        programs = [key for key, arm in arms.items() if arm.spec != PERSON]
        section.error(
            "pairing.otherwise",
            f"`{otherwise}` is not a program arm of this study; use one of {', '.join([*programs, 'end'])}",
        )
    return Pairing(
        section.get("max_wait_s", whole(10, 3600)), otherwise or "end", section.get("end_bonus", amount, 0.0)
    )


def _timing(top: Section) -> Timing:
    section = top.section("timing", ("move_seconds", "idle_minutes", "reply_delay", "matching"), optional=True)
    return Timing(
        section.get("move_seconds", whole(10, 3600), 120),
        section.get("idle_minutes", whole(1, 1440), 20),
        _delay(section, "reply_delay", 120, 300),
        _delay(section, "matching", 600, 3600),
    )


def _delay(section: Section, name: str, median_at_most: float, max_at_most: float) -> Pace | None:
    """A lognormal delay of timing (`median_s`, its spread, `max_s`), or None when the study names none."""
    if name not in section.data:
        return None
    delay = section.section(name, ("median_s", "spread", "max_s"))
    median = delay.get("median_s", number(0.5, median_at_most, "seconds"))
    spread = delay.get("spread", number(0.0, 2.0), 0.5)  # the sigma of the delay's logarithm
    most = delay.get("max_s", number(0.5, max_at_most, "seconds"))
    if median is not None and most is not None and most < median:
        delay.error(f"timing.{name}.max_s", f"is below median_s ({median:g}); make it at least the median")
    return Pace(median, spread, most) if median is not None and most is not None and spread is not None else None


def _payment(top: Section) -> Payment:
    section = top.section("payment", ("currency", "base", "bonus", "timeout_rule"))
    bonus = section.section("bonus", ("per_unit", "cap", "floor_at_zero"))
    return Payment(
        section.get("currency", text(r"[A-Z]{3}", "a three-letter ISO 4217 code such as GBP")),
        section.get("base", amount),
        Bonus(bonus.get("per_unit", amount), bonus.get("cap", amount), bonus.get("floor_at_zero", FLAG, True)),
        section.get("timeout_rule", one_of(TimeoutRule)),
    )


def _completion(top: Section) -> Completion:
    section = top.section(
        "completion", ("code", "screened_out_code", "redirect_url", "declined_message", "per_participant_codes")
    )
    return Completion(
        section.get("code", _CODE),
        section.get("screened_out_code", _CODE),
        section.get("declined_message", text()),
        section.get("redirect_url", _redirect, None),
        section.get("per_participant_codes", FLAG, False),
    )


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
            threshold = rule.get(key, whole(1 if ExclusionRule(key).under else 0))
            if key == ExclusionRule.FAILED_ATTENTION_CHECKS_OVER and threshold is not None and threshold >= n_checks:
                rule.error(
                    at(path, key),
                    f"can never apply with {n_checks} attention checks; use a number below "
                    f"{n_checks} or add attention_checks",
                )
            rules.append(Exclusion(ExclusionRule(key), threshold))
    if len({rule.rule for rule in rules}) < len(rules):
        top.error("exclusions", "names one rule twice; keep one")
    return tuple(rules)


def _participant_id(top: Section) -> ParticipantId:
    """The id's parameters and each one's pattern: its own (`id_patterns`), else the file's one for all (`id_pattern`,
    as files written before per-parameter patterns have it), else its platform's form or a loose one."""
    section = top.section("participant_id", ("parameters", "id_pattern", "id_patterns"), optional=True)
    parameters = section.get("parameters", texts(1, "URL parameter name"), DEFAULT_ID_PARAMETERS) or ()
    for i, name in enumerate(parameters):
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
            section.error(
                f"participant_id.parameters[{i}]", f"{name!r} is not a URL parameter name (letters, digits, _ . -)"
            )
    common = section.get("id_pattern", regex, None)
    own = section.section("id_patterns", parameters, optional=True)
    return ParticipantId(
        parameters, {name: own.get(name, regex, None) or common or default_id_pattern(name) for name in parameters}
    )
