"""The rules of docs/PROTOCOL.md §7 on hand-made games, and the engine's error messages."""

import json
import math
from dataclasses import replace

import pytest

from bargain.engine.game import (
    Action,
    GameError,
    GameOverError,
    GameState,
    Move,
    OutOfTurnError,
    new_initial_state,
    replay,
)
from bargain.engine.trial import Condition, Mode, Role, Trial, TrialError
from bargain.runs.check import check_game

B, S = Role.BUYER, Role.SELLER


def offer(price, message=""):
    return Move(Action.OFFER, price=price, message=message)


@pytest.fixture
def trial(scenario_set):
    """low:0 (rice; buyer range [2.1, 3.0], seller range [1.2, 2.1]) with the paper's first prices."""
    return Trial(
        trial_id=1,
        scenario=scenario_set.get("low:0"),
        condition=Condition.FULL,
        buyer_price=2.68,
        seller_price=1.22,
        max_rounds=4,
    )


def sequential(trial, first=B):
    return new_initial_state(replace(trial, mode=Mode.SEQUENTIAL, first_actor=first))


def test_crossing_offers_close_at_the_midpoint(trial):
    state = new_initial_state(trial)
    state.apply_actions({B: offer(1.5), S: offer(2.5)})
    assert not state.is_terminal() and state.round == 2
    state.apply_actions({B: offer(2.0), S: offer(1.8)})
    outcome = state.outcome()
    assert outcome.deal and outcome.deal_price == pytest.approx(1.9) and outcome.rounds == 2
    assert outcome.buyer_utility == pytest.approx(2.68 - 1.9)
    assert outcome.seller_utility == pytest.approx(1.9 - 1.22)
    assert state.returns()[B] + state.returns()[S] == pytest.approx(1.0)


def test_equal_offers_are_a_deal(trial):
    state = new_initial_state(trial)
    state.apply_actions({B: offer(2), S: offer(2)})
    assert state.outcome().deal_price == 2


def test_no_deal_ends_the_game_and_records_max_rounds(trial):
    state = new_initial_state(trial)
    state.apply_actions({B: offer(1.5), S: Move(Action.NO_DEAL, message="bye")})
    outcome = state.outcome()
    assert state.is_terminal() and not outcome.deal and outcome.rounds == 4
    assert outcome.buyer_utility == outcome.seller_utility == 0.0
    assert math.isnan(outcome.nbs_deviation)


def test_crossing_offers_beat_a_no_deal_in_the_same_round_only_if_both_offer(trial):
    state = new_initial_state(trial)
    state.apply_actions({B: offer(3.0), S: Move(Action.NO_DEAL)})
    assert not state.outcome().deal


def test_deal_and_invalid_are_passes_in_simultaneous_mode(trial):
    state = new_initial_state(trial)
    state.apply_actions({B: Move(Action.DEAL), S: Move(Action.INVALID, message="?")})
    assert not state.is_terminal() and state.round == 2
    assert state.observation(B).history[-1].message == "?"


def test_rounds_run_out(trial):
    state = new_initial_state(trial)
    for _ in range(4):
        state.apply_actions({B: offer(1.0), S: offer(3.0)})
    assert state.is_terminal() and state.outcome().rounds == 4 and not state.outcome().deal


def test_sequential_turns_alternate_from_the_first_actor(trial):
    state = sequential(trial, first=S)
    assert state.current_players() == (S,)
    state.apply_action(offer(2.5), S)
    assert state.current_players() == (B,) and state.round == 2
    with pytest.raises(OutOfTurnError, match="buyer's turn"):
        state.apply_action(offer(2.4), S)


def test_sequential_deal_accepts_the_standing_offer(trial):
    state = sequential(trial)
    state.apply_action(offer(1.6))
    state.apply_action(offer(2.4))
    state.apply_action(Move(Action.INVALID))
    state.apply_action(Move(Action.DEAL))  # the seller takes the buyer's last valid offer
    outcome = state.outcome()
    assert outcome.deal and outcome.deal_price == 1.6 and outcome.rounds == 4


def test_sequential_deal_without_an_offer_is_no_deal(trial):
    state = sequential(trial)
    state.apply_action(Move(Action.DEAL))
    assert state.is_terminal() and not state.outcome().deal and state.outcome().rounds == 4


def test_sequential_crossing_offers_do_not_close(trial):
    state = sequential(trial)
    state.apply_action(offer(2.5))
    state.apply_action(offer(1.5))
    assert not state.is_terminal()


def test_legal_actions_follow_the_mode(trial):
    assert new_initial_state(trial).legal_actions(B) == (Action.OFFER, Action.NO_DEAL)
    state = sequential(trial)
    assert state.legal_actions(B) == (Action.OFFER, Action.DEAL, Action.NO_DEAL)
    assert state.legal_actions(S) == ()


def test_moves_after_the_end_are_refused(trial):
    state = new_initial_state(trial)
    state.apply_actions({B: offer(2), S: offer(2)})
    with pytest.raises(GameOverError, match="ended in round 1"):
        state.apply_actions({B: offer(2), S: offer(2)})
    assert state.current_players() == () and state.legal_actions(B) == ()


def test_wrong_mode_calls_are_refused(trial):
    with pytest.raises(OutOfTurnError, match="apply_actions"):
        new_initial_state(trial).apply_action(offer(2))
    with pytest.raises(OutOfTurnError, match="one move at a time"):
        sequential(trial).apply_actions({B: offer(2), S: offer(2)})
    with pytest.raises(OutOfTurnError, match="both sides"):
        new_initial_state(trial).apply_actions({B: offer(2)})


@pytest.mark.parametrize("price", [math.nan, math.inf, -math.inf, None, "2.5", True, 10**400])
def test_an_offer_needs_a_finite_number(price):
    with pytest.raises(GameError, match="finite number"):
        Move(Action.OFFER, price=price)


def test_only_offers_carry_prices():
    with pytest.raises(GameError, match="only an OFFER"):
        Move(Action.DEAL, price=2.0)


def test_outcome_is_undefined_before_the_end(trial):
    with pytest.raises(GameError, match="not ended"):
        new_initial_state(trial).outcome()


def test_sanity_check_turns_implausible_offers_into_passes(trial):
    state = new_initial_state(trial, sanity_check=True)
    # bounds: [v_S / 5, 5 v_B] = [0.244, 13.4]
    state.apply_actions({B: offer(0.2, "cheap"), S: offer(13.5)})
    buyer, seller = state.turns
    assert buyer.action is Action.INVALID and buyer.price is None and "sanity" in buyer.error
    assert buyer.message == "cheap"
    assert seller.action is Action.INVALID
    state.apply_actions({B: offer(0.0), S: offer(13.4)})
    assert state.turns[2].action is Action.INVALID and state.turns[3].action is Action.OFFER
    assert new_initial_state(trial).apply_actions({B: offer(0.2), S: offer(13.5)}) is None  # off: accepted


def test_zero_surplus_never_divides_by_zero(trial):
    state = new_initial_state(replace(trial, buyer_price=1.5, seller_price=1.5))
    state.apply_actions({B: offer(1.5), S: offer(1.5)})
    assert state.returns() == {B: 0.0, S: 0.0}
    assert math.isnan(state.outcome().nbs_deviation_share)


def test_bad_trials_are_refused(trial):
    with pytest.raises(TrialError, match="finite"):
        replace(trial, buyer_price=math.nan)
    with pytest.raises(TrialError, match="max_rounds"):
        replace(trial, max_rounds=0)
    with pytest.raises(TrialError, match="condition"):
        replace(trial, condition="full")


@pytest.mark.parametrize("condition", list(Condition))
def test_observations_apply_the_condition(trial, condition):
    state = new_initial_state(replace(trial, condition=condition))
    for role in Role:
        obs = state.observation(role)
        assert obs.reservation_price == trial.reservation(role)
        knows = condition.knows_other_price(role)
        assert (obs.other_price == trial.reservation(role.other)) if knows else obs.other_price is None
        assert obs.other_prior == (None if knows else trial.scenario.price_range(role.other))
        other_knows = condition.knows_other_price(role.other)
        assert obs.prior_on_me == (None if other_knows else trial.scenario.price_range(role))


def test_the_opponents_thought_and_raw_reply_stay_private(trial):
    state = new_initial_state(trial)
    state.apply_actions(
        {
            B: Move(Action.OFFER, 1.5, "hi", thought="my secret plan", raw="RAW-B"),
            S: Move(Action.OFFER, 2.5, "hello", thought="seller plan", raw="RAW-S"),
        }
    )
    seen_by_seller = state.observation(S).history
    assert seen_by_seller[0].thought is None and seen_by_seller[0].raw is None
    assert seen_by_seller[1].thought == "seller plan" and seen_by_seller[1].raw == "RAW-S"
    assert "my secret plan" not in repr(state.observation(S))


def test_state_rebuilds_from_its_json_log(trial):
    state = sequential(trial)
    state.apply_action(Move(Action.OFFER, 1.6, "a", "t", raw="r"))
    state.apply_action(Move(Action.INVALID, message="oops", error="bad json"))
    rebuilt = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert rebuilt == state and rebuilt.observation(B) == state.observation(B)


def test_replay_refuses_a_broken_log(trial):
    state = new_initial_state(trial)
    state.apply_actions({B: offer(1), S: offer(3)})
    with pytest.raises(GameError, match="middle of round"):
        replay(trial, state.turns[:1])
    with pytest.raises(GameError, match="two buyer moves"):
        replay(trial, [state.turns[0], state.turns[0]])


def test_check_game_passes():
    check_game(games=100)
