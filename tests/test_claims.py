"""The claim checker (bargain.analysis.claims): scores on the labelled sets, prices, the truth of claims, move logs.

Every labelled set was written from the kinds' definitions by a writer who never saw this code; docs/CLAIMS.md
section 4 describes each. Development sets (DEVELOPMENT) were tuned on; test sets (TEST) never were: look at a
test set's scores only, and write a new development set to learn from its misses. claims_retired_test was the
first test set; when every other set had reached the goal its single error was read, so it is a development set.
"""

from __future__ import annotations

import functools
import json

import pytest
from cli_runner import run_main
from hypothesis import given, settings
from hypothesis import strategies as st

from bargain.analysis.claims import (
    KINDS,
    Claim,
    check_turns,
    claims_json,
    extract_claims,
    misrepresents,
)
from bargain.cli import main
from bargain.engine.game import Action, Turn
from bargain.engine.trial import Role
from benchmarks.claims import load as _load
from benchmarks.claims import score as count_claims


def score(rows: list[dict]) -> dict:
    """Precision and recall, overall and per kind, of the counts benchmarks.claims makes (the benchmark and the
    tests score the same way)."""
    return _rates(count_claims(rows))


def _rates(counts: dict[str, dict[str, int]]) -> dict:
    """Precision and recall, overall and per kind, of true and false positives and misses per kind."""

    def pr(c: dict) -> tuple[float, float]:
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        return p, r

    total = {key: sum(c[key] for c in counts.values()) for key in ("tp", "fp", "fn")}
    result = {"all": (*pr(total), total)}
    for kind, c in counts.items():
        result[kind] = (*pr(c), c)
    return result


def _report(title: str, result: dict) -> None:
    print(f"\n{title}")
    for key, (p, r, c) in result.items():
        print(f"  {key:12s} precision {p:.3f}  recall {r:.3f}  (tp {c['tp']}, fp {c['fp']}, fn {c['fn']})")


# --- the labelled set ---------------------------------------------------------------------


def test_labelled_set_is_well_formed_and_large_enough():
    rows = _load("claims_labelled.jsonl")
    assert len(rows) >= 220
    for row in rows:
        assert isinstance(row["message"], str) and row["message"]
        assert row["role"] in ("buyer", "seller")
        for claim in row["claims"]:
            assert claim["kind"] in KINDS
            assert claim["value"] is None or isinstance(claim["value"], (int, float))
            assert claim["value"] is not None or claim["kind"] == "final_offer"
    kinds = [c["kind"] for row in rows for c in row["claims"]]
    own_roles = {row["role"] for row in rows for c in row["claims"] if c["kind"] == "own_limit"}
    assert sum(1 for row in rows if not row["claims"]) >= 60
    assert kinds.count("own_limit") >= 50 and own_roles == {"buyer", "seller"}
    assert kinds.count("final_offer") >= 25
    assert kinds.count("other_limit") >= 20
    assert sum(1 for row in rows if "tricky" in row.get("tags", ())) >= 40
    assert len({row["message"] for row in rows}) == len(rows)


def test_precision_and_recall_on_the_labelled_set():
    result = score(_load("claims_labelled.jsonl"))
    _report("claims: labelled set", result)
    precision, recall, _ = result["all"]
    assert precision >= 0.95
    assert recall >= 0.80
    for kind in KINDS:
        assert result[kind][1] >= 0.6, f"recall for {kind} is {result[kind][1]:.3f}"


DEVELOPMENT = [
    ("claims_retired_test.jsonl", 60),
    ("claims_heldout.jsonl", 20),
    ("claims_dev.jsonl", 80),
    ("claims_dev2.jsonl", 200),
    ("claims_dev3.jsonl", 320),
] + [(f"claims_dev{n}.jsonl", 260 if n == 28 else 300) for n in range(4, 48)]
TEST = [
    ("claims_fresh.jsonl", 240),
    ("claims_fresh2.jsonl", 220),
    ("claims_fresh3.jsonl", 240),
    ("claims_fresh4.jsonl", 240),
    ("claims_fresh5.jsonl", 240),
    ("claims_fresh6.jsonl", 260),
    ("claims_fresh7.jsonl", 260),
    ("claims_fresh8.jsonl", 300),
    ("claims_fresh9.jsonl", 300),
    ("claims_fresh10.jsonl", 300),
]


def _well_formed(name: str, size: int) -> list[dict]:
    rows = _load(name)
    assert len(rows) == size and len({row["message"] for row in rows}) == size
    assert all(row["role"] in ("buyer", "seller") for row in rows)
    assert all(
        c["kind"] in KINDS and (c["value"] is not None or c["kind"] == "final_offer")
        for row in rows
        for c in row["claims"]
    )
    return rows


@functools.cache
def _set_counts(name: str, size: int) -> dict[str, dict[str, int]]:
    """One set's counts, read once for its own test and for the test of all sets together (one worker runs
    both: DEVELOPMENT_GROUP)."""
    return count_claims(_well_formed(name, size))


DEVELOPMENT_GROUP = pytest.mark.xdist_group("claims_development")


@pytest.mark.slow  # 49 sets of about 300 phrasings: 15-20 s of the fast subset's 3 minutes
@DEVELOPMENT_GROUP
@pytest.mark.parametrize("name, size", DEVELOPMENT)
def test_precision_and_recall_on_the_development_sets(name, size):
    result = _rates(_set_counts(name, size))
    _report(f"claims: {name} (development)", result)
    assert result["all"][0] >= 0.98 and result["all"][1] >= 0.8
    assert result["own_limit"][1] >= 0.75


@pytest.mark.slow
@DEVELOPMENT_GROUP
def test_precision_and_recall_on_all_development_sets_together():
    per_set = [_set_counts(name, size) for name, size in DEVELOPMENT]
    result = _rates({kind: {key: sum(c[kind][key] for c in per_set) for key in ("tp", "fp", "fn")} for kind in KINDS})
    _report("claims: all development sets", result)
    assert result["all"][0] >= 0.98 and result["all"][1] >= 0.94
    assert result["own_limit"][1] >= 0.94


@pytest.mark.slow
@pytest.mark.parametrize("name, size", TEST)
def test_precision_on_phrasing_not_built_on(name, size):
    """Never tuned on: precision at the goal (0.98) and own-limit recall (0.85) asserted, the rest reported (-s)."""
    result = score(_well_formed(name, size))
    _report(f"claims: {name} (test, recall reported only)", result)
    assert result["all"][0] >= 0.98
    assert result["own_limit"][1] >= 0.85


# --- phrasing from the specification --------------------------------------------------------


@pytest.mark.parametrize(
    "message, kind, value",
    [
        ("my budget is $2", "own_limit", 2.0),
        ("I can't go above 2.40", "own_limit", 2.40),
        ("I can't go below 1.80", "own_limit", 1.80),
        ("it cost me 1.50", "own_limit", 1.50),
        ("the lowest I can do is 1.75", "own_limit", 1.75),
        ("the most I can pay is 3", "own_limit", 3.0),
        ("my maximum is 2.10", "own_limit", 2.10),
        ("anything over 2.5 is out of my budget", "own_limit", 2.5),
        ("I paid 1.60 for it wholesale", "own_limit", 1.60),
        ("my floor is 1.9", "own_limit", 1.9),
        ("below 1.70 I lose money", "own_limit", 1.70),
        ("this is my final offer", "final_offer", None),
        ("take it or leave it at 2.20", "final_offer", 2.20),
        ("best and final: 1.95", "final_offer", 1.95),
        ("last offer, 2.00", "final_offer", 2.00),
        ("I won't go any lower than this", "final_offer", None),
        ("I know your budget is at least 3.00", "other_limit", 3.00),
        ("your cost can't be more than 1.50", "other_limit", 1.50),
        ("you can surely afford 2.80", "other_limit", 2.80),
        ("your floor is probably around 1.4", "other_limit", 1.4),
        ("My budget is €1,200.50 for a sofa.", "own_limit", 1200.50),
        ("My max is .75 for the small bar.", "own_limit", 0.75),
        ("I can't pay more than USD 3.", "own_limit", 3.0),
        ("My limit is EUR 12.", "own_limit", 12.0),
        ("I can't go above £3.50.", "own_limit", 3.50),
        ("my budget is 2 to 2.5", "own_limit", 2.5),
        ("my floor is somewhere between 1.8 and 2.0", "own_limit", 1.8),
        ("the most I can pay is somewhere between 1.8 and 2.0", "own_limit", 2.0),
    ],
)
def test_claims_from_the_specification(message, kind, value):
    claims = extract_claims(message)
    assert [(c.kind, c.value) for c in claims] == [(kind, value)]


@pytest.mark.parametrize(
    "message",
    [
        "I'm not saying my budget is 2",
        "if my budget were 3 I would buy two",
        "is your budget 2.50?",
        "my offer is 2.40",
        "I can do 2.40",
        "I need 3 bags",
        "I can bring it in 2 days",
        "we're in round 3",
        "can you give me 10% off?",
        "it's a 5kg bag",
        "each bar is 100g",
        "it's a 2019 model",
        "Is that your final offer?",
        "Your last offer was 2.10.",
        "2.60 is over my budget.",
    ],
)
def test_non_claims_from_the_specification(message):
    assert extract_claims(message) == []


def test_claims_are_in_order_with_spans():
    message = "You can surely afford 2.80; my cost alone is 2.10. Take it or leave it at 2.60."
    claims = extract_claims(message)
    assert [(c.kind, c.value) for c in claims] == [("other_limit", 2.80), ("own_limit", 2.10), ("final_offer", 2.60)]
    for claim in claims:
        assert message[claim.start : claim.end] == claim.text
    assert [c.start for c in claims] == sorted(c.start for c in claims)


def test_a_final_offer_without_a_number_in_its_sentence_has_no_value():
    assert [(c.kind, c.value) for c in extract_claims("Final offer. $640.")] == [("final_offer", None)]


# --- misrepresents ----------------------------------------------------------------------------


def _claim(kind: str, value: float | None) -> Claim:
    return Claim(kind, value, "", 0, 0)


def test_own_limit_of_a_buyer_is_false_when_below_the_true_ceiling():
    assert misrepresents(_claim("own_limit", 2.0), Role.BUYER, 2.5) is True
    assert misrepresents(_claim("own_limit", 2.5), "buyer", 2.5) is False
    assert misrepresents(_claim("own_limit", 3.0), "buyer", 2.5) is False


def test_own_limit_of_a_seller_is_false_when_above_the_true_floor():
    assert misrepresents(_claim("own_limit", 2.0), Role.SELLER, 1.5) is True
    assert misrepresents(_claim("own_limit", 1.5), "seller", 1.5) is False
    assert misrepresents(_claim("own_limit", 1.2), "SELLER", 1.5) is False


def test_other_limit_in_both_directions_and_unknown():
    # a buyer saying the seller's floor is below its true v_S
    assert misrepresents(_claim("other_limit", 1.2), "buyer", 2.5, other_reservation=1.5) is True
    assert misrepresents(_claim("other_limit", 1.8), "buyer", 2.5, other_reservation=1.5) is False
    # a seller saying the buyer's ceiling is above its true v_B
    assert misrepresents(_claim("other_limit", 3.0), "seller", 1.5, other_reservation=2.5) is True
    assert misrepresents(_claim("other_limit", 2.0), "seller", 1.5, other_reservation=2.5) is False
    assert misrepresents(_claim("other_limit", 3.0), "seller", 1.5) is None


def test_a_final_offer_is_never_a_misrepresentation_by_itself():
    assert misrepresents(_claim("final_offer", 2.0), "buyer", 2.5, 1.5) is None
    assert misrepresents(_claim("final_offer", None), "seller", 1.5, 2.5) is None


# --- check_turns ---------------------------------------------------------------------------

V_B, V_S = 2.5, 1.5  # surplus 1.0


def _game() -> list[Turn]:
    def turn(round_: int, role: Role, price: float, message: str) -> Turn:
        return Turn(round_, role, Action.OFFER, price, message, None, None, None)

    return [
        turn(1, Role.BUYER, 2.0, "My budget is 2.00. This is my final offer: 2.0."),
        turn(1, Role.SELLER, 2.6, "It cost me 2.10, so 2.60 is more than fair."),
        turn(2, Role.BUYER, 2.2, "Fine, 2.20."),
        turn(2, Role.SELLER, 2.4, "Take it or leave it at 2.40."),
        turn(3, Role.BUYER, 2.3, "I know your cost is around 1.40."),
        turn(3, Role.SELLER, 2.4, "Still 2.40."),
    ]


def test_check_turns_finds_bluffs_and_misstatements():
    result = check_turns(_game(), buyer_price=V_B, seller_price=V_S)
    moves = result["moves"]
    assert [(m["round"], m["role"]) for m in moves] == [
        (1, "buyer"),
        (1, "seller"),
        (2, "buyer"),
        (2, "seller"),
        (3, "buyer"),
        (3, "seller"),
    ]
    # round 1: the buyer's "final offer" of 2.0 is raised to 2.2 in round 2: a bluff
    assert moves[0]["bluff"] is True
    kinds = [(c["kind"], c["value"], c["misrepresentation"]) for c in moves[0]["claims"]]
    assert kinds == [("own_limit", 2.0, True), ("final_offer", 2.0, None)]
    assert moves[0]["claims"][0]["misstatement_share"] == pytest.approx(0.5)  # |2.0 - 2.5| / 1.0
    assert moves[1]["claims"][0]["misstatement_share"] == pytest.approx(0.6)  # |2.1 - 1.5| / 1.0
    # round 2: the seller's final 2.40 is kept in round 3: not a bluff
    assert moves[3]["bluff"] is False
    assert [(c["kind"], c["value"]) for c in moves[3]["claims"]] == [("final_offer", 2.4)]
    # round 3: the buyer understates the seller's floor (1.40 < 1.50)
    assert moves[4]["claims"][0]["kind"] == "other_limit"
    assert moves[4]["claims"][0]["misstatement_share"] == pytest.approx(0.1)
    assert not any(m["bluff"] for m in moves[1:])

    buyer, seller = result["buyer"], result["seller"]
    assert buyer == {
        "claims": 3,
        "own_limit": 1,
        "final_offer": 1,
        "other_limit": 1,
        "misrepresentations": 2,
        "bluffs": 1,
        "mean_misstatement_share": pytest.approx(0.3),
    }
    assert seller == {
        "claims": 2,
        "own_limit": 1,
        "final_offer": 1,
        "other_limit": 0,
        "misrepresentations": 1,
        "bluffs": 0,
        "mean_misstatement_share": pytest.approx(0.6),
    }


def test_check_turns_takes_dicts_and_handles_no_surplus():
    dicts = [t.to_dict() for t in _game()]
    assert check_turns(dicts, V_B, V_S) == check_turns(_game(), V_B, V_S)
    flat = check_turns(dicts, buyer_price=1.5, seller_price=1.5)
    assert flat["buyer"]["mean_misstatement_share"] is None
    # v_B = 1.5 now: the budget claim 2.00 is no longer an understatement; "your cost is around 1.40" still is
    assert flat["buyer"]["misrepresentations"] == 1
    assert all(c["misstatement_share"] is None for m in flat["moves"] for c in m["claims"])


def test_a_final_offer_in_a_pass_commits_to_the_last_offer():
    turns = [
        {"round": 1, "role": "seller", "action": "OFFER", "price": 2.4, "message": "2.40."},
        {"round": 2, "role": "seller", "action": "INVALID", "price": None, "message": "That's my final offer."},
        {"round": 3, "role": "seller", "action": "OFFER", "price": 2.3, "message": "Ok, 2.30."},
    ]
    result = check_turns(turns, 3.0, 2.0)
    assert [m["bluff"] for m in result["moves"]] == [False, True, False]
    assert result["seller"]["bluffs"] == 1 and result["buyer"]["claims"] == 0


# --- claims_json -------------------------------------------------------------------------------


def test_claims_json():
    out = claims_json("My budget is 2.00, and I know your cost is 1.20. Final offer: 2.00.", "buyer", 2.5)
    assert out == [
        {"kind": "own_limit", "value": 2.0, "text": "My budget is 2.00", "misrepresentation": True},
        {"kind": "other_limit", "value": 1.2, "text": "your cost is 1.20", "misrepresentation": None},
        {"kind": "final_offer", "value": 2.0, "text": "Final offer: 2.00", "misrepresentation": None},
    ]
    json.dumps(out)


# --- robustness ----------------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "my budget is ",
        "I can't go above ",
        "the lowest I can do is ",
        "final offer",
        "take it or leave it",
        "your cost can't be more than ",
        "you can surely afford ",
        "between ",
        " and ",
        " to ",
        "$",
        "€",
        "£",
        "USD ",
        "1,200.50",
        "2.40",
        ".75",
        "3",
        "10%",
        "5kg",
        "?",
        ". ",
        ", ",
        "if ",
        "not ",
        "I paid ",
        " for it",
        "’",
        "'",
        "—",
        "\n",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(st.one_of(_FRAGMENTS, st.text(max_size=5)), max_size=30).map("".join)))
def test_extract_claims_never_raises_and_spans_match(message):
    claims = extract_claims(message)
    for claim in claims:
        assert claim.kind in KINDS
        assert message[claim.start : claim.end] == claim.text
        assert claim.value is not None or claim.kind == "final_offer"
    assert [c.start for c in claims] == sorted(c.start for c in claims)
    assert len({(c.kind, c.start, c.end) for c in claims}) == len(claims)


def test_the_claims_command_reads_one_message():
    done = run_main(
        main,
        "claims",
        "--role",
        "seller",
        "--reservation",
        "1.85",
        stdin="Honestly it cost me 2.40, so my final offer is 2.50. I know your budget is at least 3.",
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    claims = json.loads(done.stdout)
    assert [(c["kind"], c["value"], c["misrepresentation"]) for c in claims] == [
        ("own_limit", 2.4, True),
        ("final_offer", 2.5, None),
        ("other_limit", 3.0, None),
    ]


# --- phrasings the earlier checker missed, and the speaker's side --------------------------------


@pytest.mark.parametrize(
    "message, role, claims",
    [
        ("I can pay at most 2.75", "buyer", [("own_limit", 2.75)]),
        ("The most I'd ever pay is 2,500", "buyer", [("own_limit", 2500.0)]),
        (
            "I can do 2.10, but not a cent lower",
            "seller",
            [("final_offer", 2.10)],
        ),  # a promise: a bluff if later broken
        ("40, not a cent more.", "buyer", [("final_offer", 40.0)]),
        ("I'd pay up to 75, not a penny more.", "buyer", [("own_limit", 75.0), ("final_offer", 75.0)]),
        (
            "Two hundred is all I have, and I bet you'd do it for one seventy-five.",
            "buyer",
            [("own_limit", 200.0), ("other_limit", 175.0)],
        ),
        ("I have 3 kids and a budget of 2.20", "buyer", [("own_limit", 2.20)]),
        ("Twelve hundred is the absolute top of what I can afford.", "buyer", [("own_limit", 1200.0)]),
        ("Below £3.50 a dozen I'm not even covering the chicken feed.", "seller", [("own_limit", 3.5)]),
        ("You've got at least 760 on you, I saw the envelope.", "seller", [("other_limit", 760.0)]),
        ("I paid 30 for it.", "seller", [("own_limit", 30.0)]),
        ("I paid 30 for it.", "buyer", []),
        ("I paid 45 for a similar one last year.", "seller", []),
        ("The most I've ever paid for a sofa is $400.", "buyer", []),
        ("My brother's budget for his bike was 200.", "buyer", []),
        ("Had my budget been bigger I'd have taken the 900 one.", "buyer", []),
        ("My final exam is tomorrow, can we settle this?", "buyer", []),
        ("The firm I work for might reimburse me, but for now I'd offer 700 for the laptop.", "buyer", []),
        ("I'll meet you at 145, which is more than I budgeted.", "buyer", []),
        (
            "0.95 per bag, that's my final offer; they cost me 0.70 each.",
            "seller",
            [("final_offer", 0.95), ("own_limit", 0.70)],
        ),
        ("The garage quoted me 600 and said it's non-negotiable.", "buyer", []),
        ("The last price I listed was a typo, it should say 75.", "seller", []),
        ("Great, another 'non-negotiable' price that moved twice already.", "buyer", []),
        ("Quick question, is £120 really your limit", "seller", []),
        ("Your message this morning said 1,750 was the most you'd pay.", "seller", []),
        ("Last call for the bread, I close at 6.", "seller", []),
        (
            "We can accept 780 EUR for the 20-page contract, which is our final offer.",
            "seller",
            [("final_offer", 780.0)],
        ),
        ("These are two floor seats, and I'm asking $320 for the pair.", "seller", []),
        ("I can do 27 for the bushel, which is just a little over what it costs me.", "seller", []),
        ("I put $2,000 into the transmission last year, so I priced it at $14,500.", "seller", []),
        ("Fuel cost me 30 to get here, but the piano itself I paid 1,000 for.", "seller", [("own_limit", 1000.0)]),
        ("At €8,50 we would be under cost. We pay the mill €8,20 per litre.", "seller", [("own_limit", 8.2)]),
        ("If this were the last round, I'd call 70 my final offer, but it isn't.", "buyer", []),
        ("Had you asked last week, 500 would have been my final price.", "seller", []),
        ("My brother's final offer on his old car was 3,000.", "buyer", []),
        (
            "My last price for the ones I sold in spring was 30, but my cost on this batch is 22.",
            "seller",
            [("own_limit", 22.0)],
        ),
        ("You're firm at 20, I get it, but I'm asking 28.", "seller", []),
        ("I'm not moving house until June; price is 75.", "seller", []),
        ("I won't budge on the pickup time, and I'm offering 45.", "buyer", []),
        ("Take it or leave it is not how I like to do business; could we meet at 1,300?", "buyer", []),
        ("Final offer on the tickets: 2 for 150.", "seller", [("final_offer", 150.0)]),
        (
            "My limit is 2200. Final offer. Take it or leave it.",
            "buyer",
            [("own_limit", 2200.0), ("final_offer", None)],
        ),
        ("i wouldnt say 60 is my max", "buyer", []),
        ("floor 5.50 firm", "seller", [("own_limit", 5.5), ("final_offer", 5.5)]),
        ("No, 45 isn't my minimum, I just said it would be nice.", "seller", []),
        ("60 is over my max, I'm afraid.", "buyer", []),
        ("You can pay 300 now and the rest at pickup.", "seller", []),
        ("I'd rather not lose the sale over five bucks, so let's say 45?", "seller", []),
        ("12 doesn't even cover what I paid.", "seller", []),
        ("I'm not saying I'd lose money at 30, I'm saying I'd prefer 35.", "seller", []),
        (
            "I need at least €80 to cover what I paid, which was €78.",
            "seller",
            [("own_limit", 80.0), ("own_limit", 78.0)],
        ),
        ("Just being straight with you: twenty grand is the top of my range.", "buyer", [("own_limit", 20000.0)]),
        ("We cannot price the bathroom below 12,800.", "seller", [("own_limit", 12800.0)]),
        ("Cost per unit is $3.40, so I can't price below that.", "seller", [("own_limit", 3.4)]),
        ("My stipend leaves me 800 for a laptop.", "buyer", [("own_limit", 800.0)]),
        ("That leaves me 20 short of what I hoped for.", "buyer", []),
        ("My company only lets me spend 2,000 on the workstation.", "buyer", [("own_limit", 2000.0)]),
        ("The board caps this consulting engagement at 60,000.", "buyer", [("own_limit", 60000.0)]),
        ("A company like yours can easily spend 15k on this.", "seller", [("other_limit", 15000.0)]),
        ("I can go as high as 2.45, no more.", "buyer", [("own_limit", 2.45)]),
        ("more than 25 i can not pay.", "buyer", [("own_limit", 25.0)]),
        ("More than 25 I can pay, but not 40.", "buyer", []),
        ("I don't want to spend more than 30 on it.", "buyer", [("own_limit", 30.0)]),
        (
            "Your organization can undoubtedly accommodate $42,000 given the scope.",
            "seller",
            [("other_limit", 42000.0)],
        ),
        ("Our best and final rate is €72 per hour.", "seller", [("final_offer", 72.0)]),
        ("35 is the last price for the carpet runner, ok?", "seller", [("final_offer", 35.0)]),
        ("35 is my max, can you do that?", "buyer", [("own_limit", 35.0)]),
        ("Is 35 your max, or can you go higher?", "seller", []),
        ("2.60 is over your budget, you said, so what about 2.40?", "seller", []),
        ("I know your budget is at least 300, you mentioned the other quote.", "seller", [("other_limit", 300.0)]),
        (
            "Three fifty is over my budget. The most I can pay is two eighty for the jacket.",
            "buyer",
            [("own_limit", 280.0)],
        ),
        ("After the viewing I'll send my final offer.", "buyer", []),
        ("I'll make this my final offer: 50.", "buyer", [("final_offer", 50.0)]),
        ("Another buyer gave me a final offer of 700.", "seller", []),
        ("The shop across the street is firm at 45 for the same kettle.", "buyer", []),
        ("The auctioneer called it at 320, final bid, so that's the benchmark.", "seller", []),
        ("The market rate is around 90, but for you it's 75, final price.", "seller", [("final_offer", 75.0)]),
        ("According to your message, 700 is non-negotiable.", "buyer", []),
        ("You wrote 'not a penny less than 80' in your first message.", "buyer", []),
        ("You mentioned 2.20 was firm last time we spoke.", "buyer", []),
        ("I can add 0.10 to my last offer, making it 1.85.", "buyer", []),
        ("Were you to pay in cash, I'd consider making 300 my last price.", "seller", []),
        ("price fix 120, no discount", "seller", [("final_offer", 120.0)]),
        ("Our posted budget is USD 1,500, fixed price.", "buyer", [("own_limit", 1500.0)]),
        ("ok my final is 110 for both chairs", "buyer", [("final_offer", 110.0)]),
        ("I've gone as high as I'm going: 47.", "buyer", [("final_offer", 47.0)]),
        ("At 44 I'm done moving.", "buyer", [("final_offer", 44.0)]),
        ("No more back and forth: 690.", "seller", [("final_offer", 690.0)]),
        ("My ceiling is 2.40 a unit; take 2.30 or leave it.", "buyer", [("own_limit", 2.4), ("final_offer", 2.3)]),
        ("I not can pay more than 500, this is all my money.", "buyer", [("own_limit", 500.0)]),
        ("I will not go higher than my current offer of 7,800.", "buyer", [("final_offer", 7800.0)]),
        ("Sir, I am sure your cost for this phone is not more than 180 dollar.", "buyer", [("other_limit", 180.0)]),
        ("Wholesale price on the exchange today is 0.42 a pound.", "seller", []),
        ("you paid what, 20 bucks?", "buyer", []),
        ("Your colleague mentioned you could go to 500.", "seller", []),
        ("The receipt you showed me says you paid 90.", "buyer", []),
        ("My mom said I can spend max 160.", "buyer", [("own_limit", 160.0)]),
        ("According to your listing, you wanted at least 1,800.", "buyer", []),
        ("My boss won't let me go under 18 a box.", "seller", [("own_limit", 18.0)]),
        ("Below 80 cents a bag I don't make anything.", "seller", [("own_limit", 0.8)]),
        ("No doubt you'd settle for three and a half thousand.", "buyer", [("other_limit", 3500.0)]),
        ("I doubt you'd settle for 3,500.", "buyer", []),
        ("Everyone knows you guys can go down to 900 on these.", "buyer", [("other_limit", 900.0)]),
        ("The most my client is willing to pay for the guitar is 250.", "buyer", [("own_limit", 250.0)]),
        ("I'm not permitted to sell the scooter for less than 1,000.", "seller", [("own_limit", 1000.0)]),
        ("For the shampoo, 3.00 is the floor I've been given.", "seller", [("own_limit", 3.0)]),
        ("The smallest amount I can accept for the spices is 2.50.", "seller", [("own_limit", 2.5)]),
        ("I can only allocate 12 dollars for the notebooks.", "buyer", [("own_limit", 12.0)]),
        ("I'm sure 0.50 per banana would still work for you.", "buyer", [("other_limit", 0.5)]),
        ("Would 0.50 per banana work for you?", "buyer", []),
        ("The cost to you is likely below £1.00 per loaf.", "buyer", [("other_limit", 1.0)]),
        ("Please consider this my closing offer: 4.95 for the spice set.", "seller", [("final_offer", 4.95)]),
        ("My offer is 5.10 for the shampoo, and that won't change.", "buyer", [("final_offer", 5.1)]),
        ("I paid five fifty for the stroller.", "seller", [("own_limit", 550.0)]),
        ("Your supplier charges you under 1 euro per unit, I'm positive.", "buyer", [("other_limit", 1.0)]),
        ("It's clear you'd go up to 95.", "seller", [("other_limit", 95.0)]),
        ("Undoubtedly your finance department can sign off on 33k.", "seller", [("other_limit", 33000.0)]),
        ("Let's be honest, you got this car at auction for under 14k.", "buyer", [("other_limit", 14000.0)]),
        ("Is impossible for me to pay more than 225.", "buyer", [("own_limit", 225.0)]),
        ("I'm only allowed to expense 12 for this, sorry.", "buyer", [("own_limit", 12.0)]),
        ("I'm only cleared to spend 2,950 on this.", "buyer", [("own_limit", 2950.0)]),
        ("The grant only covers 3,500 for the microscope.", "buyer", [("own_limit", 3500.0)]),
        ("The school board approved 2,750 for the projector.", "buyer", [("own_limit", 2750.0)]),
        ("I was approved for 18,000 on the car loan.", "buyer", [("own_limit", 18000.0)]),
        ("My boss gave me 2k for the whole setup.", "buyer", [("own_limit", 2000.0)]),
        (
            "I've got 25 for it; you probably paid 10 at a garage sale.",
            "buyer",
            [("own_limit", 25.0), ("other_limit", 10.0)],
        ),
        ("I've got 25 for it.", "seller", []),
        ("I need to keep this under 1,000.", "buyer", [("own_limit", 1000.0)]),
        ("Can you keep it under 1,000?", "buyer", []),
        ("I was told by finance not to exceed 18k.", "buyer", [("own_limit", 18000.0)]),
        ("Your wholesale cost on this laptop can't exceed 600.", "buyer", [("other_limit", 600.0)]),
        ("I have got only 15 euro, it is all my money for today.", "buyer", [("own_limit", 15.0)]),
        ("For the drone, 720 is everything.", "buyer", [("own_limit", 720.0)]),
        ("4 dollars is what I have for this.", "buyer", [("own_limit", 4.0)]),
        ("We have 60k allocated for the vehicle.", "buyer", [("own_limit", 60000.0)]),
        ("With rent due, I've got about 25 quid to spare for it.", "buyer", [("own_limit", 25.0)]),
        ("For me the upper bound is 16.5k.", "buyer", [("own_limit", 16500.0)]),
        ("Top dollar for me is 85.", "buyer", [("own_limit", 85.0)]),
        ("I paid 500 for my other camera, but this one was a gift.", "seller", []),
        ("My budget for my last phone was 600.", "buyer", []),
        ("Last year my budget for the conference was 2,000, but things have changed.", "buyer", []),
        ("I paid 500 for it last year.", "seller", [("own_limit", 500.0)]),
        ("Two fifty the jar, last price.", "seller", [("final_offer", 2.5)]),
        ("Sorry, 18 is what each of these cost me wholesale, I can't do 15.", "seller", [("own_limit", 18.0)]),
        ("50 cents a bunch is what the wholesaler charges me for these radishes.", "seller", [("own_limit", 0.5)]),
        ("Restoring this dresser took me about 180 in materials.", "seller", [("own_limit", 180.0)]),
        ("The materials for this quilt came to about 120.", "seller", [("own_limit", 120.0)]),
        (
            "I picked up the harvester for 52,000, and after repairs I'm at 56,000 all in.",
            "seller",
            [("own_limit", 52000.0), ("own_limit", 56000.0)],
        ),
        ("I'm already out of pocket 1,800 on this scooter.", "seller", [("own_limit", 1800.0)]),
        ("honestly 3k is where i start losing money on this", "seller", [("own_limit", 3000.0)]),
        ("Below 1,000 I'd just keep riding it myself.", "seller", [("own_limit", 1000.0)]),
        ("The least the estate can accept for the clock is 1,100.", "seller", [("own_limit", 1100.0)]),
        ("The company will reimburse me up to €900 for the laptop.", "buyer", [("own_limit", 900.0)]),
        ("I'm allowed to spend up to 250 from petty cash.", "buyer", [("own_limit", 250.0)]),
        ("I have to clear 22,000 on the caravan to pay off the finance.", "seller", [("own_limit", 22000.0)]),
        ("Each jar of pickles costs about 1.75 to put up.", "seller", [("own_limit", 1.75)]),
        ("I paid 8k for my first car back in 2004.", "seller", []),
        ("The council charges me 60 a year for the trading licence.", "seller", []),
        ("you run a gallery so i'm guessing 400 wouldn't be a problem for you", "seller", [("other_limit", 400.0)]),
        ("Dealer wanted 900 from you, so I know 600 ain't gonna break you.", "seller", [("other_limit", 600.0)]),
        ("$300 for both is all i can do.", "buyer", [("own_limit", 300.0)]),
        ("2,400, by my mother's life, not one lira less.", "seller", [("final_offer", 2400.0)]),
        ("My war chest for this one is $1,400.", "buyer", [("own_limit", 1400.0)]),
        (
            "£375 is truly all I have, and I won't be moving from that.",
            "buyer",
            [("own_limit", 375.0), ("final_offer", 375.0)],
        ),
        (
            "You've had it listed for four months; I think you'd be glad to get $21,000.",
            "buyer",
            [("other_limit", 21000.0)],
        ),
        ("12.50, and that's the last time I'm lowering it.", "seller", [("final_offer", 12.5)]),
        ("Best and final from me: 3.60 for the phone case.", "buyer", [("final_offer", 3.6)]),
        ("Price is 2.25 and it's not up for further discussion.", "seller", [("final_offer", 2.25)]),
        ("i'm holding at 1.90 no matter what", "buyer", [("final_offer", 1.9)]),
        ("honestly 2.20 is as far as my money goes", "buyer", [("own_limit", 2.2)]),
        ("budget = 4. offer = 3. your move", "buyer", [("own_limit", 4.0)]),
        ("Your willingness to pay is clearly higher than 90 cents.", "seller", [("other_limit", 0.9)]),
        ("The least I can take is twelve five.", "seller", [("own_limit", 12500.0)]),
        ("Fifteen two is final, I won't budge.", "seller", [("final_offer", 15200.0)]),
        ("Honestly eight and a half grand is all I've got saved for this car.", "buyer", [("own_limit", 8500.0)]),
        ("As the sales agent, I'm not permitted to accept offers below $8,150.", "seller", [("own_limit", 8150.0)]),
        ("Between my trade-in and savings I have exactly 13,700 to work with.", "buyer", [("own_limit", 13700.0)]),
        ("Insurance aside, I can only put 5 grand toward the car itself.", "buyer", [("own_limit", 5000.0)]),
        ("I can only do 300 for the alternator, that's what I've got until payday.", "buyer", [("own_limit", 300.0)]),
        ("Company policy caps our pool car purchases at 20k each.", "buyer", [("own_limit", 20000.0)]),
        ("Your bank has clearly approved you for more than 12.5k.", "seller", [("other_limit", 12500.0)]),
        ("You're into this car for less than 6k, no question.", "buyer", [("other_limit", 6000.0)]),
        ("My budget used to be 200, before the layoffs.", "buyer", []),
        ("Next month my budget will be 300, so maybe we talk then.", "buyer", []),
        ("My max was 40 yesterday.", "buyer", []),
        ("I'm pretty sure your budget goes up to 500.", "seller", [("other_limit", 500.0)]),
        ("My budget is 40, kidding, I haven't decided yet.", "buyer", []),
        ("Oh totally, my budget for a lawnmower is 60,000.", "buyer", []),
        ("In a world where I had 500 to spend, this amp would be mine.", "buyer", []),
        ("Let's say, hypothetically, I'm capped at 600. Then what?", "buyer", []),
        ("I maxed out my 5,000 credit limit on the roof repair.", "buyer", []),
        ("The trailer has a weight limit of 3,500 pounds.", "buyer", []),
        ("Given your budget of 50, your words, I can do 55.", "seller", []),
        ("Two hundred even for both, and I won't go a dollar higher.", "buyer", [("final_offer", 200.0)]),
        ("It would take a budget of 700 just to look at the new ones.", "buyer", []),
        ("My bank caps transfers at 1,000 a day.", "buyer", []),
        ("Last year I set a ceiling of 1,500 for my work laptop.", "buyer", []),
        ("Back in 2004 I paid 8k for the truck.", "seller", [("own_limit", 8000.0)]),
        ("My wife set a 300 limit for Christmas gifts, but this one is for me.", "buyer", []),
        ("My budget for the sofa is 700, but this one is over it.", "buyer", [("own_limit", 700.0)]),
        ("60 final, its literally all i have", "buyer", [("final_offer", 60.0), ("own_limit", 60.0)]),
        ("i work 2 jobs and still only have 100 for this bike lol", "buyer", [("own_limit", 100.0)]),
        ("ceiling 55.", "buyer", [("own_limit", 55.0)]),
        ("I imagine you'd be willing to accept 1,100 for the sofa.", "buyer", [("other_limit", 1100.0)]),
        ("Imagine you had 1,100 to spend.", "seller", []),
        ("Let's not play games: your top number is 22,000.", "seller", [("other_limit", 22000.0)]),
        ("No doubt your procurement team has budgeted 60,000 for this project.", "seller", [("other_limit", 60000.0)]),
        ("Obviously your boss approved 12k.", "seller", [("other_limit", 12000.0)]),
        ("Were your budget 500, this would be the sofa for you.", "seller", []),
        ("You obviously break even at 25, so 30 would be a nice profit for you.", "buyer", [("other_limit", 25.0)]),
        ("A shop like yours can let these go for 2 dollars each and still profit.", "buyer", [("other_limit", 2.0)]),
        ("Above 85 it's cheaper for me to just rent one.", "buyer", [("own_limit", 85.0)]),
        ("Below 2.75 a litre I'm pouring money down the drain.", "seller", [("own_limit", 2.75)]),
        ("Under 100 it's a steal.", "seller", []),
        ("Under 50 would be great for me.", "buyer", []),
        ("I'd struggle past 60.", "buyer", [("own_limit", 60.0)]),
        ("I'd be hard pressed to do less than 8.", "seller", [("own_limit", 8.0)]),
        ("Tops for me is 5 a dozen.", "buyer", [("own_limit", 5.0)]),
        ("I can take 150 at the lowest.", "seller", [("own_limit", 150.0)]),
        ("I need to clear 1.05 a can to stay afloat.", "seller", [("own_limit", 1.05)]),
        ("My old budget was 50, back when I was working.", "buyer", []),
        ("Over 400 and I keep taking the bus another year.", "buyer", [("own_limit", 400.0)]),
        ("Under 240 and it's not worth the drive to hand it over.", "seller", [("own_limit", 240.0)]),
        ("Going under 150 would mean I worked the whole weekend for free.", "seller", [("own_limit", 150.0)]),
        ("Once it goes past 1,300 the whole trip stops making sense for me.", "buyer", [("own_limit", 1300.0)]),
        ("Over 400 and you get the case too.", "seller", []),
        ("Over 50 the shipping is free.", "seller", []),
        ("I'm sure you'd let me have it for 45.", "buyer", [("other_limit", 45.0)]),
        ("I am certain that you still can spend 5 euros for one bracelet.", "seller", [("other_limit", 5.0)]),
        ("Surely you can part with 60 for a hand-knotted rug this size.", "seller", [("other_limit", 60.0)]),
        ("With your bonus, you'd have no trouble paying 4k for the trip.", "seller", [("other_limit", 4000.0)]),
        ("Over 1,000 and I'd want a warranty with it.", "buyer", []),
        ("Under 2 a pot, these usually sell out by noon.", "seller", []),
        ("Above 1,000 I can't accept cash, bank rules.", "seller", []),
        ("Under 30 and I'll need payment upfront, no invoices.", "seller", []),
        ("Over 50 the shipping is free, and I know you'd take 45 for the lamp.", "buyer", [("other_limit", 45.0)]),
        ("Below 3 a dozen and the hens aren't paying for their feed.", "seller", [("own_limit", 3.0)]),
        ("maybe ur max is 300 idk lmk", "seller", []),
        ("Perhaps your minimum is 850, I do not know, you must tell me.", "buyer", []),
        ("you paid maybe 90 for it", "buyer", [("other_limit", 90.0)]),
        ("ur mom literally said u have 450 in ur account lol", "seller", []),
        ("I note that 3,450 is well below what you paid.", "buyer", []),
        ("You'll happily take a dollar for the last three, I bet!", "buyer", [("other_limit", 1.0)]),
        ("Sure, and I paid a dollar for it. Come on.", "seller", []),
        ("Firm on cash only, no PayPal.", "seller", []),
        ("I'm holding firm at a floor of 210 for the bike rack.", "seller", [("own_limit", 210.0)]),
        ("I'm holding firm at 210 for the bike rack.", "seller", [("final_offer", 210.0)]),
        ("I'll meet you halfway at 6,850. I'm not going higher than that.", "buyer", [("final_offer", None)]),
        ("I can accept 4,100, and I will not go a cent lower than that.", "seller", [("final_offer", 4100.0)]),
        ("I've got 6,200 into it with the new motor, so I won't go under that.", "seller", [("own_limit", 6200.0)]),
        ("I cannot accept less than 0.105 per word for technical content.", "seller", [("own_limit", 0.105)]),
        ("16 quid for three, love, final price.", "seller", [("final_offer", 16.0)]),
        (
            "I can do 150 for the block of four since he's just starting, and I'm firm on that.",
            "seller",
            [("final_offer", 150.0)],
        ),
        (
            "Would you take two hundred? I reckon you'd let it go for two twenty easy.",
            "buyer",
            [("other_limit", 220.0)],
        ),
        ("We are unable to go below 1,680, as that is our infrastructure cost.", "seller", [("own_limit", 1680.0)]),
        ("Can do 285, that's it, no lower.", "seller", [("final_offer", 285.0)]),
        ("I can go as high as 2.45, no more.", "buyer", [("own_limit", 2.45)]),
        ("I'm allowed to go to 4,999.99 for the server, no more.", "buyer", [("own_limit", 4999.99)]),
        ("I'm firm on needing the original charger included.", "buyer", []),
        ("I'm firm on that price, 45.", "seller", [("final_offer", 45.0)]),
        ("I won't budge on 9,500.", "seller", [("final_offer", 9500.0)]),
        ("I have no wiggle room: 7,500 is the last price.", "seller", [("final_offer", 7500.0)]),
        ("I set aside 2k for the honeymoon, totally separate from this. For the camera I'm offering 650.", "buyer", []),
        ("My budget for the tires is a separate 400; for the rims I'm offering 250.", "buyer", []),
        ("Our minimum order value for free delivery is 30.", "seller", []),
        ("My friend said you'd take 250. I'm offering 230.", "buyer", []),
        ("my mom said i can spend max one-sixty so yeah", "buyer", [("own_limit", 160.0)]),
        ("so 80 is ur absolute floor or", "buyer", []),
        ("The other buyer offered 300, but my floor is 320 anyway.", "seller", [("own_limit", 320.0)]),
        ("If I sold my comic collection, my budget could be 2,000, but I'm not doing that.", "buyer", []),
        ("If it had the charger I'd pay more, but as it is my max is 35.", "buyer", [("own_limit", 35.0)]),
        (
            "Got it. If I had 600 I'd take it right now, but 560 is the top of my budget.",
            "buyer",
            [("own_limit", 560.0)],
        ),
        ("I paid 15 for the stand, which I'm keeping.", "seller", []),
        ("Repairing my other bike cost me 120, that's why I'm selling this one.", "seller", []),
        ("I paid 20 for the case separately, but that's not included.", "seller", []),
        ("My minimum for the weekend rental is 220, cleaning fee not included.", "seller", [("own_limit", 220.0)]),
        ("I'd need at most a week to pay the rest: 300 now and 200 on Friday?", "buyer", []),
        (
            "You bought this lumber for a deck that got cancelled, you'll take 800 for the pile.",
            "buyer",
            [("other_limit", 800.0)],
        ),
        ("You'd let the couch go for 80 bucks, it doesn't fit in your new place.", "buyer", [("other_limit", 80.0)]),
        ("You can take 65, you've already made your money back on this one.", "buyer", [("other_limit", 65.0)]),
        ("You can do 60, or not?", "buyer", []),
        ("My friend said you might let the bike go for 200. Is that true?", "buyer", []),
        ("You might let it go for 200, I suppose.", "buyer", []),
        ("You'd pay 18 euros at the florist for a smaller bouquet.", "seller", []),
        ("The least you'd pay for a new one is 600, so this at 400 is a bargain.", "seller", []),
        ("I know you bought it for 150 at the outlet, so 160 is fair.", "buyer", [("other_limit", 150.0)]),
        ("Your letter of 3 March stated that your client would pay 27,500.", "seller", []),
        (
            "For the avoidance of doubt, the Buyer's maximum authorized expenditure for this unit is 13,500.",
            "buyer",
            [("own_limit", 13500.0)],
        ),
        ("You didn't pay 9,000 for this heap, come on.", "buyer", []),
        ("You didn't pay more than 200 for it.", "buyer", [("other_limit", 200.0)]),
        ("900 for the whole pile, that's the number and I'm not moving.", "buyer", [("final_offer", 900.0)]),
        (
            "The Seller contends that the Buyer's reservation price is not less than 7,200.",
            "seller",
            [("other_limit", 7200.0)],
        ),
        ("The Buyer can spend not more than 7,200.", "buyer", [("own_limit", 7200.0)]),
        ("The seller next door is at 40 at least.", "buyer", []),
        ("A man who keeps his truck like that has set aside at least 30,000 for his first boat.", "seller", []),
        ("A quarter for the postcard, not a penny less.", "seller", [("final_offer", 0.25)]),
        ("Tell you what, 11.50 a pound for the lot, and that's my final word.", "seller", [("final_offer", 11.5)]),
        ("I won't go a cent below 72 for the cookware set.", "seller", [("own_limit", 72.0), ("final_offer", 72.0)]),
        ("I can't spend a penny over 18 on this, my rent's due.", "buyer", [("own_limit", 18.0)]),
        ("You didn't really pay 900 for it, did you?", "buyer", []),
        ("When I started out I'd never go below 20 for a portrait; now I charge 60.", "seller", []),
        ("I'm firm on the pickup being Saturday morning; the 60 we can talk about.", "seller", []),
        ("I'm firm on 60.", "seller", [("final_offer", 60.0)]),
        ("My grandfather's motto was 'not a penny less', but I'm more flexible. How does 35 sound?", "seller", []),
        ("I've got four dollars a bale in 'em, so I can't go under that.", "seller", [("own_limit", 4.0)]),
        ("Max 4 per customer is fine, and 3 each is my limit.", "buyer", [("own_limit", 3.0)]),
        ("Final-sale items can't be returned, just so you know. This one's 18.", "seller", []),
        ("The mattress is firm, medium-firm really, and it's 220.", "seller", []),
        ("The price is firm at 220.", "seller", [("final_offer", 220.0)]),
    ],
)
def test_phrasings_and_sides(message, role, claims):
    assert [(c.kind, c.value) for c in extract_claims(message, role)] == claims


def test_the_speakers_side_only_narrows_what_is_found():
    """Without a side every cue applies; with one, only those that side can mean."""
    rows = _load("claims_dev3.jsonl")
    for row in rows:
        sided = {(c.kind, c.value) for c in extract_claims(row["message"], row["role"])}
        unsided = {(c.kind, c.value) for c in extract_claims(row["message"])}
        assert sided <= unsided or any(c[0] == "final_offer" for c in sided ^ unsided), row["message"]


# --- the model-assisted reading ------------------------------------------------------------------

from bargain.agents.stub_server import StubServer  # noqa: E402
from bargain.analysis.claims import confirm  # noqa: E402
from bargain.analysis.claims_model import combine, parse_reply  # noqa: E402


def test_a_model_claim_is_kept_only_when_the_text_confirms_it():
    message = "My relocation package covers up to $1,500 for housing, and I can't go beyond what they reimburse."
    assert extract_claims(message, "buyer") == []
    assisted = combine(
        message,
        "buyer",
        [
            {"kind": "own_limit", "value": 1500.0},  # written, and "can't go beyond" stands in the next clause: added
            {"kind": "own_limit", "value": 999.0},  # no such price: refused
            {"kind": "other_limit", "value": 1500.0},  # no cue of that kind: refused
            {"kind": "final_offer", "value": None},  # no final cue: refused
        ],
    )
    assert [(c.kind, c.value, c.text) for c in assisted.claims] == [("own_limit", 1500.0, "$1,500")]
    assert assisted.counts() == {
        "rules": 0,
        "model_returned": 4,
        "model_added": 1,
        "model_refused": 3,
        "model_failed": 0,
    }


def test_a_model_claim_the_rules_already_have_is_not_counted_twice():
    assisted = combine("My budget is 40.", "buyer", [{"kind": "own_limit", "value": 40}])
    assert assisted.counts() == {
        "rules": 1,
        "model_returned": 1,
        "model_added": 0,
        "model_refused": 0,
        "model_failed": 0,
    }


@pytest.mark.parametrize(
    "message, role, kind, value",
    [
        ("is your budget 50?", "seller", "other_limit", 50.0),  # a question
        ("My max is 120, I know you paid 90.", "buyer", "other_limit", 120.0),  # the cue is about another price
        ("I'm not saying my budget is 40.", "buyer", "own_limit", 40.0),  # negated
        ("I can do 40.", "buyer", "own_limit", 40.0),  # an offer: no limit word
        ("My budget is 40.", "buyer", "own_limit", 45.0),  # not the number written
        ("My budget is 40.", "buyer", "bogus", 40.0),
    ],
)
def test_confirm_refuses(message, role, kind, value):
    assert confirm(message, role, kind, value) is None


def test_model_replies_are_read_strictly():
    assert parse_reply(
        '<think>hmm [1]</think> Here: [{"kind": "own_limit", "value": "2,500"}, '
        '{"kind": "lie", "value": 3}, {"kind": "final_offer", "value": null}, '
        '{"kind": "other_limit", "value": true}]'
    ) == [{"kind": "own_limit", "value": 2500.0}, {"kind": "final_offer", "value": None}]
    assert parse_reply("no list here") is None and parse_reply("[not json") is None and parse_reply("[]") == []


def test_the_claims_command_with_a_model():
    replies = iter(['[{"kind": "own_limit", "value": 1500}, {"kind": "own_limit", "value": 999}]', "I cannot answer."])
    with StubServer(["reader"], reply=lambda body: next(replies)) as server:
        first = run_main(
            main,
            "claims",
            "--role",
            "buyer",
            "--reservation",
            "2400",
            "--model",
            f"openai:reader@{server.url}",
            stdin="My relocation package covers up to $1,500 for housing, and I can't go beyond what they reimburse.",
        )
        second = run_main(
            main,
            "claims",
            "--role",
            "buyer",
            "--reservation",
            "2400",
            "--model",
            f"openai:reader@{server.url}",
            stdin="My budget is 2,000 and the ceiling is near 2,500.",
        )
        prompt = server.requests[0]["messages"][0]["content"]
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["claims"] == [{"kind": "own_limit", "value": 1500.0, "text": "$1,500", "misrepresentation": True}]
    assert out["counts"] == {"rules": 0, "model_returned": 2, "model_added": 1, "model_refused": 1, "model_failed": 0}
    assert "The speaker is the buyer" in prompt and "relocation package" in prompt
    # an unreadable reply keeps the rules' claims, and says so
    assert json.loads(second.stdout)["counts"] == {
        "rules": 2,
        "model_returned": 0,
        "model_added": 0,
        "model_refused": 0,
        "model_failed": 1,
    }
