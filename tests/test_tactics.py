"""Scripted tactics: what they offer, and that they act on their observation alone."""

import asyncio
from dataclasses import replace

import pytest

from bargain.agents.arms import ArmError
from bargain.agents.factory import make_agent
from bargain.agents.tactics import TACTICS, anchor
from bargain.engine.game import Action, Move, new_initial_state
from bargain.engine.trial import Condition, Mode, Role, Trial
from bargain.runs.episodes import play

B, S = Role.BUYER, Role.SELLER


@pytest.fixture
def trial(scenario_set):
    return Trial(
        trial_id=1,
        scenario=scenario_set.get("low:0"),
        condition=Condition.FULL,
        buyer_price=2.68,
        seller_price=1.22,
        max_rounds=5,
    )


class Fixed:
    """An opponent that plays the same offers whatever it is told."""

    def __init__(self, prices):
        self.prices = list(prices)

    async def act(self, obs):
        return Move(Action.OFFER, price=self.prices[obs.round - 1])


def act(agent, obs):
    return asyncio.run(agent.act(obs))


def offers_against(trial, spec, opponent_price, role=B):
    """The tactic's offers over a whole game against a stubborn opponent."""
    state, agent, made = new_initial_state(trial), make_agent(spec, 0), []
    while not state.is_terminal():
        move = act(agent, state.observation(role))
        made.append(move.price)
        state.apply_actions({role: move, role.other: Move(Action.OFFER, price=opponent_price)})
    return made


def test_informed_and_uninformed_anchors(trial):
    full = new_initial_state(trial)
    assert anchor(full.observation(B)) == 1.22 and anchor(full.observation(S)) == 2.68
    unaware = new_initial_state(replace(trial, condition=Condition.BOTH_UNAWARE))
    assert anchor(unaware.observation(B)) == 1.2 and anchor(unaware.observation(S)) == 3.0  # prior bounds


@pytest.mark.parametrize("spec", ["tactic:boulware", "tactic:linear", "tactic:conceder"])
def test_time_dependent_tactics_go_from_anchor_to_reservation(trial, spec):
    offers = offers_against(trial, spec, opponent_price=9.0)
    assert offers[0] == 1.22 and offers[-1] == 2.68
    assert offers == sorted(offers)


def test_concession_speed_orders_the_tactics(trial):
    mid = {name: offers_against(trial, f"tactic:{name}", 9.0)[2] for name in ("boulware", "linear", "conceder")}
    assert mid["boulware"] < mid["linear"] < mid["conceder"]
    assert mid["linear"] == round(1.22 + (2.68 - 1.22) * 0.5, 2)


def test_hardliner_never_moves(trial):
    assert set(offers_against(trial, "tactic:hardliner", 9.0)) == {1.22}
    assert set(offers_against(trial, "tactic:hardliner", 0.5, role=S)) == {2.68}


def test_tit_for_tat_mirrors_the_opponents_concession(trial):
    state, agent = new_initial_state(trial), make_agent("tactic:tit-for-tat", 0)
    seller_offers = [2.6, 2.4, 2.3]
    mine = []
    for price in seller_offers:
        move = act(agent, state.observation(B))
        mine.append(move.price)
        state.apply_actions({B: move, S: Move(Action.OFFER, price=price)})
    assert mine[0] == 1.22 and mine[1] == 1.22  # nothing to mirror yet
    assert mine[2] == pytest.approx(1.22 + 0.2)


def test_tactics_take_a_better_standing_offer(trial):
    simultaneous = new_initial_state(trial)
    simultaneous.apply_actions({B: Move(Action.OFFER, price=1.0), S: Move(Action.OFFER, price=1.5)})
    matched = act(make_agent("tactic:hardliner", 0), simultaneous.observation(S))
    assert matched.price == 2.68  # 1.0 is below the seller's limit: keep the anchor
    simultaneous.apply_actions({B: Move(Action.OFFER, price=2.9), S: Move(Action.OFFER, price=3.0)})
    assert act(make_agent("tactic:hardliner", 0), simultaneous.observation(S)).price == 2.9  # matches it
    seq = new_initial_state(replace(trial, mode=Mode.SEQUENTIAL, first_actor=S))
    seq.apply_action(Move(Action.OFFER, price=1.3))
    move = act(make_agent("tactic:hardliner", 0), seq.observation(B))
    assert move.action is Action.OFFER and move.price == 1.22  # 1.3 is worse than its anchor
    seq2 = new_initial_state(replace(trial, mode=Mode.SEQUENTIAL, first_actor=S))
    seq2.apply_action(Move(Action.OFFER, price=2.0))
    # the linear buyer's round-2 plan is 1.22 + 1.46 * 0.25 = 1.585 < 2.0: it counters
    counter = act(make_agent("tactic:linear", 0), seq2.observation(B))
    assert counter.action is Action.OFFER and counter.price == pytest.approx(1.585, abs=0.006)
    seq2.apply_action(counter)
    seq2.apply_action(Move(Action.OFFER, price=1.9))
    # its round-4 plan is 1.22 + 1.46 * 0.75 = 2.315 >= 1.9: it accepts
    assert act(make_agent("tactic:linear", 0), seq2.observation(B)).action is Action.DEAL


@pytest.mark.parametrize("name", sorted(TACTICS))
def test_tactics_only_use_their_observation(trial, name):
    """Changing the hidden price must not change an uninformed tactic's moves."""
    for condition in (Condition.BUYER_UNAWARE, Condition.BOTH_UNAWARE):
        games = []
        for seller_price in (1.22, 1.9):
            state = new_initial_state(replace(trial, condition=condition, seller_price=seller_price))
            asyncio.run(play(state, make_agent(f"tactic:{name}", 7), Fixed([2.9, 2.8, 2.75, 2.7, 2.5])))
            games.append([t for t in state.turns if t.role is B])
        assert games[0] == games[1]


def test_no_tactic_offers_beyond_its_reservation(trial):
    for name in ("boulware", "linear", "conceder", "hardliner", "tit-for-tat"):
        for role in Role:
            state = new_initial_state(replace(trial, condition=Condition.BOTH_UNAWARE))
            tactic, other = make_agent(f"tactic:{name}", 0), make_agent("tactic:random", 1)
            asyncio.run(play(state, *((tactic, other) if role is B else (other, tactic))))
            offers = [t.price for t in state.turns if t.role is role and t.action is Action.OFFER]
            assert offers and all((p <= 2.68) if role is B else (p >= 1.22) for p in offers)


def test_random_agent_is_reproducible(trial):
    runs = []
    for _ in range(2):
        state = new_initial_state(trial)
        asyncio.run(play(state, make_agent("tactic:random", 5), make_agent("tactic:random", 6)))
        runs.append(state.turns)
    assert runs[0] == runs[1]


@pytest.mark.parametrize("spec", ["boulware", "tactic:", "tactic:nope", "model:x"])
def test_bad_agent_specs(spec):
    with pytest.raises(ArmError):
        make_agent(spec, 0)
