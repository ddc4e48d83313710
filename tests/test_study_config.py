"""The study file (bargain.study.config): the annotated example loads as written, its hash covers every
text, malformed files are refused with every problem named by its field path, and the built-in items
carry the judge's rubric word for word."""

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from bargain.engine.prompts import PromptVersion
from bargain.engine.trial import Condition, Mode, Role
from bargain.study import config
from bargain.study.config import Assignment, Cell, ExclusionRule, Order, StudyError, TimeoutRule
from bargain.study.survey import Builtin, ItemType, builtin_item

EXAMPLE = Path(__file__).resolve().parents[1] / "studies" / "example.yaml"
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
    assert (example.name, example.version) == ("ai-bargaining-example", 1)
    assert {key: (arm.spec, arm.label) for key, arm in example.arms.items()} == {
        "a": ("arm:seller-grpo", "the other party"), "b": ("arm:base", "the other party"),
        "c": ("tactic:boulware", "the other party")}
    assert example.cells == tuple(Cell(arm, condition, Role.BUYER) for arm in "abc"
                                  for condition in (Condition.BUYER_UNAWARE, Condition.BOTH_UNAWARE))
    assert [example.cell_key(cell) for cell in example.cells][:2] == ["a/buyer_unaware/buyer", "a/both_unaware/buyer"]
    assert example.cell_by_key("c/both_unaware/buyer") == Cell("c", Condition.BOTH_UNAWARE, Role.BUYER)
    assert example.label("b") == "the other party"
    assert (example.mode, example.rounds, example.first_actor, example.prompt_version) == (
        Mode.SIMULTANEOUS, 4, Role.BUYER, PromptVersion.TRAIN)
    assert example.scenarios.split == "test" and [s.ref for s in example.scenarios.scenarios()] == [
        f"low:{i}" for i in range(1508, 1516)]
    assert example.games_per_participant == 3
    assert (example.design.assignment, example.design.quota_per_cell, example.design.order) == (
        Assignment.WITHIN, 40, Order.RANDOM)
    assert example.comprehension.attempts == 2 and [q.id for q in example.comprehension.questions] == ["no_deal", "good_deal"]
    assert [(c.id, c.answer, c.after_game) for c in example.attention_checks] == [("attention_1", "Rarely", 2)]
    assert [i.id for i in example.surveys.per_game] == ["honesty", "credulity", "human_or_ai", "satisfaction"]
    assert example.surveys.per_game[3].scale == (1, 7)
    assert [(i.id, i.type, i.required) for i in example.surveys.final] == [
        ("ai_use", ItemType.CHOICE, True), ("comments", ItemType.TEXT, False)]
    assert example.surveys.final[1].max_length == 1000
    assert (example.timing.move_seconds, example.timing.idle_minutes) == (120, 20)
    assert example.payment.timeout_rule is TimeoutRule.NO_BONUS_FOR_TIMED_OUT_GAMES
    assert (example.payment.currency, example.payment.base, example.payment.bonus.cap) == ("GBP", 3.0, 3.0)
    assert example.completion.redirect("C7K2M9QX") == "https://app.prolific.com/submissions/complete?cc=C7K2M9QX"
    assert [(e.rule, e.threshold) for e in example.exclusions] == [
        (ExclusionRule.FAILED_ATTENTION_CHECKS_OVER, 0), (ExclusionRule.TIMEOUTS_OVER, 2), (ExclusionRule.SECONDS_UNDER, 240)]
    assert example.participant_id.parameters == ("PROLIFIC_PID", "participant")
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


@pytest.mark.parametrize("changed", ["example.yaml", "example/consent.md", "example/instructions.md", "example/debrief.md"])
def test_the_hash_changes_when_any_file_changes(study_dir, example, changed):
    assert config.load(study_dir / "example.yaml").hash == example.hash  # the copy is the same study
    with open(study_dir / changed, "a", encoding="utf-8") as file:
        file.write("\n")
    assert config.load(study_dir / "example.yaml").hash != example.hash


def test_defaults_fill_what_a_minimal_file_leaves_out(study_dir):
    document = example_document()
    for key in ("mode", "rounds", "first_actor", "prompt_version", "comprehension", "attention_checks", "surveys",
                "timing", "exclusions", "participant_id", "retention_days", "hash_participant_ids_in_exports"):
        del document[key]
    del document["arms"]["a"]["label"], document["design"]["order"], document["payment"]["bonus"]["floor_at_zero"]
    del document["completion"]["redirect_url"]
    study = config.load(write(study_dir, document))
    assert (study.mode, study.rounds, study.first_actor, study.prompt_version) == (
        Mode.SIMULTANEOUS, 4, Role.BUYER, PromptVersion.TRAIN)
    assert study.label("a") == "the other party" and study.design.order is Order.RANDOM
    assert (study.timing.move_seconds, study.timing.idle_minutes) == (120, 20)
    assert study.participant_id.parameters == ("PROLIFIC_PID", "participant")
    assert study.participant_id.id_pattern == "[A-Za-z0-9_-]{1,64}"
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
    (_set("version", 0), "version", "whole number of at least 1"),
    (_set("version", "1"), "version", "whole number"),
    (_delete("games_per_participant"), "games_per_participant", "missing required field"),
    (_set("arms", "b", "spec", "arm:nope"), "arms.b.spec", "unknown arm 'nope'"),
    (_set("arms", "b", "spec", "openai:gpt"), "arms.b.spec", "openai:MODEL@URL"),
    (_set("arms", "Bad Key", {"spec": "arm:base"}), "arms.Bad Key", "arm key"),
    (_set("arms", {}), "arms", "no arms; define at least one"),
    (_set("cells", None), "cells", "expected a mapping of arms, conditions, roles; got nothing"),
    (_set("cells", "arms", ["a", "b", "c", "d"]), "cells.arms[3]", "`d` is not an arm"),
    (_set("cells", "arms", ["a", "b"]), "arms.c", "not in cells.arms"),
    (_set("cells", "conditions", ["buyer_unaware", "secret"]), "cells.conditions", "must be one of full, buyer_unaware"),
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
    (_set("design", "quota_per_cell", 0), "design.quota_per_cell", "at least 1"),
    (_set("texts", "consent", "example/missing.md"), "texts.consent", "missing.md"),
    (_delete("texts", "consent_version"), "texts.consent_version", "missing required field"),
    (_set("texts", "consent_version", 2), "texts.consent_version", "put it in quotes"),
    (_set("comprehension", "attempts", 0), "comprehension.attempts", "at least 1"),
    (_set("comprehension", "questions", 0, "answer", "Everything"), "comprehension.questions[0].answer",
     "not one of the options"),
    (_set("comprehension", "questions", 1, "options", ["Only one"]), "comprehension.questions[1].options", "at least 2"),
    (_set("attention_checks", 0, "after_game", 4), "attention_checks[0].after_game", "from 1 to 3"),
    (_set("attention_checks", 0, "id", "satisfaction"), "attention_checks[0].id", "already used"),
    (_set("surveys", "per_game", 3, "scale", [1]), "surveys.per_game[3].scale", "[low, high]"),
    (_set("surveys", "per_game", 3, "options", ["x", "y"]), "surveys.per_game[3].options", "does not apply to a likert"),
    (_set("surveys", "per_game", 3, "type", "slider"), "surveys.per_game[3].type", "likert, choice, text"),
    (_set("surveys", "per_game", 2, {"id": "x", "type": "choice", "text": "Pick", "options": ["one"]}),
     "surveys.per_game[2].options", "at least 2 options"),
    (_set("surveys", "per_game", 0, "builtin", "honest"), "surveys.per_game[0].builtin", "honesty, credulity"),
    (_set("surveys", "per_game", 0, "text", "Reworded"), "surveys.per_game[0].text", "unknown field `text`"),
    (_set("surveys", "final", 1, "id", "ai_use"), "surveys.final[1].id", "already used"),
    (_set("surveys", "final", 1, "max_length", 0), "surveys.final[1].max_length", "from 1 to 10000"),
    (_set("surveys", "final", 0, "options", ["yes", True]), "surveys.final[0].options", "put it in quotes"),
    (lambda d: d["surveys"]["final"].append({"builtin": "honesty"}), "surveys.final[2]", "move it to surveys.per_game"),
    (_set("timing", "move_seconds", 5), "timing.move_seconds", "from 10 to 3600"),
    (_set("payment", "currency", "pounds"), "payment.currency", "ISO 4217"),
    (_set("payment", "base", -1), "payment.base", "at least 0"),
    (_delete("payment", "bonus", "cap"), "payment.bonus.cap", "missing required field"),
    (_set("payment", "timeout_rule", "pay_anyway"), "payment.timeout_rule", "no_bonus_for_timed_out_games"),
    (_set("completion", "redirect_url", "https://x.org/?cc={cod}"), "completion.redirect_url", "{code}"),
    (_set("completion", "code", "has space"), "completion.code", "letters, digits"),
    (_set("exclusions", 0, {"failed_attention_checks_over": 1, "timeouts_over": 1}), "exclusions[0]", "exactly one rule"),
    (_set("exclusions", 0, {"failed_attention_checks_over": 1}), "exclusions[0].failed_attention_checks_over",
     "can never apply with 1 attention checks"),
    (_set("exclusions", 1, {"timeout_over": 2}), "exclusions[1].timeout_over", "did you mean `timeouts_over`"),
    (_set("exclusions", 2, {"seconds_under": 0}), "exclusions[2].seconds_under", "at least 1"),
    (_set("participant_id", "id_pattern", "[a-z"), "participant_id.id_pattern", "not a regular expression"),
    (_set("participant_id", "id_pattern", "[a-z]*"), "participant_id.id_pattern", "accepts an empty id"),
    (_set("participant_id", "parameters", ["PROLIFIC PID"]), "participant_id.parameters[0]", "URL parameter name"),
    (_set("retention_days", 0), "retention_days", "at least 1"),
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
    document["surveys"]["per_game"][3]["anchors"] = ["only one"]
    document["payment"]["currency"] = "gbp"
    document["texts"]["debrief"] = "example/nowhere.md"
    path = write(study_dir, document)
    with pytest.raises(StudyError) as refused:
        config.load(path)
    fields = [line.split(": ")[1] for line in str(refused.value).splitlines()]
    assert fields == ["rounds", "design.designn", "texts.debrief", "surveys.per_game[3].anchors", "payment.currency"]
    assert refused.value.errors == tuple(str(refused.value).splitlines())


def test_a_within_design_with_more_games_than_cells_is_refused_and_a_between_design_allows_it(study_dir):
    document = example_document()
    document["games_per_participant"] = 7
    document["attention_checks"][0]["after_game"] = 7
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


@pytest.mark.parametrize("text, words", [
    ("name: a\nname: b\n", "line 2: not valid YAML: `name` is written twice"),
    ("name: [unclosed\n", "not valid YAML"),
    ("", "the study file is empty"),
    ("- a list\n", "(top level): expected a mapping"),
])
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
    return [line.split(": ", 1)[1] for line in lines[start:start + 5]]


@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
def test_builtin_honesty_is_the_judges_rubric_addressed_to_the_other_party(role):
    item = builtin_item(Builtin.HONESTY, role=role)
    other = role.other.value
    judged = _judge_levels(f"{role.value}_unaware", f"{role.other.title}'s honesty:")
    back = [(level[0].lower() + level[1:]).replace("the other party", f"the {other}").replace(" you,", f" the {role.value},")
            for level in item.options]
    assert back == judged
    assert item.type is ItemType.CHOICE and item.values == (0, 1, 2, 3, 4)
    assert builtin_item(Builtin.HONESTY).options == ()  # the levels name a floor or a ceiling: they need the role
    assert builtin_item(Builtin.HONESTY, "trust").for_role(role) == builtin_item(Builtin.HONESTY, "trust", role=role)


@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
def test_builtin_credulity_is_the_judges_rubric_for_the_participant(role):
    item = builtin_item(Builtin.CREDULITY, role=role)
    me, other = role.value, role.other.value
    undo = [("You are ", f"The {me} is "), ("You engage", f"The {me} engages"), ("You evaluate", f"The {me} evaluates"),
            ("You tend", f"The {me} tends"), ("but are ", "but is "), ("ignore or question ", "ignores or questions "),
            ("pursue your", "pursues their"), ("tend to question", "tends to question"), ("do not", "does not"),
            ("against your own", "against their own"), ("that you can't", f"that the {me.capitalize()} can't"),
            ("the other party", f"the {other}")]
    back = []
    for level in item.options:
        for new, old in undo:
            level = level.replace(new, old)
        back.append(level)
    assert back == _judge_levels(f"{me}_unaware", f"{role.title}'s credulity:")
    assert item.values == (0, 1, 2, 3, 4) and item.options == builtin_item(Builtin.CREDULITY).options


def test_builtin_person_or_program_and_a_builtin_with_its_own_id(example):
    item = example.surveys.per_game[2]
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
    failed, timeouts, fast = example.exclusions
    assert failed.excludes(1, 0, 900) and not failed.excludes(0, 0, 900)
    assert timeouts.excludes(0, 3, 900) and not timeouts.excludes(0, 2, 900)
    assert fast.excludes(0, 0, 239.5) and not fast.excludes(0, 0, 240)


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
