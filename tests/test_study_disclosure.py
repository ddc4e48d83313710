"""What a study's texts tell participants, read against the study (bargain.study.disclosure): the cues with the
phrasings they must and must not read, then the warnings a study gets when its texts speak of a program while
participants play people (the README's person arm added to the example), of a person while they play programs, or
of one role to both, and none when its texts fit."""

from __future__ import annotations

import shutil

import pytest
import yaml

from bargain.engine.trial import Role
from bargain.study import config
from bargain.study.disclosure import PERSON_WORDS, PROGRAM, roles_named, said

# Each cue with what it must read (the words it reports) and what it must not (a negation, another sense).
CUES = {
    PROGRAM: (
        [
            ("The other party is **a computer program** (an AI agent), not a person.", "computer"),
            ("You will bargain with a bot.", "bot"),
            ("a language model trained to get the best price", "language model"),
        ],
        ["You play another participant, not a computer program.", "rather than an AI", "the other party"],
    ),
    PERSON_WORDS: (
        [
            ("You will bargain with another participant of this study.", "another participant"),
            ("The other person makes offers too.", "other person"),
            ("It was a real person.", "a real person"),
        ],
        [
            "It was a computer program, not a person.",
            "The data may be shared with other participants' consent.",
            "how people negotiate prices",
            "the other party",
        ],
    ),
}
ROLES = [
    ("You are the **buyer** of an item.", {Role.BUYER: "You are the buyer"}),
    ("As the seller, which price is best?", {Role.SELLER: "As the seller"}),
    ("You are the buyer or the seller.", dict.fromkeys(Role, "You are the buyer or the seller")),
    ("Your offer must be at least as high as the seller's.", {}),
    ("The seller has a price of its own.", {}),
]


@pytest.mark.parametrize("cue", CUES, ids=["program", "person"])
def test_each_cue_reads_its_phrasings_and_not_a_negation_or_another_sense(cue):
    found, missed = CUES[cue]
    assert [said(cue, words) for words, _ in found] == [word for _, word in found]
    assert [said(cue, words) for words in missed] == [None] * len(missed)


@pytest.mark.parametrize(("words", "named"), ROLES)
def test_the_role_a_text_gives_its_reader(words, named):
    assert roles_named(words) == named


@pytest.fixture
def study_dir(tmp_path):
    """A copy of the example study (file and texts) that a test may change."""
    shutil.copy(config.EXAMPLE, tmp_path / "example.yaml")
    shutil.copytree(config.EXAMPLE.parent / "example", tmp_path / "example")
    return tmp_path


def warned(study_dir, document: dict) -> list[str]:
    """The warnings of the study `document` (in `study_dir`), each without the file's name."""
    path = study_dir / "study.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return [line.removeprefix(f"{path}: ") for line in config.disclosure_warnings(config.load(path))]


def with_people(document: dict | None = None) -> dict:
    """The example with the README's person arm: every participant plays another, in both roles."""
    document = document or yaml.safe_load(config.EXAMPLE.read_text(encoding="utf-8"))
    document["arms"] = {
        "peer": {"spec": "person", "label": "the other party"},
        "model": {"spec": "arm:seller-grpo", "label": "the other party"},
    }
    document["cells"] = {"arms": ["peer"], "conditions": ["both_unaware"], "roles": ["buyer", "seller"]}
    document["pairing"] = {"max_wait_s": 300, "otherwise": "model", "end_bonus": 0.5}
    document["games_per_participant"] = 1
    document["design"] = {"assignment": "between", "quota_per_cell": 40}
    document["attention_checks"][0]["after_game"] = 1
    return document


def test_the_example_with_a_person_arm_is_told_which_texts_speak_of_a_program_or_of_the_buyer_only(study_dir, caplog):
    """The new user's case: the README's person arm added to the example as shipped. Each text that calls the other
    party a program, and each that tells sellers they are the buyer, is named with its words, in a logged warning."""
    with caplog.at_level("WARNING", logger="bargain.study.config"):
        lines = warned(study_dir, with_people())
    assert len(caplog.records) == len(lines)
    assert lines[:3] == [
        f"{field}: speaks of the other party as a program ({word!r}), but participants of cells.arms `peer` (spec: "
        'person) play another participant; speak of "the other party", or of both kinds where participants may meet '
        "both"
        for field, word in (("texts.consent", "AI"), ("title", "AI"), ("texts.debrief", "computer"))
    ]
    assert lines[3:] == [
        "texts.consent: speaks to the buyer only ('as the buyer'), but sellers read it too (cells.roles: buyer, "
        "seller); word it for both roles",
        "texts.instructions: speaks to the buyer only ('You are the buyer'), but sellers read it too (cells.roles: "
        "buyer, seller); give each role its own: texts.instructions: {buyer: FILE, seller: FILE}",
        "comprehension.questions[1]: speaks to the buyer only ('As the buyer'), but sellers read it too (cells.roles: "
        "buyer, seller); give it `role: buyer`, and the sellers a question of their own",
    ]


def test_a_study_of_people_whose_texts_fit_loads_without_warnings(study_dir):
    """Texts that speak of another participant, instructions and a question for each role: nothing to warn of; and
    a seller's text that speaks to the buyer, or a seller's question that does, is named."""
    texts = study_dir / "example"
    (texts / "consent.md").write_text("You will bargain with another participant, not a computer program. We record.")
    (texts / "debrief.md").write_text("The other party was another participant of this study. Thank you.")
    (texts / "buyer.md").write_text("You are the **buyer**: the lower the price, the more you earn.")
    (texts / "seller.md").write_text("You are the **seller**: the higher the price, the more you earn.")
    document = with_people()
    document["title"] = "A bargaining study"
    document["texts"]["instructions"] = {"buyer": "example/buyer.md", "seller": "example/seller.md"}
    document["comprehension"]["questions"][1]["role"] = "buyer"
    assert warned(study_dir, document) == []
    (texts / "seller.md").write_text("You are the buyer.")
    document["comprehension"]["questions"][1]["role"] = "seller"
    assert warned(study_dir, document) == [
        "texts.instructions.seller: is read by sellers only, but speaks to the buyer ('You are the buyer'); make it "
        "speak to the seller",
        "comprehension.questions[1]: is read by sellers only, but speaks to the buyer ('As the buyer'); make it "
        "speak to the seller",
    ]


def test_a_study_of_programs_whose_texts_speak_of_a_person_is_told(study_dir):
    (study_dir / "example" / "consent.md").write_text("You will bargain with another participant. We record.")
    document = yaml.safe_load(config.EXAMPLE.read_text(encoding="utf-8"))
    document["title"] = "A bargaining study"
    (line,) = warned(study_dir, document)
    assert line.startswith("texts.consent: speaks of the other party as a person ('another participant'), but ")
    assert "cells.arms `a` (arm:seller-grpo), `b` (arm:base), `c` (tactic:boulware) play a program" in line


@pytest.mark.parametrize(
    ("consent", "warns"),
    [
        ("You will bargain with the other party. We record.", False),
        ("The other party may be another participant or a computer program. We record.", False),
        ("The other party is a computer program. We record.", True),
        ("The other party is another participant. We record.", True),
    ],
)
def test_a_study_of_people_and_programs_may_speak_of_the_other_party_or_of_both(study_dir, consent, warns):
    (study_dir / "example" / "consent.md").write_text(consent)
    (study_dir / "example" / "debrief.md").write_text("Thank you for taking part.")
    (study_dir / "example" / "instructions.md").write_text("Make offers; the other party does too.")
    document = with_people()
    document["title"] = "A bargaining study"
    document["cells"]["arms"] = ["peer", "model"]
    document["comprehension"]["questions"] = document["comprehension"]["questions"][:1]
    lines = warned(study_dir, document)
    assert len(lines) == warns and all(
        line.startswith("texts.consent: speaks of the other party as a") for line in lines
    )
