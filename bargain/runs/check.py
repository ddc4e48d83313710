"""`check_game()`: one call that exercises the engine's whole contract (run in CI).

In the spirit of OpenSpiel's `random_sim_test` and Gymnasium's `check_env`: random play to
the end in both modes and every condition, then the invariants every caller relies on. Each
failure names the likely cause. It lives beside the rules rather than inside them because it
plays random moves, which the rules never do.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace

from bargain.agents.tactics import random_move
from bargain.engine import scenarios
from bargain.engine.game import Action, GameState, Move, Observation, Turn, new_initial_state, replay
from bargain.engine.trial import ROLES, Condition, Mode, Role, Trial


class CheckFailed(AssertionError):
    """The engine broke one of its promises; the message says which and where to look."""


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise CheckFailed(message)


def play_random(trial: Trial, rng: random.Random, sanity_check: bool = False) -> GameState:
    """Play `trial` to the end with random moves for both sides."""
    state = new_initial_state(trial, sanity_check)
    while not state.is_terminal():
        players = state.current_players()
        moves = {role: random_move(rng, state.observation(role)) for role in players}
        if trial.mode is Mode.SIMULTANEOUS:
            state.apply_actions(moves)
        else:
            state.apply_action(moves[players[0]], players[0])
    return state


def _check_outcome(state: GameState) -> None:
    trial, outcome = state.trial, state.outcome()
    where = f"trial {trial.trial_id} ({trial.mode}, {trial.condition})"
    _require(
        1 <= outcome.rounds <= trial.max_rounds,
        f"{where}: rounds {outcome.rounds} outside 1..{trial.max_rounds}; check _next_round/_end",
    )
    returns = state.returns()
    _require(
        returns == {Role.BUYER: outcome.buyer_norm_utility, Role.SELLER: outcome.seller_norm_utility},
        f"{where}: returns() disagrees with outcome(); they must share one computation",
    )
    if not outcome.deal:
        _require(
            outcome.rounds == trial.max_rounds, f"{where}: a no-deal game must record max_rounds (docs/PROTOCOL.md §7)"
        )
        _require(outcome.buyer_utility == outcome.seller_utility == 0.0, f"{where}: no deal must give zero utilities")
        return
    _require(
        math.isclose(outcome.buyer_utility + outcome.seller_utility, trial.surplus, abs_tol=1e-9),
        f"{where}: on a deal u_B + u_S must equal v_B - v_S; check settle()",
    )
    if trial.surplus > 0:
        _require(math.isclose(sum(returns.values()), 1.0), f"{where}: normalised utilities of a deal must sum to 1")
    last = [t for t in state.turns if t.round == outcome.rounds]
    if trial.mode is Mode.SIMULTANEOUS:
        b, s = (next(t.price for t in last if t.role is r) for r in ROLES)
        _require(
            b is not None and s is not None and b >= s and outcome.deal_price == (b + s) / 2,
            f"{where}: a deal must be the midpoint of crossing offers",
        )
    else:
        accepter = state.turns[-1].role
        _require(
            state.turns[-1].action is Action.DEAL and outcome.deal_price == state.last_offer(accepter.other),
            f"{where}: a sequential deal must be the accepted standing offer",
        )


def _check_replay(state: GameState) -> None:
    where = f"trial {state.trial.trial_id}"
    _require(
        GameState.from_dict(json.loads(json.dumps(state.to_dict()))) == state,
        f"{where}: replaying the JSON move log did not rebuild an equal state; check to_dict/from_dict",
    )


def _hidden(trial: Trial) -> list[tuple[Role, Trial]]:
    """For each side not told the other's price: a twin trial differing only in that price."""
    twins = []
    for role in ROLES:
        if not trial.condition.knows_other_price(role):
            other = role.other
            twins.append(
                (
                    role,
                    replace(trial, buyer_price=trial.buyer_price + 0.37)
                    if other is Role.BUYER
                    else replace(trial, seller_price=trial.seller_price + 0.37),
                )
            )
    return twins


def _check_hidden(state: GameState) -> None:
    """Non-interference: an uninformed side's view must not change when the hidden price does."""
    for role, twin in _hidden(state.trial):
        _require(
            _views(state.trial, state.turns, role) == _views(twin, state.turns, role),
            f"trial {state.trial.trial_id}: the {role}'s observation depends on the {role.other}'s "
            f"hidden price ({state.trial.condition}); check observation()",
        )


def _views(trial: Trial, turns: list[Turn], role: Role) -> list[Observation]:
    """The observations of `role` at the start and after every completed move or round."""
    step = 1 if trial.mode is Mode.SEQUENTIAL else 2
    return [replay(trial, turns[:n]).observation(role) for n in range(0, len(turns) + 1, step)]


def check_game(games: int = 200, seed: int = 0) -> None:
    """Run every check on `games` random games per mode; raise CheckFailed on the first broken one."""
    source = scenarios.bundled()
    spec = scenarios.GridSpec(tier="low", start=0, stop=20, trials_per_cell=2, max_rounds=4)
    first = scenarios.make_trials(spec, source, seed)
    _require(
        first == scenarios.make_trials(spec, source, seed),
        "the same seed gave different trials; make_trials must draw from its own random.Random(seed)",
    )
    rng = random.Random(seed)
    for mode in Mode:
        for i in range(games):
            trial = replace(
                rng.choice(first),
                mode=mode,
                trial_id=i + 1,
                max_rounds=rng.randint(1, 6),
                condition=rng.choice(tuple(Condition)),
                first_actor=rng.choice(ROLES),
            )
            state = play_random(trial, rng)
            _check_outcome(state)
            _check_replay(state)
            _check_hidden(state)
            _check_closed(state)


def _check_closed(state: GameState) -> None:
    try:
        if state.trial.mode is Mode.SIMULTANEOUS:
            state.apply_actions({r: Move(Action.NO_DEAL) for r in ROLES})
        else:
            state.apply_action(Move(Action.NO_DEAL))
    except ValueError:
        return
    raise CheckFailed(f"trial {state.trial.trial_id}: a move after the end was accepted; check _check_open")
