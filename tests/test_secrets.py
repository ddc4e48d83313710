"""What a person is sent keeps the other side's reservation price hidden until they may know it: in free play
until the game ends, in a study until the debrief page. The property: two games that differ only in the hidden
price, played with the same moves, send the person exactly the same payloads; so no field equals it, and no field
combined with what the person knows (their price, the ranges, the transcript) determines it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bargain.arena.views import person_view
from bargain.engine.game import Action, Move, new_initial_state
from bargain.engine.scenarios import bundled
from bargain.engine.trial import Condition, Mode, Role, Trial
from bargain.study.flow import blind

HIDDEN = [c for c in Condition if c is not Condition.FULL]


@st.composite
def games(draw):
    """A trial whose person does not know the other side's price, that trial again with another hidden price, and
    the moves both sides make (the same in both)."""
    scenario = draw(st.sampled_from(bundled().tier("low")[:50]))
    person = draw(st.sampled_from(list(Role)))
    condition = draw(st.sampled_from([c for c in HIDDEN if not c.knows_other_price(person)]))
    mode, rounds = draw(st.sampled_from(list(Mode))), draw(st.integers(1, 4))
    prices = {role: st.floats(*scenario.price_range(role)).map(lambda v: round(v, 2)) for role in Role}
    mine, theirs, other = draw(prices[person]), draw(prices[person.other]), draw(prices[person.other])
    opener = draw(st.sampled_from(list(Role)))
    trials = [
        Trial(
            1,
            scenario,
            condition,
            *((mine, hidden) if person is Role.BUYER else (hidden, mine)),
            rounds,
            mode,
            first_actor=opener,
        )
        for hidden in (theirs, other)
    ]
    low = min(min(scenario.price_range(r)) for r in Role)
    high = max(max(scenario.price_range(r)) for r in Role)
    moves = st.one_of(
        st.floats(low, high).map(lambda p: Move(Action.OFFER, round(p, 2), "my offer")),
        st.just(Move(Action.DEAL)),
        st.just(Move(Action.NO_DEAL)),
        st.just(Move(Action.INVALID, error="timeout")),
    )
    return person, trials, draw(st.lists(moves, min_size=2 * rounds, max_size=2 * rounds))


def payloads(person: Role, trial: Trial, moves: list[Move]) -> list[tuple[dict, dict]]:
    """(free play's view, a study participant's view) at every point of the game: while it runs and at its end."""
    state = new_initial_state(trial)
    shown = []
    for move in moves:
        obs = state.observation(person)
        ended = state if state.is_terminal() else None
        view = person_view("g" * 32, obs, ended, person in state.current_players(), None)
        shown.append((view, blind(view)))
        if ended is not None:
            break
        (actor,) = state.current_players() if trial.mode is Mode.SEQUENTIAL else (None,)
        if actor is None:
            legal = {role: move if move.action in state.legal_actions(role) else Move(Action.NO_DEAL) for role in Role}
            state.apply_actions(legal)
        else:
            state.apply_action(move if move.action in state.legal_actions(actor) else Move(Action.NO_DEAL), actor)
    return shown


@settings(max_examples=300, deadline=None)
@given(game=games())
def test_nothing_sent_before_it_may_be_known_depends_on_the_hidden_price(game):
    person, trials, moves = game
    first, second = payloads(person, trials[0], moves), payloads(person, trials[1], moves)
    assert len(first) == len(second)
    for (free, study), (free_other, study_other) in zip(first, second):
        assert study == study_other  # a study participant: nothing until the debrief page, the end included
        if free.status == "active":
            assert free == free_other  # free play: nothing until the game has ended
