"""The exact prompts and per-turn chat messages an agent sees (docs/PROTOCOL.md §4-5).

Everything here is byte-exact: the adapters only behave as in the paper if they see the same
text. Observations are always built through the engine (`new_initial_state(...).observation`),
so these tests also pin what the information condition lets through to each side.
"""

from __future__ import annotations

import asyncio

import pytest

from bargain.agents.tactics import Hardliner
from bargain.engine.game import Action, Move, new_initial_state
from bargain.engine.prompts import PromptVersion, chat_messages, system_prompt
from bargain.engine.replies import Parsing, parse_reply, render_reply
from bargain.engine.trial import Condition, Mode, Role, Trial

# docs/PROTOCOL.md §4, copied verbatim from between the ~~~~ fences (no trailing newline).
PROTOCOL_SELLER_PROMPT = """You are the SELLER in a bargaining negotiation.

Item: 1 kg of white rice
Description: A kilogram of standard white rice, packaged for retail sale. White rice is a staple food commodity traded globally and found in supermarkets, grocery stores, and markets.

Your persona: You are a market vendor selling rice sourced wholesale from a distributor. You aim to maintain competitive pricing with supermarkets while making a modest profit.
Your reservation price: 1.22. You can always sell to the market at this price if the bargaining fails.
You know the buyer's reservation price is 2.68.
The buyer does not know your exact reservation price, their prior on your reservation price is ~ Uniform[1.2, 2.1].

Output format:

- Write 1-3 sentences describing your bargaining strategy. This will not be exposed to the other agent.
- Then output a JSON dict inside a code block using triple backticks:

```json
{
  "message": "your message to the other agent",
  "action": "OFFER / NO_DEAL",
  "offer_price": 123.45
}
```"""

V_B, V_S = 2.68, 1.22  # the paper's first trial with seed 42 (low:0, buyer_unaware)

TRAIN_BULLET = "- Write 1-3 sentences describing your bargaining strategy. This will not be exposed to the other agent."
PAPER_BULLET = (
    "- Write 1\u20133 sentences of describing your barganing strategy. This will not be exposed to the other agent"
)
TRAIN_PRICE_LINE = '  "offer_price": 123.45'
PAPER_PRICE_LINE = '  "offer_price": 123.45   # only required if action is OFFER'
SIMULTANEOUS_ACTION_LINE = '  "action": "OFFER / NO_DEAL",'
SEQUENTIAL_ACTION_LINE = '  "action": "OFFER / DEAL / NO_DEAL",'

# low:0 has buyer range [2.1, 3.0] and seller range [1.2, 2.1].
_DOES_NOT_KNOW = (
    "The {other} does not know your exact reservation price, "
    "their prior on your reservation price is ~ Uniform[{lo}, {hi}].\n"
)
EXPECTED_CONDITION_LINES = {
    (Condition.FULL, Role.BUYER): "You know the other agent's reservation price is 1.22.\n",
    (Condition.FULL, Role.SELLER): "You know the other agent's reservation price is 2.68.\n",
    # seller informed
    (Condition.BUYER_UNAWARE, Role.SELLER): (
        "You know the buyer's reservation price is 2.68.\n" + _DOES_NOT_KNOW.format(other="buyer", lo="1.2", hi="2.1")
    ),
    (Condition.BUYER_UNAWARE, Role.BUYER): "Your prior on the seller's reservation price is ~ Uniform[1.2, 2.1].\n",
    # buyer informed
    (Condition.SELLER_UNAWARE, Role.BUYER): (
        "You know the seller's reservation price is 1.22.\n" + _DOES_NOT_KNOW.format(other="seller", lo="2.1", hi="3.0")
    ),
    (Condition.SELLER_UNAWARE, Role.SELLER): "Your prior on the buyer's reservation price is ~ Uniform[2.1, 3.0].\n",
    (Condition.BOTH_UNAWARE, Role.BUYER): (
        "Your prior on the seller's reservation price is ~ Uniform[1.2, 2.1].\n"
        + _DOES_NOT_KNOW.format(other="seller", lo="2.1", hi="3.0")
    ),
    (Condition.BOTH_UNAWARE, Role.SELLER): (
        "Your prior on the buyer's reservation price is ~ Uniform[2.1, 3.0].\n"
        + _DOES_NOT_KNOW.format(other="buyer", lo="1.2", hi="2.1")
    ),
}


def make_trial(
    scenario,
    condition=Condition.BUYER_UNAWARE,
    buyer_price=V_B,
    seller_price=V_S,
    mode=Mode.SIMULTANEOUS,
    max_rounds=4,
    first_actor=Role.BUYER,
) -> Trial:
    return Trial(
        trial_id=1,
        scenario=scenario,
        condition=condition,
        buyer_price=buyer_price,
        seller_price=seller_price,
        max_rounds=max_rounds,
        mode=mode,
        first_actor=first_actor,
    )


def prompt_for(scenario, role, version=PromptVersion.TRAIN, **kwargs) -> str:
    obs = new_initial_state(make_trial(scenario, **kwargs)).observation(role)
    return system_prompt(obs, version)


def expected_prompt(
    scenario,
    role,
    condition_lines,
    action_line=SIMULTANEOUS_ACTION_LINE,
    bullet=TRAIN_BULLET,
    price_line=TRAIN_PRICE_LINE,
    buyer_price=V_B,
    seller_price=V_S,
) -> str:
    """The §4 prompt assembled line by line from the protocol's description."""
    own = buyer_price if role is Role.BUYER else seller_price
    market = "buy from" if role is Role.BUYER else "sell to"
    persona = scenario.buyer_persona if role is Role.BUYER else scenario.seller_persona
    return (
        f"You are the {role.value.upper()} in a bargaining negotiation.\n\n"
        f"Item: {scenario.product_name}\n"
        f"Description: {scenario.product_description}\n\n"
        f"Your persona: {persona}\n"
        f"Your reservation price: {own}. You can always {market} the market at this price if the bargaining fails.\n"
        f"{condition_lines}\n"
        "Output format:\n\n"
        f"{bullet}\n"
        "- Then output a JSON dict inside a code block using triple backticks:\n\n"
        "```json\n{\n"
        '  "message": "your message to the other agent",\n'
        f"{action_line}\n"
        f"{price_line}\n"
        "}\n```"
    )


@pytest.fixture(scope="module")
def rice(scenario_set):
    scenario = scenario_set.get("low:0")
    assert scenario.product_name == "1 kg of white rice"
    assert scenario.buyer_range == (2.1, 3.0) and scenario.seller_range == (1.2, 2.1)
    return scenario


# --- §4: the system prompt ----------------------------------------------------------------


def test_seller_prompt_matches_protocol_byte_for_byte(rice):
    trial = make_trial(rice, Condition.BUYER_UNAWARE, mode=Mode.SIMULTANEOUS)
    obs = new_initial_state(trial).observation(Role.SELLER)
    prompt = system_prompt(obs, PromptVersion.TRAIN)
    assert prompt == PROTOCOL_SELLER_PROMPT
    assert not prompt.endswith("\n")
    # `train` is the default wording.
    assert system_prompt(obs) == PROTOCOL_SELLER_PROMPT
    assert system_prompt(obs, "train") == PROTOCOL_SELLER_PROMPT


def test_expected_prompt_helper_reproduces_the_protocol_example(rice):
    # Guards the helper the other tests rely on.
    lines = EXPECTED_CONDITION_LINES[(Condition.BUYER_UNAWARE, Role.SELLER)]
    assert expected_prompt(rice, Role.SELLER, lines) == PROTOCOL_SELLER_PROMPT


@pytest.mark.parametrize("condition", list(Condition))
@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
def test_whole_prompt_for_every_condition_and_role(rice, condition, role):
    prompt = prompt_for(rice, role, condition=condition)
    assert prompt == expected_prompt(rice, role, EXPECTED_CONDITION_LINES[(condition, role)])


@pytest.mark.parametrize("condition", list(Condition))
@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
def test_condition_lines_sit_between_reservation_line_and_output_format(rice, condition, role):
    prompt = prompt_for(rice, role, condition=condition)
    between = prompt.split("if the bargaining fails.\n", 1)[1].split("\nOutput format:", 1)[0]
    assert between == EXPECTED_CONDITION_LINES[(condition, role)]
    n_lines = between.count("\n")
    informed = condition.knows_other_price(role)
    if condition is Condition.FULL:
        assert n_lines == 1
    elif condition is Condition.BOTH_UNAWARE:
        assert n_lines == 2
        assert between.startswith("Your prior on the")
        assert "does not know your exact reservation price" in between.splitlines()[1]
    elif informed:
        assert n_lines == 2
    else:
        assert n_lines == 1


@pytest.mark.parametrize("condition", list(Condition))
@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
def test_uninformed_side_never_sees_the_other_reservation_price(rice, condition, role):
    # Prices chosen so that neither string occurs anywhere in the scenario's text or ranges.
    buyer_price, seller_price = 2.73, 1.37
    prices = {Role.BUYER: str(buyer_price), Role.SELLER: str(seller_price)}
    trial = make_trial(rice, condition, buyer_price=buyer_price, seller_price=seller_price)
    state = new_initial_state(trial)
    obs = state.observation(role)
    other = prices[role.other]
    texts = [system_prompt(obs, v) for v in PromptVersion]
    texts += [m["content"] for m in chat_messages(obs)]
    if condition.knows_other_price(role):
        assert all(other in t for t in texts[:2])
        assert obs.other_price == float(other)
    else:
        assert obs.other_price is None
        assert all(other not in t for t in texts)
    # Own price is always shown.
    assert f"Your reservation price: {prices[role]}." in texts[0]


def test_uninformed_side_does_not_learn_other_price_over_a_whole_game(rice):
    buyer_price, seller_price = 2.73, 1.37
    trial = make_trial(rice, Condition.BOTH_UNAWARE, buyer_price=buyer_price, seller_price=seller_price)
    state = new_initial_state(trial)
    for r in range(1, 5):
        state.apply_actions(
            {
                Role.BUYER: Move(Action.OFFER, 1.3 + r / 100, message=f"b{r}"),
                Role.SELLER: Move(Action.OFFER, 2.9 - r / 100, message=f"s{r}"),
            }
        )
    assert state.is_terminal()
    for role, other in ((Role.BUYER, str(seller_price)), (Role.SELLER, str(buyer_price))):
        for msg in chat_messages(state.observation(role)):
            assert other not in msg["content"]


@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
@pytest.mark.parametrize("condition", list(Condition))
def test_action_line_depends_on_mode(rice, role, condition):
    simultaneous = prompt_for(rice, role, condition=condition, mode=Mode.SIMULTANEOUS).splitlines()
    sequential = prompt_for(rice, role, condition=condition, mode=Mode.SEQUENTIAL).splitlines()
    assert simultaneous.count(SIMULTANEOUS_ACTION_LINE) == 1
    assert SEQUENTIAL_ACTION_LINE not in simultaneous
    assert sequential.count(SEQUENTIAL_ACTION_LINE) == 1
    assert SIMULTANEOUS_ACTION_LINE not in sequential
    # Nothing else changes with the mode.
    diff = [(a, b) for a, b in zip(simultaneous, sequential) if a != b]
    assert len(simultaneous) == len(sequential)
    assert diff == [(SIMULTANEOUS_ACTION_LINE, SEQUENTIAL_ACTION_LINE)]


def test_sequential_prompt_whole(rice):
    lines = EXPECTED_CONDITION_LINES[(Condition.SELLER_UNAWARE, Role.BUYER)]
    prompt = prompt_for(
        rice, Role.BUYER, condition=Condition.SELLER_UNAWARE, mode=Mode.SEQUENTIAL, first_actor=Role.SELLER
    )
    assert prompt == expected_prompt(rice, Role.BUYER, lines, action_line=SEQUENTIAL_ACTION_LINE)


# --- §4: prompt versions -------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("condition", list(Condition))
@pytest.mark.parametrize("role", [Role.BUYER, Role.SELLER])
def test_paper_eval_version_differs_only_in_bullet_and_price_line(rice, mode, condition, role):
    train = prompt_for(rice, role, PromptVersion.TRAIN, condition=condition, mode=mode)
    paper = prompt_for(rice, role, PromptVersion.PAPER_EVAL, condition=condition, mode=mode)
    assert paper == prompt_for(rice, role, "paper-eval", condition=condition, mode=mode)
    train_lines, paper_lines = train.split("\n"), paper.split("\n")
    assert len(train_lines) == len(paper_lines)
    diff = [(a, b) for a, b in zip(train_lines, paper_lines) if a != b]
    assert diff == [(TRAIN_BULLET, PAPER_BULLET), (TRAIN_PRICE_LINE, PAPER_PRICE_LINE)]
    assert not paper.endswith("\n")


def test_paper_eval_lines_exact(rice):
    paper = prompt_for(rice, Role.SELLER, PromptVersion.PAPER_EVAL)
    lines = paper.split("\n")
    first_bullet = next(line for line in lines if line.startswith("- "))
    assert first_bullet == PAPER_BULLET
    assert "\u2013" in first_bullet and "1-3" not in first_bullet  # en dash, not hyphen
    assert not first_bullet.endswith(".")
    assert "barganing" in first_bullet and "of describing" in first_bullet
    assert PAPER_PRICE_LINE in lines
    assert paper == expected_prompt(
        rice,
        Role.SELLER,
        EXPECTED_CONDITION_LINES[(Condition.BUYER_UNAWARE, Role.SELLER)],
        bullet=PAPER_BULLET,
        price_line=PAPER_PRICE_LINE,
    )
    # The train wording has neither.
    train = prompt_for(rice, Role.SELLER, PromptVersion.TRAIN)
    assert "\u2013" not in train and "#" not in train


def test_chat_messages_use_the_requested_version(rice):
    obs = new_initial_state(make_trial(rice)).observation(Role.SELLER)
    paper = chat_messages(obs, PromptVersion.PAPER_EVAL)[0]["content"]
    assert paper == system_prompt(obs, PromptVersion.PAPER_EVAL) + "\n\nRound 1, rounds left 3"
    assert chat_messages(obs)[0]["content"] == PROTOCOL_SELLER_PROMPT + "\n\nRound 1, rounds left 3"


# --- §4: numbers rendered with str() -------------------------------------------------------


def test_range_bounds_keep_their_json_type(scenario_set):
    scenario = scenario_set.tier("very_high")[0]
    assert scenario.buyer_range == (3750.0, 6000)
    assert type(scenario.buyer_range[0]) is float and type(scenario.buyer_range[1]) is int
    lo_s, hi_s = scenario.seller_range
    v_b, v_s = 5123.45, 2222.22

    # The seller is uninformed: its prior on the buyer is the buyer's range, as in the JSON.
    seller = prompt_for(scenario, Role.SELLER, condition=Condition.SELLER_UNAWARE, buyer_price=v_b, seller_price=v_s)
    assert "Your prior on the buyer's reservation price is ~ Uniform[3750.0, 6000].\n" in seller
    # The informed buyer is told the seller's prior on it: its own range.
    buyer = prompt_for(scenario, Role.BUYER, condition=Condition.SELLER_UNAWARE, buyer_price=v_b, seller_price=v_s)
    assert (
        "The seller does not know your exact reservation price, their prior on your reservation price "
        "is ~ Uniform[3750.0, 6000].\n"
    ) in buyer
    for text in (seller, buyer):
        assert "6000.0" not in text and "6000]" in text
    # The seller's range renders as stored as well.
    buyer_unaware = prompt_for(
        scenario, Role.BUYER, condition=Condition.BUYER_UNAWARE, buyer_price=v_b, seller_price=v_s
    )
    assert f"Your prior on the seller's reservation price is ~ Uniform[{lo_s}, {hi_s}].\n" in buyer_unaware


def test_reservation_prices_rendered_with_str(rice):
    prompt = prompt_for(rice, Role.BUYER, condition=Condition.FULL, buyer_price=2.5, seller_price=2)
    assert "Your reservation price: 2.5. You can always buy from the market" in prompt
    assert "You know the other agent's reservation price is 2.\n" in prompt


# --- §5: per-turn user messages and the chat history ---------------------------------------

B_RAW_1 = 'B-RAW-1 open low.\n\n```json\n{"message": "How about 1.5?", "action": "OFFER", "offer_price": 1.5}\n```'


def _simultaneous_game(rice, condition=Condition.FULL):
    """A 4-round simultaneous game, with the moves of each round."""
    state = new_initial_state(make_trial(rice, condition, mode=Mode.SIMULTANEOUS, max_rounds=4))
    rounds = [
        {
            Role.BUYER: Move(Action.OFFER, 1.5, "How about 1.5?", "B-THOUGHT-1", raw=B_RAW_1),
            Role.SELLER: Move(Action.OFFER, 2.5, "", "S-THOUGHT-1"),
        },
        {
            Role.BUYER: Move(Action.INVALID, None, "Let me think", "B-THOUGHT-2", raw="B-RAW-2 garbled", error="bad"),
            Role.SELLER: Move(Action.OFFER, 2.2, "2.2 is my best", "S-THOUGHT-2", raw="S-RAW-2"),
        },
        {
            Role.BUYER: Move(Action.OFFER, 0, "", "B-THOUGHT-3"),
            Role.SELLER: Move(Action.OFFER, 2.1, "ok", "S-THOUGHT-3"),
        },
        {
            Role.BUYER: Move(Action.NO_DEAL, None, "bye", "B-THOUGHT-4", raw="B-RAW-4"),
            Role.SELLER: Move(Action.OFFER, 2.0, "last call", "S-THOUGHT-4"),
        },
    ]
    return state, rounds


def _assistant(move: Move) -> str:
    return move.raw if move.raw is not None else render_reply(move.thought, move.message, move.action, move.price)


def test_first_turn_is_prompt_newline_then_round_line(rice):
    for role in (Role.BUYER, Role.SELLER):
        obs = new_initial_state(make_trial(rice, max_rounds=4)).observation(role)
        assert chat_messages(obs) == [{"role": "user", "content": system_prompt(obs) + "\n\nRound 1, rounds left 3"}]
    obs = new_initial_state(make_trial(rice, max_rounds=6)).observation(Role.BUYER)
    assert chat_messages(obs)[0]["content"] == system_prompt(obs) + "\n\nRound 1, rounds left 5"
    obs = new_initial_state(make_trial(rice, max_rounds=1)).observation(Role.SELLER)
    assert chat_messages(obs)[0]["content"] == PROTOCOL_SELLER_PROMPT + "\n\nRound 1, rounds left 0"


def test_simultaneous_game_chat_histories_exact(rice):
    state, rounds = _simultaneous_game(rice)
    seller_prompt = system_prompt(state.observation(Role.SELLER))
    buyer_prompt = system_prompt(state.observation(Role.BUYER))
    for moves in rounds:
        state.apply_actions(moves)
    assert state.is_terminal() and state.deal_price is None
    b = [r[Role.BUYER] for r in rounds]
    s = [r[Role.SELLER] for r in rounds]

    seller_users = [
        seller_prompt + "\n\nRound 1, rounds left 3",
        "Buyer said: How about 1.5?\nBuyer's offer: 1.5\nRound 2, rounds left 2",
        # Last buyer move INVALID: its message is relayed, the offer is the latest valid one (round 1).
        "Buyer said: Let me think\nBuyer's offer: 1.5\nRound 3, rounds left 1",
        # Latest valid buyer offer is 0 and its message is empty: both parts are left out.
        "Round 4, rounds left 0",
    ]
    buyer_users = [
        buyer_prompt + "\n\nRound 1, rounds left 3",
        # Empty seller message: no "Seller said" part.
        "Seller's offer: 2.5\nRound 2, rounds left 2",
        "Seller said: 2.2 is my best\nSeller's offer: 2.2\nRound 3, rounds left 1",
        "Seller said: ok\nSeller's offer: 2.1\nRound 4, rounds left 0",
    ]
    expected_seller = [
        m
        for u, mv in zip(seller_users, s)
        for m in ({"role": "user", "content": u}, {"role": "assistant", "content": _assistant(mv)})
    ]
    expected_buyer = [
        m
        for u, mv in zip(buyer_users, b)
        for m in ({"role": "user", "content": u}, {"role": "assistant", "content": _assistant(mv)})
    ]
    assert chat_messages(state.observation(Role.SELLER)) == expected_seller
    assert chat_messages(state.observation(Role.BUYER)) == expected_buyer


def test_simultaneous_chat_while_in_progress(rice):
    state, rounds = _simultaneous_game(rice)
    state.apply_actions(rounds[0])
    seller = chat_messages(state.observation(Role.SELLER))
    assert [m["role"] for m in seller] == ["user", "assistant", "user"]
    # The seller's round-1 message was built before the buyer's round-1 move: it does not reflect it.
    assert seller[0]["content"] == system_prompt(state.observation(Role.SELLER)) + "\n\nRound 1, rounds left 3"
    assert "Buyer" not in seller[0]["content"].split("```")[-1]
    assert seller[1]["content"] == render_reply("S-THOUGHT-1", "", Action.OFFER, 2.5)
    assert seller[2]["content"] == "Buyer said: How about 1.5?\nBuyer's offer: 1.5\nRound 2, rounds left 2"

    state.apply_actions(rounds[1])
    seller = chat_messages(state.observation(Role.SELLER))
    # Round 2's user message still only reflects round 1, although the buyer's round-2 move came first.
    assert seller[2]["content"] == "Buyer said: How about 1.5?\nBuyer's offer: 1.5\nRound 2, rounds left 2"
    assert "Let me think" not in seller[2]["content"]
    assert seller[3]["content"] == "S-RAW-2"  # raw reply kept verbatim
    assert seller[4]["content"] == "Buyer said: Let me think\nBuyer's offer: 1.5\nRound 3, rounds left 1"
    buyer = chat_messages(state.observation(Role.BUYER))
    assert buyer[1]["content"] == B_RAW_1
    assert buyer[3]["content"] == "B-RAW-2 garbled"
    assert "2.2 is my best" not in buyer[2]["content"]


def test_empty_raw_reply_is_kept_verbatim(rice):
    # A model that answered nothing: its (empty) raw reply is its assistant message, not a rendering.
    state = new_initial_state(make_trial(rice, max_rounds=4))
    empty = parse_reply("")
    assert empty.raw == ""
    state.apply_actions({Role.BUYER: empty, Role.SELLER: Move(Action.OFFER, 2.5, "hi")})
    buyer = chat_messages(state.observation(Role.BUYER))
    assert buyer[1] == {"role": "assistant", "content": ""}
    assert chat_messages(state.observation(Role.SELLER))[-1]["content"] == "Round 2, rounds left 2"


def test_roles_alternate_user_assistant(rice):
    state, rounds = _simultaneous_game(rice)
    for k, moves in enumerate(rounds):
        for role in (Role.BUYER, Role.SELLER):
            msgs = chat_messages(state.observation(role))
            assert [m["role"] for m in msgs] == ["user", "assistant"] * k + ["user"]
            assert set().union(*(m.keys() for m in msgs)) == {"role", "content"}
        state.apply_actions(moves)
    for role in (Role.BUYER, Role.SELLER):
        assert [m["role"] for m in chat_messages(state.observation(role))] == ["user", "assistant"] * 4


def test_offer_from_an_earlier_round_survives_later_passes(rice):
    state = new_initial_state(make_trial(rice, max_rounds=5))
    state.apply_actions({Role.BUYER: Move(Action.OFFER, 1.75), Role.SELLER: Move(Action.OFFER, 2.0)})
    state.apply_actions({Role.BUYER: Move(Action.INVALID), Role.SELLER: Move(Action.OFFER, 2.0)})
    state.apply_actions({Role.BUYER: Move(Action.INVALID, message="hmm"), Role.SELLER: Move(Action.OFFER, 2.0)})
    last = chat_messages(state.observation(Role.SELLER))[-1]["content"]
    assert last == "Buyer said: hmm\nBuyer's offer: 1.75\nRound 4, rounds left 1"


def test_zero_offer_is_omitted_but_a_later_nonzero_one_is_shown(rice):
    state = new_initial_state(make_trial(rice, max_rounds=4))
    state.apply_actions({Role.BUYER: Move(Action.OFFER, 0, "zero"), Role.SELLER: Move(Action.OFFER, 2.0)})
    assert chat_messages(state.observation(Role.SELLER))[-1]["content"] == "Buyer said: zero\nRound 2, rounds left 2"
    state.apply_actions({Role.BUYER: Move(Action.OFFER, 1, ""), Role.SELLER: Move(Action.OFFER, 2.0)})
    assert chat_messages(state.observation(Role.SELLER))[-1]["content"] == "Buyer's offer: 1\nRound 3, rounds left 1"


def test_sequential_chat_histories(rice):
    trial = make_trial(rice, Condition.SELLER_UNAWARE, mode=Mode.SEQUENTIAL, max_rounds=4, first_actor=Role.BUYER)
    state = new_initial_state(trial)
    buyer_prompt = system_prompt(state.observation(Role.BUYER))
    seller_prompt = system_prompt(state.observation(Role.SELLER))
    assert SEQUENTIAL_ACTION_LINE in buyer_prompt.splitlines()
    # Not the seller's turn: an empty chat.
    assert chat_messages(state.observation(Role.SELLER)) == []

    b1 = Move(Action.OFFER, 1.6, "1.6?", "BT1-secret")
    state.apply_action(b1, Role.BUYER)
    # The buyer is not to move: its chat ends with its own reply.
    assert chat_messages(state.observation(Role.BUYER)) == [
        {"role": "user", "content": buyer_prompt + "\n\nRound 1, rounds left 3"},
        {"role": "assistant", "content": render_reply("BT1-secret", "1.6?", Action.OFFER, 1.6)},
    ]
    # The second actor's first message (round 2) reflects the first actor's round-1 move.
    seller_first = seller_prompt + "\n\nBuyer said: 1.6?\nBuyer's offer: 1.6\nRound 2, rounds left 2"
    assert chat_messages(state.observation(Role.SELLER)) == [{"role": "user", "content": seller_first}]

    s2 = Move(Action.OFFER, 2.4, "2.4", "ST2-secret", raw="ST2-secret raw reply")
    state.apply_action(s2, Role.SELLER)
    b3 = Move(Action.OFFER, 2.0, "", "BT3-secret")
    state.apply_action(b3, Role.BUYER)
    s4 = Move(Action.DEAL, None, "Deal.", "ST4-secret")
    state.apply_action(s4, Role.SELLER)
    assert state.is_terminal() and state.deal_price == 2.0

    assert chat_messages(state.observation(Role.BUYER)) == [
        {"role": "user", "content": buyer_prompt + "\n\nRound 1, rounds left 3"},
        {"role": "assistant", "content": render_reply("BT1-secret", "1.6?", Action.OFFER, 1.6)},
        {"role": "user", "content": "Seller said: 2.4\nSeller's offer: 2.4\nRound 3, rounds left 1"},
        {"role": "assistant", "content": render_reply("BT3-secret", "", Action.OFFER, 2.0)},
    ]
    assert chat_messages(state.observation(Role.SELLER)) == [
        {"role": "user", "content": seller_first},
        {"role": "assistant", "content": "ST2-secret raw reply"},
        # Empty buyer message in round 3: only the offer.
        {"role": "user", "content": "Buyer's offer: 2.0\nRound 4, rounds left 0"},
        {"role": "assistant", "content": render_reply("ST4-secret", "Deal.", Action.DEAL, None)},
    ]
    for role in (Role.BUYER, Role.SELLER):
        text = "".join(m["content"] for m in chat_messages(state.observation(role)))
        other = "ST" if role is Role.BUYER else "BT"
        assert other not in text


def test_sequential_seller_first(rice):
    trial = make_trial(rice, Condition.FULL, mode=Mode.SEQUENTIAL, max_rounds=3, first_actor=Role.SELLER)
    state = new_initial_state(trial)
    assert chat_messages(state.observation(Role.BUYER)) == []
    seller = chat_messages(state.observation(Role.SELLER))
    assert seller == [
        {"role": "user", "content": system_prompt(state.observation(Role.SELLER)) + "\n\nRound 1, rounds left 2"}
    ]
    state.apply_action(Move(Action.OFFER, 2.9, "Fresh rice, 2.9."), Role.SELLER)
    buyer = chat_messages(state.observation(Role.BUYER))
    assert buyer == [
        {
            "role": "user",
            "content": system_prompt(state.observation(Role.BUYER))
            + "\n\nSeller said: Fresh rice, 2.9.\nSeller's offer: 2.9\nRound 2, rounds left 1",
        }
    ]


def test_tactic_move_is_rendered_and_parses_back(rice):
    state = new_initial_state(make_trial(rice, Condition.BUYER_UNAWARE, max_rounds=4))
    tactic = Hardliner()
    moves = {role: asyncio.run(tactic.act(state.observation(role))) for role in (Role.BUYER, Role.SELLER)}
    assert all(m.raw is None and m.action is Action.OFFER for m in moves.values())
    state.apply_actions(moves)
    for role, move in moves.items():
        chat = chat_messages(state.observation(role))
        reply = chat[1]["content"]
        assert chat[1]["role"] == "assistant"
        assert reply == render_reply(move.thought, move.message, move.action, move.price)
        parsed = parse_reply(reply, Parsing.STRICT)
        assert (parsed.action, parsed.price, parsed.message, parsed.thought) == (
            move.action,
            move.price,
            move.message,
            move.thought,
        )
        assert parsed.error is None


@pytest.mark.parametrize("action,price", [(Action.OFFER, 2.25), (Action.NO_DEAL, None), (Action.DEAL, None)])
def test_rendered_replies_without_raw_parse_back(rice, action, price):
    state = new_initial_state(make_trial(rice, Condition.FULL, mode=Mode.SEQUENTIAL, max_rounds=4))
    state.apply_action(Move(Action.OFFER, 2.0, "two?"), Role.BUYER)
    move = Move(action, price, 'Quote "this" {and} that', "My private plan.")
    state.apply_action(move, Role.SELLER)
    reply = chat_messages(state.observation(Role.SELLER))[1]["content"]
    parsed = parse_reply(reply)
    assert (parsed.action, parsed.price, parsed.message, parsed.thought) == (action, price, move.message, move.thought)


@pytest.mark.parametrize("condition", list(Condition))
@pytest.mark.parametrize("mode", list(Mode))
def test_opponent_thought_and_raw_never_reach_an_agent(rice, condition, mode):
    trial = make_trial(rice, condition, mode=mode, max_rounds=4)
    state = new_initial_state(trial)
    for r in range(1, 5):
        moves = {
            role: Move(
                Action.OFFER,
                (1.3 if role is Role.BUYER else 2.9) + (r / 100 if role is Role.BUYER else -r / 100),
                message=f"{role.title} msg {r}",
                thought=f"{role.value.upper()}-PRIVATE-{r}",
                raw=(f"{role.value.upper()}-RAWREPLY-{r}" if r % 2 else None),
            )
            for role in (Role.BUYER, Role.SELLER)
        }
        if mode is Mode.SIMULTANEOUS:
            state.apply_actions(moves)
        else:
            (actor,) = state.current_players()
            state.apply_action(moves[actor], actor)
        for role in (Role.BUYER, Role.SELLER):
            text = "\n".join(m["content"] for m in chat_messages(state.observation(role)))
            other = role.other.value.upper()
            assert f"{other}-PRIVATE" not in text
            assert f"{other}-RAWREPLY" not in text
            # Nor anywhere in what the side is shown (the observation the prompts are built from).
            view = repr(state.observation(role))
            assert f"{other}-PRIVATE" not in view and f"{other}-RAWREPLY" not in view
    assert state.is_terminal()
    # The opponent's messages are relayed, so the chats are not trivially empty.
    text = "\n".join(m["content"] for m in chat_messages(state.observation(Role.SELLER)))
    assert "Buyer said: Buyer msg" in text
    # And a side does see its own thought (through its raw or rendered reply).
    assert "SELLER-PRIVATE" in text or "SELLER-RAWREPLY" in text
