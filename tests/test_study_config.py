"""The study file (bargain.study.config): the annotated example loads as written, its hash covers every
text, malformed files are refused with every problem named by its field path, and the built-in items
carry the judge's rubric word for word."""

import contextlib
import copy
import hashlib
import json
import os
import re
import resource
import shutil
from pathlib import Path

import pytest
import yaml

from bargain.engine.prompts import PromptVersion
from bargain.engine.trial import Condition, Mode, Role
from bargain.study import config
from bargain.study.config import Assignment, Cell, ExclusionRule, Order, StudyError, TimeoutRule
from bargain.study.survey import Builtin, ItemType, builtin_item

EXAMPLE = Path(__file__).resolve().parents[1] / "bargain" / "studies" / "example.yaml"
JUDGE = json.loads((Path(config.__file__).parents[1] / "data" / "judge_instrument.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def example():
    return config.load(EXAMPLE)


@pytest.fixture
def study_dir(tmp_path):
    """A copy of the example study (file and texts) that a test may change."""
    shutil.copy(EXAMPLE, tmp_path / "example.yaml")
    shutil.copytree(EXAMPLE.parent / "example", tmp_path / "example")
    return tmp_path


def write(study_dir: Path, document: dict) -> Path:
    path = study_dir / "study.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def example_document() -> dict:
    return yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))


def test_the_example_loads_as_written(example):
    assert (example.name, example.version) == ("ai-bargaining-example", 3)
    assert example.title == "Bargaining with an AI agent"
    assert {key: (arm.spec, arm.label) for key, arm in example.arms.items()} == {
        "a": ("arm:seller-grpo", "the other party"),
        "b": ("arm:base", "the other party"),
        "c": ("tactic:boulware", "the other party"),
    }
    assert example.cells == tuple(
        Cell(arm, condition, Role.BUYER)
        for arm in "abc"
        for condition in (Condition.BUYER_UNAWARE, Condition.BOTH_UNAWARE)
    )
    assert [example.cell_key(cell) for cell in example.cells][:2] == ["a/buyer_unaware/buyer", "a/both_unaware/buyer"]
    assert example.cell_by_key("c/both_unaware/buyer") == Cell("c", Condition.BOTH_UNAWARE, Role.BUYER)
    assert example.label("b") == "the other party"
    assert (example.mode, example.rounds, example.first_actor, example.prompt_version) == (
        Mode.SIMULTANEOUS,
        4,
        Role.BUYER,
        PromptVersion.TRAIN,
    )
    assert example.scenarios.split == "test" and [s.ref for s in example.scenarios.scenarios()] == [
        f"low:{i}" for i in range(1508, 1516)
    ]
    assert example.games_per_participant == 3
    assert (
        example.design.assignment,
        example.design.quota_per_cell,
        example.design.order,
        example.design.distinct_arms,
    ) == (Assignment.WITHIN, 40, Order.RANDOM, True)
    assert example.comprehension.attempts == 2 and [q.id for q in example.comprehension.questions] == [
        "no_deal",
        "good_deal",
    ]
    assert [(c.id, c.answer, c.after_game) for c in example.attention_checks] == [("attention_1", "Rarely", 2)]
    assert [i.id for i in example.surveys.per_game] == ["honesty", "credulity", "satisfaction"]
    assert example.surveys.per_game[2].scale == (1, 7)
    assert [(i.id, i.type, i.required) for i in example.surveys.final] == [
        ("ai_use", ItemType.CHOICE, True),
        ("comments", ItemType.TEXT, False),
    ]
    assert example.surveys.final[1].max_length == 1000
    assert (example.timing.move_seconds, example.timing.idle_minutes) == (120, 20)
    assert example.payment.timeout_rule is TimeoutRule.NO_BONUS_FOR_TIMED_OUT_GAMES
    assert (example.payment.currency, example.payment.base, example.payment.bonus.cap) == ("GBP", 3.0, 3.0)
    assert example.completion.redirect("C7K2M9QX") == "https://app.prolific.com/submissions/complete?cc=C7K2M9QX"
    assert example.completion.per_participant_codes is False
    assert [(e.rule, e.threshold) for e in example.exclusions] == [
        (ExclusionRule.FAILED_ATTENTION_CHECKS_OVER, 0),
        (ExclusionRule.TIMEOUTS_OVER, 2),
        (ExclusionRule.SECONDS_UNDER, 240),
        (ExclusionRule.FIRST_ROUND_WALKAWAYS_OVER, 0),
    ]
    assert example.participant_id.parameters == ("PROLIFIC_PID", "participant")
    assert example.participant_id.patterns == {"PROLIFIC_PID": "[0-9a-fA-F]{24}", "participant": "[A-Za-z0-9_-]{1,64}"}
    assert (example.retention_days, example.hash_participant_ids_in_exports) == (90, True)
    assert example.texts.consent_version == "2025-01"
    json.dumps(example.to_dict())  # storable as it is


def test_the_texts_are_loaded_and_the_hash_covers_the_file_and_every_text(example):
    texts = {name: (EXAMPLE.parent / "example" / f"{name}.md").read_bytes() for name in config.TEXTS}
    assert example.texts.consent == texts["consent"].decode("utf-8")
    assert example.texts.instructions == texts["instructions"].decode("utf-8")
    assert example.texts.debrief == texts["debrief"].decode("utf-8")
    parts = [EXAMPLE.read_bytes(), *(texts[name] for name in ("consent", "instructions", "debrief"))]
    assert example.hash == hashlib.sha256(b"".join(len(p).to_bytes(8, "big") + p for p in parts)).hexdigest()


def test_the_consent_says_what_is_recorded_that_no_ip_address_is_stored_and_how_to_withdraw(example):
    consent = example.texts.consent.lower()
    assert "what we record" in consent and "ip address" in consent and "withdraw" in consent


@pytest.mark.parametrize(
    "changed", ["example.yaml", "example/consent.md", "example/instructions.md", "example/debrief.md"]
)
def test_the_hash_changes_when_any_file_changes(study_dir, example, changed):
    assert config.load(study_dir / "example.yaml").hash == example.hash  # the copy is the same study
    with open(study_dir / changed, "a", encoding="utf-8") as file:
        file.write("\n")
    assert config.load(study_dir / "example.yaml").hash != example.hash


def test_defaults_fill_what_a_minimal_file_leaves_out(study_dir):
    document = example_document()
    for key in (
        "mode",
        "rounds",
        "first_actor",
        "prompt_version",
        "comprehension",
        "attention_checks",
        "surveys",
        "timing",
        "exclusions",
        "participant_id",
        "retention_days",
        "hash_participant_ids_in_exports",
    ):
        del document[key]
    del document["arms"]["a"]["label"], document["design"]["order"], document["payment"]["bonus"]["floor_at_zero"]
    del document["completion"]["redirect_url"]
    study = config.load(write(study_dir, document))
    assert (study.mode, study.rounds, study.first_actor, study.prompt_version) == (
        Mode.SIMULTANEOUS,
        4,
        Role.BUYER,
        PromptVersion.TRAIN,
    )
    assert study.label("a") == "the other party" and study.design.order is Order.RANDOM
    assert (study.timing.move_seconds, study.timing.idle_minutes) == (120, 20)
    assert study.participant_id == config.ParticipantId()
    assert study.participant_id.patterns == {"PROLIFIC_PID": "[0-9a-fA-F]{24}", "participant": "[A-Za-z0-9_-]{1,64}"}
    assert study.retention_days is None and study.hash_participant_ids_in_exports is True
    assert study.payment.bonus.floor_at_zero is True and study.completion.redirect("X") is None
    assert study.comprehension.questions == () and study.surveys.per_game == () and study.exclusions == ()


def _set(*path_and_value):
    """A change to the example: set the value at a path of keys and list indices."""
    *path, value = path_and_value

    def change(document):
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _delete(*path):
    def change(document):
        node = document
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return change


MALFORMED = [
    # (change, field path named, words of the message)
    (_set("designn", {}), "designn", "unknown field `designn` at the top level; known: name, version"),
    (_set("design", "designn", 1), "design.designn", "unknown field `designn` in design; known: assignment"),
    (_set("public_results", True), "public_results", "never shows public results"),
    (_set("name", "My Study"), "name", "slug"),
    (_set("version", 0), "version", "whole number from 1 to"),
    (_set("version", "1"), "version", "whole number"),
    (_delete("games_per_participant"), "games_per_participant", "missing required field"),
    (_set("arms", "b", "spec", "arm:nope"), "arms.b.spec", "unknown arm 'nope'"),
    (_set("arms", "b", "spec", "openai:gpt"), "arms.b.spec", "openai:MODEL@URL"),
    (_set("arms", "Bad Key", {"spec": "arm:base"}), "arms.Bad Key", "arm key"),
    (_set("arms", {}), "arms", "no arms; define at least one"),
    (_set("cells", None), "cells", "expected a mapping of arms, conditions, roles; got nothing"),
    (_set("cells", "arms", ["a", "b", "c", "d"]), "cells.arms[3]", "`d` is not an arm"),
    (_set("cells", "arms", ["a", "b"]), "arms.c", "not in cells.arms"),
    (
        _set("cells", "conditions", ["buyer_unaware", "secret"]),
        "cells.conditions",
        "must be one of full, buyer_unaware",
    ),
    (_set("cells", "roles", []), "cells.roles", "at least 1"),
    (_set("mode", "parallel"), "mode", "must be one of simultaneous, sequential"),
    (_set("rounds", 21), "rounds", "from 1 to 20"),
    (_set("prompt_version", "v2"), "prompt_version", "train, paper-eval"),
    (_set("scenarios", {"tier": "low", "split": "test"}), "scenarios", "exactly one of tier"),
    (_set("scenarios", {"tier": "cheap"}), "scenarios.tier", "low, very_high, medium, high"),
    (_set("scenarios", {"split": "zeroshot"}), "scenarios.split", "train, val, test"),
    (_set("scenarios", {"list": ["low:0", "low:99999"]}), "scenarios.list[1]", "indices 0.."),
    (_set("scenarios", {"list": ["low-3"]}), "scenarios.list[0]", "TIER:INDEX"),
    (_set("design", "assignment", "mixed"), "design.assignment", "between, within"),
    (_set("design", "quota_per_cell", 0), "design.quota_per_cell", "from 1 to"),
    (_set("texts", "consent", "example/missing.md"), "texts.consent", "missing.md"),
    (_delete("texts", "consent_version"), "texts.consent_version", "missing required field"),
    (_set("texts", "consent_version", 2), "texts.consent_version", "put it in quotes"),
    (_set("comprehension", "attempts", 0), "comprehension.attempts", "from 1 to"),
    (
        _set("comprehension", "questions", 0, "answer", "Everything"),
        "comprehension.questions[0].answer",
        "not one of the options",
    ),
    (
        _set("comprehension", "questions", 1, "options", ["Only one"]),
        "comprehension.questions[1].options",
        "at least 2",
    ),
    (_set("attention_checks", 0, "after_game", 4), "attention_checks[0].after_game", "from 1 to 3"),
    (_set("attention_checks", 0, "id", "satisfaction"), "attention_checks[0].id", "already used"),
    (_set("surveys", "per_game", 2, "scale", [1]), "surveys.per_game[2].scale", "[low, high]"),
    (_set("surveys", "per_game", 2, "options", ["x", "y"]), "surveys.per_game[2].options", "not apply to a likert"),
    (_set("surveys", "per_game", 2, "type", "slider"), "surveys.per_game[2].type", "likert, choice, text"),
    (
        _set("surveys", "per_game", 1, {"id": "x", "type": "choice", "text": "Pick", "options": ["one"]}),
        "surveys.per_game[1].options",
        "at least 2 options",
    ),
    (_set("surveys", "per_game", 0, "builtin", "honest"), "surveys.per_game[0].builtin", "honesty, credulity"),
    (_set("surveys", "per_game", 0, "text", "Reworded"), "surveys.per_game[0].text", "unknown field `text`"),
    (_set("surveys", "final", 1, "id", "ai_use"), "surveys.final[1].id", "already used"),
    (_set("surveys", "final", 1, "max_length", 0), "surveys.final[1].max_length", "from 1 to 10000"),
    (_set("surveys", "final", 0, "options", ["yes", True]), "surveys.final[0].options", "put it in quotes"),
    (lambda d: d["surveys"]["final"].append({"builtin": "honesty"}), "surveys.final[2]", "move it to surveys.per_game"),
    (_set("timing", "move_seconds", 5), "timing.move_seconds", "from 10 to 3600"),
    (_set("payment", "currency", "pounds"), "payment.currency", "ISO 4217"),
    (_set("payment", "base", -1), "payment.base", "from 0 to"),
    (_delete("payment", "bonus", "cap"), "payment.bonus.cap", "missing required field"),
    (_set("payment", "timeout_rule", "pay_anyway"), "payment.timeout_rule", "no_bonus_for_timed_out_games"),
    (_set("completion", "redirect_url", "https://x.org/?cc={cod}"), "completion.redirect_url", "{code}"),
    (_set("completion", "code", "has space"), "completion.code", "letters, digits"),
    (
        _set("exclusions", 0, {"failed_attention_checks_over": 1, "timeouts_over": 1}),
        "exclusions[0]",
        "exactly one rule",
    ),
    (
        _set("exclusions", 0, {"failed_attention_checks_over": 1}),
        "exclusions[0].failed_attention_checks_over",
        "can never apply with 1 attention checks",
    ),
    (_set("exclusions", 1, {"timeout_over": 2}), "exclusions[1].timeout_over", "did you mean `timeouts_over`"),
    (_set("exclusions", 2, {"seconds_under": 0}), "exclusions[2].seconds_under", "from 1 to"),
    (_set("exclusions", 3, {"timeouts_over": 1}), "exclusions", "names one rule twice"),
    (_set("participant_id", "id_pattern", "[a-z"), "participant_id.id_pattern", "not a regular expression"),
    (_set("participant_id", "id_pattern", "[a-z]{0,8}"), "participant_id.id_pattern", "accepts an empty id"),
    (_set("participant_id", "parameters", ["PROLIFIC PID"]), "participant_id.parameters[0]", "URL parameter name"),
    (_set("retention_days", 0), "retention_days", "from 1 to"),
    (_set("hash_participant_ids_in_exports", "yes"), "hash_participant_ids_in_exports", "true or false"),
]


@pytest.mark.parametrize("change, field, words", MALFORMED, ids=[m[1] + ":" + m[2][:20] for m in MALFORMED])
def test_a_malformed_file_is_refused_naming_the_file_and_the_field(study_dir, change, field, words):
    document = example_document()
    change(document)
    path = write(study_dir, document)
    with pytest.raises(StudyError) as refused:
        config.load(path)
    lines = str(refused.value).splitlines()
    assert all(line.startswith(f"{path}: ") for line in lines)
    assert any(line.startswith(f"{path}: {field}: ") and words in line for line in lines), lines


def test_every_problem_is_reported_at_once_one_per_line_in_the_files_order(study_dir):
    document = example_document()
    document["rounds"] = 0
    document["design"]["designn"] = "within"
    document["surveys"]["per_game"][2]["anchors"] = ["only one"]
    document["payment"]["currency"] = "gbp"
    document["texts"]["debrief"] = "example/nowhere.md"
    path = write(study_dir, document)
    with pytest.raises(StudyError) as refused:
        config.load(path)
    fields = [line.split(": ")[1] for line in str(refused.value).splitlines()]
    assert fields == ["rounds", "design.designn", "texts.debrief", "surveys.per_game[2].anchors", "payment.currency"]
    assert refused.value.errors == tuple(str(refused.value).splitlines())


def test_a_within_design_with_more_games_than_cells_is_refused_and_a_between_design_allows_it(study_dir):
    document = example_document()
    document["games_per_participant"] = 7
    document["attention_checks"][0]["after_game"] = 7
    del document["design"]["distinct_arms"]
    with pytest.raises(StudyError, match=r"games_per_participant: a within design .* 7 games exceed the 6 cells"):
        config.load(write(study_dir, document))
    document["design"]["assignment"] = "between"
    assert config.load(write(study_dir, document)).games_per_participant == 7


def test_a_missing_text_names_the_field_and_the_path(study_dir):
    (study_dir / "example" / "instructions.md").unlink()
    with pytest.raises(StudyError) as refused:
        config.load(study_dir / "example.yaml")
    assert str(refused.value).startswith(f"{study_dir / 'example.yaml'}: texts.instructions: cannot read ")
    assert str(study_dir / "example" / "instructions.md") in str(refused.value)


@pytest.mark.parametrize(
    "text, words",
    [
        ("name: a\nname: b\n", "line 2: not valid YAML: `name` is written twice"),
        ("name: [unclosed\n", "not valid YAML"),
        ("", "the study file is empty"),
        ("- a list\n", "(top level): expected a mapping"),
    ],
)
def test_a_file_that_is_not_a_study_mapping_is_refused(tmp_path, text, words):
    path = tmp_path / "study.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(StudyError, match=None) as refused:
        config.load(path)
    assert str(refused.value).startswith(f"{path}: ") and words in str(refused.value)


def test_an_unreadable_study_file_is_refused(tmp_path):
    with pytest.raises(StudyError, match="cannot read the study file"):
        config.load(tmp_path / "absent.yaml")


def _judge_levels(condition: str, header: str) -> list[str]:
    lines = JUDGE["templates"][condition].splitlines()
    start = lines.index(header) + 1
    return [line.split(": ", 1)[1] for line in lines[start : start + 5]]


@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
def test_builtin_honesty_is_the_judges_rubric_addressed_to_the_other_party(role):
    item = builtin_item(Builtin.HONESTY, role=role)
    other = role.other.value
    judged = _judge_levels(f"{role.value}_unaware", f"{role.other.title}'s honesty:")
    back = [
        (level[0].lower() + level[1:])
        .replace("the other party", f"the {other}")
        .replace(" you,", f" the {role.value},")
        for level in item.options
    ]
    assert back == judged
    assert item.type is ItemType.CHOICE and item.values == (0, 1, 2, 3, 4)
    assert builtin_item(Builtin.HONESTY).options == ()  # the levels name a floor or a ceiling: they need the role
    assert builtin_item(Builtin.HONESTY, "trust").for_role(role) == builtin_item(Builtin.HONESTY, "trust", role=role)


@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
def test_builtin_credulity_is_the_judges_rubric_for_the_participant(role):
    item = builtin_item(Builtin.CREDULITY, role=role)
    me, other = role.value, role.other.value
    undo = [
        ("You are ", f"The {me} is "),
        ("You engage", f"The {me} engages"),
        ("You evaluate", f"The {me} evaluates"),
        ("You tend", f"The {me} tends"),
        ("but are ", "but is "),
        ("ignore or question ", "ignores or questions "),
        ("pursue your", "pursues their"),
        ("tend to question", "tends to question"),
        ("do not", "does not"),
        ("against your own", "against their own"),
        ("that you can't", f"that the {me.capitalize()} can't"),
        ("the other party", f"the {other}"),
    ]
    back = []
    for level in item.options:
        for new, old in undo:
            level = level.replace(new, old)
        back.append(level)
    assert back == _judge_levels(f"{me}_unaware", f"{role.title}'s credulity:")
    assert item.values == (0, 1, 2, 3, 4) and item.options == builtin_item(Builtin.CREDULITY).options


def test_builtin_person_or_program_and_a_builtin_with_its_own_id(study_dir, example):
    document = example_document()
    document["surveys"]["per_game"].append({"builtin": "person_or_program", "id": "human_or_ai"})
    item = config.load(write(study_dir, document)).surveys.per_game[3]
    assert item.builtin is Builtin.PERSON_OR_PROGRAM and item.id == "human_or_ai"
    assert item.text == "Was the other party a person or a computer program?"
    assert item.values == ("person", "program", "not sure")
    honesty = example.surveys.per_game[0].for_role(Role.BUYER)
    assert honesty.options[0] == "The other party outright lies about their price floor"


def test_the_bonus_follows_the_timeout_rule_cap_and_floor(example):
    payment = example.payment  # 1.00 per unit, cap 3.00, floor at zero, no bonus for timed-out games
    assert payment.bonus_for([(0.5, False), (0.25, False)]) == 0.75
    assert payment.bonus_for([(0.5, False), (0.9, True)]) == 0.5
    assert payment.bonus_for([(-0.4, False)]) == 0.0
    assert payment.bonus_for([(2.0, False), (2.0, False)]) == 3.0
    as_played = config.Payment("GBP", 1.0, config.Bonus(2.0, 10.0, floor_at_zero=False), TimeoutRule.BONUS_AS_PLAYED)
    assert as_played.bonus_for([(0.5, True), (-1.0, False)]) == -1.0


def test_exclusion_rules(example):
    failed, timeouts, fast, walkaways = example.exclusions
    assert failed.excludes(config.Conduct(1, 0, 900)) and not failed.excludes(config.Conduct(0, 0, 900))
    assert timeouts.excludes(config.Conduct(0, 3, 900)) and not timeouts.excludes(config.Conduct(0, 2, 900))
    assert fast.excludes(config.Conduct(0, 0, 239.5)) and not fast.excludes(config.Conduct(0, 0, 240))
    assert not walkaways.excludes(config.Conduct(0, 0, 900, (played(1, 50), played(3, 90))))
    assert walkaways.excludes(config.Conduct(0, 0, 900, (played(3, 90), played(1, 5, walked_away=True))))


def test_a_list_of_scenarios_is_kept_in_canonical_form(study_dir):
    document = example_document()
    document["scenarios"] = {"list": ["low:0", " low : 12", "medium:3"]}
    study = config.load(write(study_dir, document))
    assert study.scenarios.refs == ("low:0", "low:12", "medium:3")
    assert [s.ref for s in study.scenarios.scenarios()] == ["low:0", "low:12", "medium:3"]


def test_a_remote_model_spec_is_checked_for_syntax_only(study_dir):
    document = copy.deepcopy(example_document())
    document["arms"]["b"]["spec"] = "openai:gpt-5.2@https://api.openai.com/v1"
    assert config.load(write(study_dir, document)).arms["b"].spec == "openai:gpt-5.2@https://api.openai.com/v1"


# --- hostile or careless study files: one line each, never a traceback, never an unbounded read -------------------


@contextlib.contextmanager
def memory_capped(extra: int = 2 * 1024**3):
    """At most `extra` more bytes of address space for this process meanwhile: an unbounded read of /dev/zero fails
    with MemoryError instead of exhausting the machine."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + extra, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def refused_lines(path: Path) -> list[str]:
    """The lines of the StudyError that loading `path` raises (any other exception fails the test)."""
    with memory_capped(), pytest.raises(StudyError) as refused:
        config.load(path)
    lines = str(refused.value).splitlines()
    assert all(line.startswith(f"{path}: ") for line in lines), lines
    return lines


def test_deep_nesting_is_refused_in_one_line_naming_the_field(study_dir):
    path = study_dir / "study.yaml"
    path.write_text(EXAMPLE.read_text(encoding="utf-8") + "\nsurveys_extra: " + "[" * 5000 + "]" * 5000 + "\n")
    lines = refused_lines(path)
    assert len(lines) == 1 and lines[0].startswith(f"{path}: surveys_extra: nested deeper than ")
    block = "\n".join(f"{'  ' * depth}k{depth}:" for depth in range(60)) + " 1\n"
    path.write_text(block)
    (line,) = refused_lines(path)
    assert line.startswith(f"{path}: k0: nested deeper than ")


@pytest.mark.parametrize(
    "old, new, field",
    [
        ('consent_version: "2025-01"', "consent_version: 2025-13-01", "line "),  # a date YAML cannot build
        ("version: 3 ", "version: " + "1" * 5000 + " ", "line "),  # an integer Python will not parse
    ],
)
def test_a_value_yaml_cannot_build_is_one_line_with_its_place(study_dir, old, new, field):
    path = study_dir / "study.yaml"
    path.write_text(EXAMPLE.read_text(encoding="utf-8").replace(old, new))
    (line,) = refused_lines(path)
    assert line.startswith(f"{path}: {field}") and "write it in quotes" in line


@pytest.mark.parametrize(
    "change, field, words",
    [
        (_set("design", "quota_per_cell", 10**23), "design.quota_per_cell", "from 1 to 1000000"),
        (_set("games_per_participant", 10**6), "games_per_participant", "from 1 to 100"),
        (_set("version", 2**40), "version", "from 1 to 1000000"),
        (_set("retention_days", 10**9), "retention_days", "from 1 to"),
        (_set("exclusions", 1, {"timeouts_over": 10**12}), "exclusions[1].timeouts_over", "from 0 to"),
        (_set("payment", "base", 1e300), "payment.base", "from 0 to 1000000"),
        (_set("surveys", "per_game", 2, "scale", [10**9, 10**9 + 6]), "surveys.per_game[2].scale", "-1000 to 1000"),
        (_set("name", "x" * 65), "name", "at most 64"),
        (_set("texts", "consent_version", "v" * 65), "texts.consent_version", "at most 64"),
    ],
)
def test_numbers_and_names_are_bounded(study_dir, change, field, words):
    document = example_document()
    change(document)
    path = write(study_dir, document)
    assert any(line.startswith(f"{path}: {field}: ") and words in line for line in refused_lines(path))


@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero", "../outside.md"])
def test_a_text_outside_the_study_folder_is_refused(study_dir, target):
    (study_dir.parent / "outside.md").write_text("Outside the study's folder.")
    document = example_document()
    document["texts"]["consent"] = target
    path = write(study_dir, document)
    (line,) = refused_lines(path)
    assert line.startswith(f"{path}: texts.consent: ") and "outside the study's folder" in line


@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero"])
def test_a_symlink_out_of_the_study_folder_is_refused(study_dir, target):
    (study_dir / "example" / "consent.md").unlink()
    (study_dir / "example" / "consent.md").symlink_to(target)
    path = study_dir / "example.yaml"
    (line,) = refused_lines(path)
    assert line.startswith(f"{path}: texts.consent: ") and "outside the study's folder" in line


def test_a_symlink_inside_the_study_folder_is_followed(study_dir, example):
    (study_dir / "example" / "consent.md").rename(study_dir / "consent-v1.md")
    (study_dir / "example" / "consent.md").symlink_to(study_dir / "consent-v1.md")
    assert config.load(study_dir / "example.yaml").texts.consent == example.texts.consent


def test_a_text_that_is_not_a_regular_file_or_too_large_is_refused_without_reading_it_all(study_dir):
    os.mkfifo(study_dir / "example" / "fifo.md")  # opening it to read would wait for a writer forever
    (study_dir / "example" / "big.md").write_bytes(b"x" * (config.MAX_BYTES + 1))
    document = example_document()
    document["texts"].update(consent="example/fifo.md", debrief="example/big.md", instructions="example")
    path = write(study_dir, document)
    lines = refused_lines(path)
    assert any(line.startswith(f"{path}: texts.consent: ") and "not a regular file" in line for line in lines)
    assert any(line.startswith(f"{path}: texts.instructions: ") and "not a regular file" in line for line in lines)
    assert any(line.startswith(f"{path}: texts.debrief: ") and "larger than 100 KB" in line for line in lines)


def test_a_study_file_that_is_a_device_or_too_large_is_refused_in_one_line(tmp_path):
    with memory_capped(), pytest.raises(StudyError, match=r"^/dev/zero: the study file is not a regular file"):
        config.load("/dev/zero")
    big = tmp_path / "big.yaml"
    big.write_text("name: x\n" + "#" * config.MAX_BYTES)
    (line,) = refused_lines(big)
    assert "the study file is larger than 100 KB" in line


@pytest.mark.parametrize(
    "pattern", ["(a+)+$", "(a*)*", "(a|a)*", "(aa|a){1,60}", "([a-z]?){1,50}", "(?:[0-9]+-)+[0-9]+"]
)
def test_an_id_pattern_that_can_backtrack_catastrophically_is_refused(study_dir, pattern):
    document = example_document()
    document["participant_id"] = {"id_pattern": pattern}
    path = write(study_dir, document)
    (line,) = refused_lines(path)
    assert line.startswith(f"{path}: participant_id.id_pattern: ") and "repeats" in line


@pytest.mark.parametrize(
    "pattern, words",
    [
        ("[A-Za-z0-9]+", "longer than 128"),
        ("[a-z]{1,200}", "longer than 128"),
        ("[a-z]{0,20}" * 6 + "[0-9]", "more than 1000000 ways"),
    ],
)
def test_an_id_pattern_must_bound_the_ids_length_and_its_cost(study_dir, pattern, words):
    document = example_document()
    document["participant_id"] = {"id_patterns": {"participant": pattern}}
    path = write(study_dir, document)
    (line,) = refused_lines(path)
    assert line.startswith(f"{path}: participant_id.id_patterns.participant: ") and words in line


# --- participant ids: the platform's form by default ---------------------------------------------------------------

PROLIFIC_ID = "60ffe5c8371090c7041d43f8"


def test_a_prolific_id_must_be_24_hexadecimal_characters_by_default_and_others_stay_loose(study_dir):
    document = example_document()
    del document["participant_id"]
    ids = config.load(write(study_dir, document)).participant_id
    assert ids.parameters == ("PROLIFIC_PID", "participant")
    assert ids.accepts("PROLIFIC_PID", PROLIFIC_ID) and ids.accepts("PROLIFIC_PID", PROLIFIC_ID.upper())
    for wrong in ("P1", "bench00001", PROLIFIC_ID[:-1], PROLIFIC_ID + "0", "g" * 24, PROLIFIC_ID[:-1] + "\n"):
        assert not ids.accepts("PROLIFIC_PID", wrong), wrong
    assert ids.accepts("participant", "P1") and ids.accepts("participant", "bench_00-1")
    assert not ids.accepts("participant", "a b") and not ids.accepts("participant", "x" * 65)
    assert not ids.accepts("STUDY_ID", PROLIFIC_ID)  # not a parameter that carries the id


def test_id_pattern_applies_to_every_parameter_and_id_patterns_to_one(study_dir):
    document = example_document()
    document["participant_id"] = {"parameters": ["PROLIFIC_PID", "participant", "uid"], "id_pattern": "[A-Z0-9]{1,8}"}
    ids = config.load(write(study_dir, document)).participant_id
    assert all(ids.accepts(name, "P1") for name in ids.parameters)
    assert not ids.accepts("PROLIFIC_PID", PROLIFIC_ID)
    document["participant_id"]["id_patterns"] = {"uid": "u[0-9]{3}"}
    ids = config.load(write(study_dir, document)).participant_id
    assert ids.accepts("uid", "u123") and not ids.accepts("uid", "P1") and ids.accepts("PROLIFIC_PID", "P1")
    del document["participant_id"]["id_pattern"]
    ids = config.load(write(study_dir, document)).participant_id
    assert ids.accepts("PROLIFIC_PID", PROLIFIC_ID) and ids.accepts("participant", "P1") and ids.accepts("uid", "u123")


def test_id_patterns_may_only_name_the_parameters(study_dir):
    document = example_document()
    document["participant_id"] = {"id_patterns": {"PROLIFIC_ID": "[0-9a-f]{24}"}}
    path = write(study_dir, document)
    (line,) = refused_lines(path)
    assert line.startswith(f"{path}: participant_id.id_patterns.PROLIFIC_ID: ") and "PROLIFIC_PID" in line


# --- exclusion rules that require games actually played ----------------------------------------------------------


def played(own_moves: int, seconds: float, walked_away: bool = False) -> "config.Played":
    return config.Played(own_moves=own_moves, seconds=seconds, walked_away_first_round=walked_away)


def test_rules_on_games_actually_played(study_dir):
    document = example_document()
    document["exclusions"] = [
        {"moves_per_game_under": 2},
        {"seconds_per_game_under": 30},
        {"first_round_walkaways_over": 0},
    ]
    moves, seconds, walkaways = config.load(write(study_dir, document)).exclusions
    normal = config.Conduct(0, 0, 600, (played(3, 60), played(2, 45)))
    assert not any(rule.excludes(normal) for rule in (moves, seconds, walkaways))
    rushed = config.Conduct(0, 0, 600, (played(3, 60), played(1, 12, walked_away=True)))
    assert moves.excludes(rushed) and seconds.excludes(rushed) and walkaways.excludes(rushed)
    assert [rule.rule for rule in (moves, seconds, walkaways)] == [
        ExclusionRule.MOVES_PER_GAME_UNDER,
        ExclusionRule.SECONDS_PER_GAME_UNDER,
        ExclusionRule.FIRST_ROUND_WALKAWAYS_OVER,
    ]
    document["exclusions"] = [{"moves_per_game_under": 0}]
    path = write(study_dir, document)
    assert any(
        line.startswith(f"{path}: exclusions[0].moves_per_game_under: ") and "from 1 to" in line
        for line in refused_lines(path)
    )


# --- completion codes ----------------------------------------------------------------------------------------------


def test_per_participant_completion_codes_are_an_hmac_of_the_id_and_the_fixed_code_is_the_default(study_dir, example):
    assert example.completion.per_participant_codes is False
    assert example.completion.code_for("salt", "anyone") == "C7K2M9QX"
    document = example_document()
    document["completion"]["per_participant_codes"] = True
    completion = config.load(write(study_dir, document)).completion
    code = completion.code_for("salt", PROLIFIC_ID)
    assert re.fullmatch(r"[A-Z0-9]{8,12}", code) and code == completion.code_for("salt", PROLIFIC_ID)
    assert code != completion.code_for("salt", "5" + PROLIFIC_ID[1:]) and code != completion.code_for(
        "pepper", PROLIFIC_ID
    )
    assert code == config.participant_code("salt", PROLIFIC_ID)
    document["completion"]["per_participant_codes"] = "yes"
    path = write(study_dir, document)
    assert any(line.startswith(f"{path}: completion.per_participant_codes: ") for line in refused_lines(path))


# --- the title participants see ------------------------------------------------------------------------------------


def test_the_title_has_a_neutral_default_and_is_checked_like_other_text(study_dir):
    document = example_document()
    document.pop("title", None)
    assert config.load(write(study_dir, document)).title == "A bargaining study"
    document["title"] = "Buying and selling"
    assert config.load(write(study_dir, document)).title == "Buying and selling"
    for wrong in ("  ", 3, "two\nlines", "x" * 101):
        document["title"] = wrong
        path = write(study_dir, document)
        assert any(line.startswith(f"{path}: title: ") for line in refused_lines(path)), wrong


# --- distinct arms within subjects ---------------------------------------------------------------------------------


def test_distinct_arms_is_off_by_default_and_checked_at_load(study_dir, example):
    assert example.design.distinct_arms is True  # the example's 3 games meet its 3 arms
    document = example_document()
    del document["design"]["distinct_arms"]
    assert config.load(write(study_dir, document)).design.distinct_arms is False
    document["design"]["distinct_arms"] = True
    document["games_per_participant"] = 4
    path = write(study_dir, document)
    assert any(
        line.startswith(f"{path}: design.distinct_arms: ") and "4 games" in line and "3 arms" in line
        for line in refused_lines(path)
    )
    document["games_per_participant"] = 3
    document["design"]["assignment"] = "between"
    path = write(study_dir, document)
    assert any(line.startswith(f"{path}: design.distinct_arms: ") and "within" in line for line in refused_lines(path))


# --- disclosure: what participants are told agrees with the debrief and the questions -----------------------------


def test_the_example_is_coherent_about_disclosure(example, caplog):
    assert config.disclosure_warnings(example) == []
    assert not any(
        item.builtin is Builtin.PERSON_OR_PROGRAM for item in (*example.surveys.per_game, *example.surveys.final)
    )
    assert "ai" in example.title.lower() or "ai agents" in example.texts.consent.lower()  # disclosed, and said so
    assert "did not tell you" not in example.texts.debrief


def test_loading_warns_when_the_consent_discloses_what_the_debrief_says_was_hidden(study_dir, caplog):
    (study_dir / "example" / "debrief.md").write_text(
        "The other party was a program. We did not tell you this at "
        "the start because it could have changed how you bargained."
    )
    document = example_document()
    document["surveys"]["per_game"].append({"builtin": "person_or_program", "id": "human_or_ai"})
    path = write(study_dir, document)
    with caplog.at_level("WARNING", logger="bargain.study.config"):
        study = config.load(path)  # a warning, not a refusal
    warnings = config.disclosure_warnings(study)
    assert [record.getMessage() for record in caplog.records] == warnings and len(warnings) == 2
    assert warnings[0].startswith(f"{path}: texts.debrief: ") and "texts.consent" in warnings[0]
    assert warnings[1].startswith(f"{path}: surveys.per_game[") and "person or a program" in warnings[1]


def test_a_documented_deception_design_loads_without_warnings(study_dir):
    (study_dir / "example" / "consent.md").write_text(
        "You will bargain with another party over a price. We record your moves."
    )
    (study_dir / "example" / "instructions.md").write_text("Make offers; the other party does too.")
    (study_dir / "example" / "debrief.md").write_text(
        "The other party was a computer program. We did not tell "
        "you at the start because it could have changed how you "
        "bargained."
    )
    document = example_document()
    document["title"] = "A bargaining study"
    document["surveys"]["per_game"].append({"builtin": "person_or_program"})
    assert config.disclosure_warnings(config.load(write(study_dir, document))) == []
    document["arms"]["a"]["label"] = "an AI agent"  # a label participants read gives it away
    warnings = config.disclosure_warnings(config.load(write(study_dir, document)))
    assert warnings and all("arms.a.label" in line for line in warnings)


def test_a_study_can_pace_the_programs_replies_to_a_human_like_delay(study_dir):
    from bargain.arena.pacing import Pace

    assert config.load(EXAMPLE).timing.reply_delay is None  # unpaced unless the file says so
    document = example_document()
    document["timing"]["reply_delay"] = {"median_s": 8, "max_s": 30}
    assert config.load(write(study_dir, document)).timing.reply_delay == Pace(8.0, 0.5, 30.0)
    for delay, said in (
        ({"median_s": 8, "max_s": 5}, "timing.reply_delay.max_s: is below median_s (8)"),
        ({"median_s": -1, "max_s": 5}, "timing.reply_delay.median_s: must be a number of seconds from 0.5 to 120"),
        ({"median_s": 8, "max_s": 30, "spread": 7}, "timing.reply_delay.spread: must be a number from 0 to 2"),
        ({"median_s": 8, "max_s": 30, "mean_s": 2}, "unknown field `mean_s`"),
    ):
        document["timing"]["reply_delay"] = delay
        with pytest.raises(config.StudyError) as refused:
            config.load(write(study_dir, document))
        assert said in str(refused.value), str(refused.value)


def test_a_person_arm_needs_both_roles_and_says_how_long_a_participant_waits_and_what_then(study_dir):
    from bargain.study.config import Pairing

    document = example_document()
    assert config.load(EXAMPLE).pairing is None  # no person arm: nothing to pair
    first = next(iter(document["arms"]))
    document["arms"]["peer"] = {"spec": "person", "label": "the other party"}
    document["cells"]["arms"] = [*document["cells"]["arms"], "peer"]
    document["cells"]["roles"] = ["buyer", "seller"]  # a pair is a buyer and a seller
    with pytest.raises(config.StudyError, match="say how long a participant waits for a partner"):
        config.load(write(study_dir, document))
    document["pairing"] = {"max_wait_s": 120, "otherwise": first}
    study = config.load(write(study_dir, document))
    assert study.pairing == Pairing(120, first, 0.0) and study.arms["peer"].spec == "person"
    for change, said in (
        ({"otherwise": "peer"}, "`peer` is not a program arm of this study"),
        ({"otherwise": "nobody"}, "`nobody` is not a program arm of this study"),
        ({"max_wait_s": 5}, "pairing.max_wait_s: must be a whole number from 10 to 3600"),
        ({"end_bonus": -1}, "pairing.end_bonus: must be an amount"),
    ):
        document["pairing"] = {"max_wait_s": 120, "otherwise": "end", **change}
        with pytest.raises(config.StudyError) as refused:
            config.load(write(study_dir, document))
        assert said in str(refused.value), str(refused.value)
    document["pairing"] = {"max_wait_s": 120, "otherwise": "end", "end_bonus": 0.5}
    document["cells"]["roles"] = ["buyer"]
    with pytest.raises(config.StudyError, match="pairs a buyer with a seller: list both roles"):
        config.load(write(study_dir, document))
    del document["arms"]["peer"]
    document["cells"]["arms"] = [first]
    document["cells"]["roles"] = ["buyer", "seller"]
    with pytest.raises(config.StudyError, match="no arm has spec `person`: remove pairing"):
        config.load(write(study_dir, document))


# --- per-role instructions and questions: a study of buyers and sellers tells each their own ---------------------


def test_instructions_and_questions_may_be_given_per_role_and_are_hashed_each(study_dir, example):
    (study_dir / "example" / "seller.md").write_text("You are the **seller** of an item.")
    document = example_document()
    document["cells"]["roles"] = ["buyer", "seller"]
    document["texts"]["instructions"] = {"buyer": "example/instructions.md", "seller": "example/seller.md"}
    document["comprehension"]["questions"][1]["role"] = "buyer"
    path = write(study_dir, document)
    study = config.load(path)
    assert study.texts.instructions == {
        Role.BUYER: example.texts.instructions,
        Role.SELLER: "You are the **seller** of an item.",
    }
    assert study.texts.instructions_for([Role.SELLER]) == "You are the **seller** of an item."
    assert [q.role for q in study.comprehension.questions] == [None, Role.BUYER]
    assert [q.id for q in study.comprehension.for_roles([Role.SELLER])] == ["no_deal"]
    texts = ("consent.md", "instructions.md", "seller.md", "debrief.md")  # each role's, in the order written
    parts = [path.read_bytes(), *((study_dir / "example" / name).read_bytes() for name in texts)]
    assert study.hash == hashlib.sha256(b"".join(len(p).to_bytes(8, "big") + p for p in parts)).hexdigest()
    (study_dir / "example" / "seller.md").write_text("You are the **seller** of this item.")
    assert config.load(path).hash != study.hash  # the seller's text is the study's too
    assert config.load(study_dir / "example.yaml").hash == example.hash  # one text for all: hashed as before


@pytest.mark.parametrize(
    ("instructions", "roles", "field", "words"),
    [
        (
            {"buyer": "example/instructions.md"},
            ["buyer", "seller"],
            "texts.instructions",
            "gives nothing for the seller",
        ),
        (
            {"buyer": "example/instructions.md", "seller": "example/instructions.md"},
            ["buyer"],
            "texts.instructions.seller",
            "no participant plays the seller (cells.roles: buyer)",
        ),
        ({"sellers": "example/instructions.md"}, ["buyer"], "texts.instructions", "a mapping of role to one"),
        ({"buyer": "example/missing.md"}, ["buyer"], "texts.instructions.buyer", "missing.md"),
    ],
)
def test_per_role_instructions_name_each_role_played_and_no_other(study_dir, instructions, roles, field, words):
    document = example_document()
    document["cells"]["roles"] = roles
    document["texts"]["instructions"] = instructions
    lines = [line for line in refused_lines(write(study_dir, document)) if f": {field}: " in line]
    assert len(lines) == 1 and words in lines[0], lines


def test_a_question_for_a_role_nobody_plays_is_refused(study_dir):
    document = example_document()
    document["comprehension"]["questions"][1]["role"] = "seller"
    (line,) = refused_lines(write(study_dir, document))
    assert ": comprehension.questions[1].role: no participant plays the seller (cells.roles: buyer)" in line
