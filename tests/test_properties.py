"""Property tests over random legal play in both modes and every condition (hypothesis)."""

import json
import math
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from bargain.engine import scenarios
from bargain.engine.game import Action, GameState, Move, new_initial_state, replay
from bargain.engine.trial import Condition, Mode, Role, Trial

SCENARIOS = scenarios.bundled().slice("low", 0, 50)
prices = st.floats(min_value=0.01, max_value=10.0, allow_nan=False, allow_infinity=False).map(lambda p: round(p, 2))
moves = st.one_of(
    st.builds(lambda p, m: Move(Action.OFFER, price=p, message=m), prices, st.text(max_size=20)),
    st.builds(
        lambda a, m: Move(a, message=m),
        st.sampled_from([Action.DEAL, Action.NO_DEAL, Action.INVALID]),
        st.text(max_size=20),
    ),
)


@st.composite
def trials(draw):
    scenario = draw(st.sampled_from(SCENARIOS))
    buyer = round(draw(st.floats(*scenario.buyer_range)), 2)
    seller = round(draw(st.floats(*scenario.seller_range)), 2)
    return Trial(
        trial_id=1,
        scenario=scenario,
        condition=draw(st.sampled_from(list(Condition))),
        buyer_price=buyer,
        seller_price=seller,
        max_rounds=draw(st.integers(1, 8)),
        mode=draw(st.sampled_from(list(Mode))),
        first_actor=draw(st.sampled_from(list(Role))),
    )


def play(data, trial: Trial, sanity_check: bool = False) -> GameState:
    state = new_initial_state(trial, sanity_check)
    while not state.is_terminal():
        players = state.current_players()
        chosen = {role: data.draw(moves) for role in players}
        if trial.mode is Mode.SIMULTANEOUS:
            state.apply_actions(chosen)
        else:
            state.apply_action(chosen[players[0]], players[0])
    return state


@settings(max_examples=300, deadline=None)
@given(trial=trials(), data=st.data(), sanity_check=st.booleans())
def test_outcomes_obey_the_rules(trial, data, sanity_check):
    state = play(data, trial, sanity_check)
    outcome = state.outcome()
    assert 1 <= outcome.rounds <= trial.max_rounds
    assert max(t.round for t in state.turns) <= trial.max_rounds
    if outcome.deal:
        assert math.isclose(
            outcome.buyer_utility + outcome.seller_utility, trial.buyer_price - trial.seller_price, abs_tol=1e-9
        )
        last_round = [t for t in state.turns if t.round == outcome.rounds]
        if trial.mode is Mode.SIMULTANEOUS:
            b = next(t.price for t in last_round if t.role is Role.BUYER)
            s = next(t.price for t in last_round if t.role is Role.SELLER)
            assert s <= outcome.deal_price <= b and outcome.deal_price == (b + s) / 2
        else:
            assert state.turns[-1].action is Action.DEAL
            assert outcome.deal_price == state.last_offer(state.turns[-1].role.other)
        if trial.buyer_price > trial.seller_price:
            assert math.isclose(outcome.buyer_norm_utility + outcome.seller_norm_utility, 1.0)
    else:
        assert outcome.buyer_utility == outcome.seller_utility == 0.0
        assert outcome.buyer_norm_utility == outcome.seller_norm_utility == 0.0
        assert outcome.rounds == trial.max_rounds
    if sanity_check:
        for turn in state.turns:
            if turn.action is Action.OFFER:
                assert trial.seller_price / 5 <= turn.price <= 5 * trial.buyer_price and turn.price > 0


@settings(max_examples=200, deadline=None)
@given(trial=trials(), data=st.data(), sanity_check=st.booleans())
def test_replaying_the_move_log_rebuilds_the_same_state(trial, data, sanity_check):
    state = play(data, trial, sanity_check)
    assert replay(trial, list(state.turns), sanity_check) == state
    rebuilt = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert rebuilt == state
    for role in Role:
        assert rebuilt.observation(role) == state.observation(role)


@settings(max_examples=200, deadline=None)
@given(trial=trials(), data=st.data(), shift=st.floats(0.01, 5.0))
def test_the_uninformed_side_never_sees_the_hidden_price(trial, data, shift):
    state = play(data, trial)
    for role in Role:
        if trial.condition.knows_other_price(role):
            continue
        hidden = "seller_price" if role is Role.BUYER else "buyer_price"
        twin = replace(trial, **{hidden: round(getattr(trial, hidden) + shift, 2)})
        step = 1 if trial.mode is Mode.SEQUENTIAL else 2
        for n in range(0, len(state.turns) + 1, step):
            view = replay(trial, state.turns[:n]).observation(role)
            assert view.other_price is None
            assert view == replay(twin, state.turns[:n]).observation(role)
