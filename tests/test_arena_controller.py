"""The arena's game controller (bargain.arena.controller), driven with asyncio and no Gradio.

An Arena's games run as tasks on the event loop that started them, so every scenario below runs
whole inside one `asyncio.run`.
"""

import asyncio
import json
import math
import random
from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bargain.agents.backends import PRESETS, BackendError, Backends, Completion
from bargain.agents.backends.canned import CannedBackend, canned_reply
from bargain.agents.tactics import TACTICS
from bargain.arena.controller import ALREADY_PLAYED, Arena, ArenaError, Setup
from bargain.arena.inputs import MAX_MESSAGE, human_move, parse_price
from bargain.engine.game import Action, Move, Turn, replay
from bargain.engine.trial import Condition, Mode, Role, Trial
from bargain.records.store import GameRow, Store, utcnow

UNAWARE = {
    Role.BUYER: (Condition.BUYER_UNAWARE, Condition.BOTH_UNAWARE),
    Role.SELLER: (Condition.SELLER_UNAWARE, Condition.BOTH_UNAWARE),
}
TOLD = {Role.BUYER: (Condition.FULL, Condition.SELLER_UNAWARE), Role.SELLER: (Condition.FULL, Condition.BUYER_UNAWARE)}


def new_arena(tmp_path, backends=None, **options):
    return Arena(Store(f"sqlite:///{tmp_path / 'arena.db'}"), backends or Backends(), **options)


def stored_rows(store, game_id):
    """The stored moves in the order views show them: a simultaneous round's buyer first (the person's own move of
    such a round is stored as soon as it is made, before the agent's)."""
    game = store.game(game_id)
    moves = game["moves"]
    if game["mode"] == "simultaneous":
        moves = sorted(moves, key=lambda m: (m["round"], m["role"] != "buyer"))
    return [(m["round"], m["role"], m["actor"], m["action"], m["price"], m["message"]) for m in moves]


def transcript_rows(view):
    return [
        (t["round"], t["role"], "human" if t["speaker"] == "you" else "agent", t["action"], t["price"], t["message"])
        for t in view.transcript
    ]


def trial_of(store, game_id):
    return Trial.from_dict(store.game(game_id)["trial"])


def check_stored_so_far(store, view):
    """Everything the person has seen is already in the store, in order, and nothing else."""
    game = store.game(view.game_id)
    assert [m["seq"] for m in game["moves"]] == list(range(len(game["moves"])))
    assert stored_rows(store, view.game_id) == transcript_rows(view)


async def play_out(arena, view, choose, check=None):
    """Play the person's side with `choose(view) -> (action, price, message)` until the game ends."""
    views = [view]
    while view.status == "active":
        assert view.your_turn and view.error is None
        check_stored_so_far(arena.store, view)
        before = view.round
        action, price, message = choose(view)
        view = await arena.move(view.game_id, view.round, action, price, message)
        views.append(view)
        if view.status == "active":
            assert view.round > before
            if view.mode == "simultaneous":  # both moves of the round just played are stored
                rows = stored_rows(arena.store, view.game_id)
                assert len(rows) == 2 * (view.round - 1)
                assert [r[0] for r in rows[-2:]] == [view.round - 1] * 2
        if check is not None:
            check(view)
    return views


def check_finished(store, view, arm):
    """The final view, the stored game and a replay of its stored moves all agree."""
    game_id, role = view.game_id, Role(view.role)
    agent = role.other
    trial = trial_of(store, game_id)
    assert view.status == "finished" and not view.your_turn and view.actions == []
    outcome, debrief = view.outcome, view.debrief
    assert set(outcome) >= {
        "deal",
        "deal_price",
        "rounds",
        "your_utility",
        "agent_utility",
        "your_norm_utility",
        "agent_norm_utility",
        "nbs_price",
    }
    assert outcome["nbs_price"] == pytest.approx((trial.buyer_price + trial.seller_price) / 2)
    if outcome["deal"]:
        price = outcome["deal_price"]
        buyer_u, seller_u = trial.buyer_price - price, price - trial.seller_price
        assert outcome["your_utility" if role is Role.BUYER else "agent_utility"] == pytest.approx(buyer_u)
        assert outcome["your_utility" if role is Role.SELLER else "agent_utility"] == pytest.approx(seller_u)
        assert outcome["your_norm_utility"] == pytest.approx(outcome["your_utility"] / trial.surplus)
    else:
        assert outcome["deal_price"] is None and outcome["paper_rounds"] == trial.max_rounds
        assert outcome["rounds"] == view.transcript[-1]["round"]  # where it ended (a walk-away: early)
        assert outcome["your_utility"] == outcome["agent_utility"] == 0

    assert debrief["agent_role"] == agent.value
    assert debrief["agent_price"] == trial.reservation(agent)
    agent_turns = [t for t in view.transcript if t["speaker"] == "agent"]
    assert [(s["round"], s["action"], s["price"]) for s in debrief["strategy"]] == [
        (t["round"], t["action"], t["price"]) for t in agent_turns
    ]
    if arm.startswith("tactic:"):
        thought = TACTICS[arm.removeprefix("tactic:")](0).thought
        assert [s["thought"] for s in debrief["strategy"]] == [thought] * len(agent_turns)

    row = store.game(game_id)
    assert row["status"] == "finished" and row["finished_at"] is not None
    assert row["human_role"] == role.value and row["arm"] == arm and row["first_actor"] == "buyer"
    assert (row["buyer_price"], row["seller_price"]) == (trial.buyer_price, trial.seller_price)
    assert (row["deal"], row["deal_price"], row["rounds"], row["paper_rounds"]) == (
        outcome["deal"],
        outcome["deal_price"],
        outcome["rounds"],
        outcome["paper_rounds"],
    )
    ours = "buyer" if role is Role.BUYER else "seller"
    theirs = "seller" if ours == "buyer" else "buyer"
    assert (row[f"{ours}_utility"], row[f"{theirs}_utility"]) == (outcome["your_utility"], outcome["agent_utility"])
    assert (row[f"{ours}_norm_utility"], row[f"{theirs}_norm_utility"]) == (
        outcome["your_norm_utility"],
        outcome["agent_norm_utility"],
    )
    check_stored_so_far(store, view)
    assert all(m["thought"] == "" for m in row["moves"] if m["actor"] == "human")

    turns = [
        Turn(
            m["round"],
            Role(m["role"]),
            Action(m["action"]),
            m["price"],
            m["message"],
            m["thought"],
            m["raw"],
            m["error"],
        )
        for m in row["moves"]
    ]
    replayed = replay(trial, turns)
    assert replayed.is_terminal()
    again = replayed.outcome()
    assert (again.deal, again.deal_price, again.rounds) == (
        outcome["deal"],
        outcome["deal_price"],
        outcome["paper_rounds"],
    )
    assert (again.buyer_utility, again.seller_utility, again.buyer_norm_utility, again.seller_norm_utility) == (
        row["buyer_utility"],
        row["seller_utility"],
        row["buyer_norm_utility"],
        row["seller_norm_utility"],
    )
    assert again.true_nbs_price == outcome["nbs_price"]


# --- whole games against tactics -----------------------------------------------------------------


def firm(view):
    """Offer one's own reservation price every turn."""
    return "OFFER", view.your_price, f"round {view.round}: my best is {view.your_price}"


def accept_late(view):
    """Offer half (buyer) or twice (seller) one's price, then take the agent's last offer in round 3 or later."""
    if view.round >= 3:
        return "DEAL", None, "fine, deal"
    factor = 0.5 if view.role == "buyer" else 2
    return "OFFER", round(view.your_price * factor, 2), "opening"


def walk_away_late(view):
    if view.round >= 3:
        return "NO_DEAL", None, "I walk away"
    factor = 0.5 if view.role == "buyer" else 2
    return "OFFER", round(view.your_price * factor, 2), ""


GAMES = [
    # (mode, person's role, arm, person's play, expected deal)
    (Mode.SIMULTANEOUS, Role.BUYER, "tactic:linear", firm, True),
    (Mode.SIMULTANEOUS, Role.SELLER, "tactic:linear", firm, True),
    (Mode.SIMULTANEOUS, Role.BUYER, "tactic:hardliner", firm, None),
    (Mode.SIMULTANEOUS, Role.SELLER, "tactic:hardliner", walk_away_late, False),
    (Mode.SEQUENTIAL, Role.BUYER, "tactic:linear", accept_late, True),
    (Mode.SEQUENTIAL, Role.SELLER, "tactic:linear", accept_late, True),
    (Mode.SEQUENTIAL, Role.BUYER, "tactic:hardliner", walk_away_late, False),
    (Mode.SEQUENTIAL, Role.SELLER, "tactic:hardliner", firm, None),
]


@pytest.mark.parametrize(
    "mode, role, arm, choose, deal", GAMES, ids=[f"{m.value}-{r.value}-{a}-{c.__name__}" for m, r, a, c, _ in GAMES]
)
def test_a_whole_game_is_played_shown_and_stored(tmp_path, mode, role, arm, choose, deal):
    async def scenario():
        arena = new_arena(tmp_path)
        first = await arena.start(Setup(role=role, arm=arm, mode=mode, seed=11), player="p1")
        assert first.status == "active" and first.role == role.value and first.mode == mode.value
        assert first.outcome is None and first.debrief is None and first.your_turn
        row = arena.store.game(first.game_id)
        assert row["status"] == "active" and row["player"] == "p1" and row["seed"] == 11
        assert row["first_actor"] == "buyer" and row["sampling"] is None and row["backend"] is None
        assert row["out_of_distribution"] is False and row["ood_reasons"] == []
        if mode is Mode.SIMULTANEOUS:
            assert first.round == 1 and first.transcript == [] and first.actions == ["OFFER", "NO_DEAL"]
        elif role is Role.BUYER:  # the buyer moves first
            assert first.round == 1 and first.transcript == []
            assert first.actions == ["OFFER", "DEAL", "NO_DEAL"]
        else:  # the agent's opening move is already there, and stored
            assert first.round == 2 and [(t["round"], t["speaker"], t["role"]) for t in first.transcript] == [
                (1, "agent", "buyer")
            ]
        check_stored_so_far(arena.store, first)
        views = await play_out(arena, first, choose)
        final = views[-1]
        check_finished(arena.store, final, arm)
        if deal is not None:
            assert final.outcome["deal"] is deal
        # The finished game can be viewed again, as it was, from the store.
        assert await arena.view(final.game_id) == final
        return final

    asyncio.run(scenario())


def test_a_person_sees_every_stored_round_before_moving_again(tmp_path):
    async def scenario():
        arena = new_arena(tmp_path)
        view = await arena.start(Setup(role=Role.SELLER, arm="tactic:hardliner", seed=3))
        for round_ in range(1, 4):
            view = await arena.move(view.game_id, round_, "OFFER", str(round(view.your_price * 3, 2)))
            assert view.round == round_ + 1
            rows = stored_rows(arena.store, view.game_id)
            assert [(r[0], r[1], r[2]) for r in rows[-2:]] == [(round_, "buyer", "agent"), (round_, "seller", "human")]
            assert len(rows) == 2 * round_

    asyncio.run(scenario())


# --- what the person is (not) told -------------------------------------------------------------


def person_numbers(trial, role, offers):
    return [trial.reservation(role), *trial.scenario.price_range(role), *offers]


def leak_free_seed(arena, setup, offers):
    """The first seed whose hidden agent price string does not occur in public text by coincidence."""
    for seed in range(200):
        trial = arena.trial_for(setup, random.Random(seed))
        hidden = str(trial.reservation(setup.role.other))
        public = json.dumps(trial.scenario.to_dict()) + " ".join(
            str(x) for x in person_numbers(trial, setup.role, offers(trial.reservation(setup.role)))
        )
        if hidden not in public:
            return seed, trial
    raise AssertionError("no seed without a coincidence")


LEAK_CASES = [(mode, role, condition) for mode in Mode for role in Role for condition in UNAWARE[role]]


@pytest.mark.parametrize(
    "mode, role, condition", LEAK_CASES, ids=[f"{m.value}-{r.value}-{c.value}" for m, r, c in LEAK_CASES]
)
def test_the_agents_hidden_price_never_reaches_the_person(tmp_path, mode, role, condition):
    factor = 0.5 if role is Role.BUYER else 2.0  # far from any deal with a hardliner

    def offers(own):
        return [round(own * factor, 2)]

    async def scenario():
        arena = new_arena(tmp_path)
        setup = Setup(role=role, arm="tactic:hardliner", condition=condition, mode=mode)
        seed, trial = leak_free_seed(arena, setup, offers)
        hidden_value = trial.reservation(role.other)
        hidden = str(hidden_value)
        view = await arena.start(Setup(role=role, arm="tactic:hardliner", condition=condition, mode=mode, seed=seed))
        assert arena.store.game(view.game_id)["seed"] == seed
        assert view.your_price == trial.reservation(role)
        shown = [view]
        while view.status == "active":
            assert view.their_price is None
            assert view.their_price_prior == list(trial.scenario.price_range(role.other))
            assert view.debrief is None and view.outcome is None
            price = offers(view.your_price)[0]
            view = await arena.move(view.game_id, view.round, "OFFER", price, f"I offer {price}")
            shown.append(view)
        assert len(shown) >= 3
        for before_the_end in shown[:-1]:
            assert hidden not in json.dumps(before_the_end.to_json()), before_the_end
        # An agent price that never showed: the hardliner never offered it.
        assert all(t["price"] != hidden_value for v in shown for t in v.transcript)
        final = shown[-1]
        assert final.outcome["deal"] is False
        assert final.debrief["agent_price"] == hidden_value and hidden in json.dumps(final.debrief)

    asyncio.run(scenario())


TOLD_CASES = [(mode, role, condition) for mode in Mode for role in Role for condition in TOLD[role]]


@pytest.mark.parametrize(
    "mode, role, condition", TOLD_CASES, ids=[f"{m.value}-{r.value}-{c.value}" for m, r, c in TOLD_CASES]
)
def test_a_person_told_the_agents_price_sees_it(tmp_path, mode, role, condition):
    async def scenario():
        arena = new_arena(tmp_path)
        view = await arena.start(Setup(role=role, arm="tactic:hardliner", condition=condition, mode=mode, seed=5))
        trial = trial_of(arena.store, view.game_id)
        assert view.their_price == trial.reservation(role.other) and view.their_price_prior is None
        assert view.your_price == trial.reservation(role)
        agent_told = condition.knows_other_price(role.other)
        assert view.your_price_prior == (None if agent_told else list(trial.scenario.price_range(role)))

    asyncio.run(scenario())


# --- bad input changes nothing ---------------------------------------------------------------------


BAD_OFFERS = [
    ("", "enter a price"),
    (None, "enter a price"),
    ("abc", "not a price"),
    ("-1", "cannot be negative"),
    ("0", "at least 0.01"),
    ("nan", "not a price"),
    ("inf", "not a price"),
    ("1e12", "not a price"),
    ("2,5", "commas must separate groups of three"),
    ("1000000001", "absurdly large"),
    ("999999", "far more than anything in this game is worth"),
]


def test_bad_input_is_refused_and_changes_nothing(tmp_path):
    async def scenario():
        arena = new_arena(tmp_path)
        store = arena.store
        view = await arena.start(Setup(role=Role.BUYER, arm="tactic:linear", seed=2))
        game_id = view.game_id

        async def refused(match, *args, game=game_id):
            before_rows, before_view = stored_rows(store, game_id), await arena.view(game_id)
            with pytest.raises(ArenaError, match=match):
                await arena.move(game, *args)
            assert stored_rows(store, game_id) == before_rows
            assert await arena.view(game_id) == before_view
            assert store.game(game_id)["status"] == before_view.status

        for price, match in BAD_OFFERS:
            await refused(match, 1, "OFFER", price, "hi")
        await refused(f"limit is {MAX_MESSAGE}", 1, "OFFER", "2", "x" * (MAX_MESSAGE + 1))
        await refused("unknown action", 1, "HAGGLE", "2", "")
        await refused("OFFER, DEAL or NO_DEAL", 1, "INVALID", None, "")
        await refused("DEAL is not possible", 1, "DEAL", None, "")  # no DEAL in simultaneous mode
        await refused("round 2", 2, "OFFER", "2", "")  # a move for a round not yet reached
        await refused("no such game", 1, "OFFER", "2", "", game="0" * 32)
        await refused("no such game", 1, "OFFER", "2", "", game="")
        assert stored_rows(store, game_id) == []

        # Currency input is a price; the message at the limit is accepted.
        view = await arena.move(game_id, 1, "OFFER", "$2.50", "y" * MAX_MESSAGE)
        assert view.round == 2
        assert stored_rows(store, game_id)[0][3:] == ("OFFER", 2.5, "y" * MAX_MESSAGE)
        # Round 1 again (a double click, a resubmitted form): nothing stored, the game as stored with a notice.
        for args in ((1, "OFFER", "$2.50", ""), (1, "NO_DEAL", None, "")):
            again = await arena.move(game_id, *args)
            assert again == replace(await arena.view(game_id), notice=ALREADY_PLAYED) and again.round == 2
        assert len(stored_rows(store, game_id)) == 2

        high = round(view.your_price * 50, 2)  # far above any seller: a deal
        view = await arena.move(game_id, 2, "offer", f"{high:,.2f}", "")
        assert view.status == "finished" and view.outcome["deal"]
        assert stored_rows(store, game_id)[2][3:5] == ("OFFER", high)
        assert (await arena.move(game_id, 2, "OFFER", "3", "")).notice == ALREADY_PLAYED  # the last round, again
        await refused("over", 3, "NO_DEAL", None, "")
        await refused("the round must be a whole number; got None", None, "OFFER", "3", "")
        assert len(stored_rows(store, game_id)) == 4 and store.game(game_id)["status"] == "finished"

    asyncio.run(scenario())


def test_a_double_click_plays_the_move_once(tmp_path):
    async def scenario():
        arena = new_arena(tmp_path)
        view = await arena.start(Setup(role=Role.BUYER, arm="tactic:hardliner", seed=4))
        views = await asyncio.gather(*(arena.move(view.game_id, 1, "OFFER", "1.5", "once") for _ in range(2)))
        assert [v.round for v in views] == [2, 2]  # the second answers with the game as stored
        assert [v.notice for v in views] == [None, ALREADY_PLAYED]
        rows = stored_rows(arena.store, view.game_id)
        assert [(r[0], r[2], r[5]) for r in rows] == [(1, "human", "once"), (1, "agent", rows[1][5])]
        assert rows == transcript_rows(views[0])

    asyncio.run(scenario())


# --- resuming ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode, role", [(Mode.SIMULTANEOUS, Role.BUYER), (Mode.SEQUENTIAL, Role.SELLER), (Mode.SEQUENTIAL, Role.BUYER)]
)
def test_a_game_survives_a_reload_and_a_server_restart(tmp_path, mode, role):
    url = f"sqlite:///{tmp_path / 'arena.db'}"

    async def first_server():
        arena = Arena(Store(url), Backends())
        view = await arena.start(Setup(role=role, arm="tactic:linear", mode=mode, seed=8))
        view = await arena.move(
            view.game_id, view.round, "OFFER", view.your_price * (0.1 if role is Role.BUYER else 10), "first"
        )
        assert view.status == "active" and len(view.transcript) == 2 + (mode is Mode.SEQUENTIAL and role is Role.SELLER)
        assert await arena.view(view.game_id) == view  # a page reload
        assert await arena.view(view.game_id) == view
        return view

    before = asyncio.run(first_server())

    async def second_server():
        arena = Arena(Store(url), Backends())  # a new process: nothing in memory
        assert arena.live == {}
        view = await arena.view(before.game_id, wait_s=5)  # rebuilt, its loop run again: settled at once
        assert view == before
        views = await play_out(arena, view, firm)
        return views[-1]

    final = asyncio.run(second_server())
    store = Store(url)
    check_finished(store, final, "tactic:linear")
    rows = stored_rows(store, final.game_id)
    assert rows[: len(before.transcript)] == transcript_rows(before)
    assert [m["seq"] for m in store.game(final.game_id)["moves"]] == list(range(len(rows)))


def test_a_game_finished_before_a_restart_is_shown_finished_after_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'arena.db'}"

    async def play():
        arena = Arena(Store(url), Backends())
        view = await arena.start(Setup(role=Role.BUYER, arm="tactic:linear", seed=9))
        return (await play_out(arena, view, firm))[-1]

    final = asyncio.run(play())

    async def look():
        arena = Arena(Store(url), Backends())
        assert await arena.view(final.game_id) == final
        assert await arena.move(final.game_id, final.round, "OFFER", "1", "") == replace(final, notice=ALREADY_PLAYED)
        with pytest.raises(ArenaError, match="over"):
            await arena.move(final.game_id, final.round + 1, "OFFER", "1", "")

    asyncio.run(look())


# --- idle games -----------------------------------------------------------------------------------


def test_starting_a_game_abandons_games_idle_past_the_timeout(tmp_path):
    async def scenario():
        arena = new_arena(tmp_path, idle_timeout=timedelta(0))
        idle = await arena.start(Setup(seed=1))
        await arena.move(idle.game_id, 1, "OFFER", "1", "")
        assert arena.store.game(idle.game_id)["status"] == "active"
        other = await arena.start(Setup(seed=2))
        assert arena.store.game(idle.game_id)["status"] == "abandoned"
        assert idle.game_id not in arena.live
        assert arena.store.game(other.game_id)["status"] == "active"
        assert len(arena.store.game(idle.game_id)["moves"]) == 2

    asyncio.run(scenario())


def test_only_games_idle_longer_than_the_timeout_are_abandoned(tmp_path):
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    async def scenario():
        arena = new_arena(tmp_path, idle_timeout=timedelta(hours=2))
        old = await arena.start(Setup(seed=1))
        recent = await arena.start(Setup(seed=2))
        done = await arena.start(Setup(seed=3))
        await arena.move(done.game_id, 1, "NO_DEAL", None, "")
        with Session(arena.store.engine) as session, session.begin():
            session.execute(
                update(GameRow)
                .where(GameRow.id.in_([old.game_id, done.game_id]))
                .values(updated_at=utcnow() - timedelta(hours=3))
            )
        await arena.start(Setup(seed=4))
        status = {
            name: arena.store.game(v.game_id)["status"]
            for name, v in (("old", old), ("recent", recent), ("done", done))
        }
        assert status == {"old": "abandoned", "recent": "active", "done": "finished"}
        assert old.game_id not in arena.live and recent.game_id in arena.live

    asyncio.run(scenario())


def test_an_abandoned_game_is_not_shown_as_active(tmp_path):
    async def scenario():
        arena = new_arena(tmp_path, idle_timeout=timedelta(0))
        idle = await arena.start(Setup(seed=1))
        await arena.start(Setup(seed=2))
        assert arena.store.game(idle.game_id)["status"] == "abandoned"
        assert (await arena.view(idle.game_id)).status != "active"

    asyncio.run(scenario())


# --- concurrency ----------------------------------------------------------------------------------


def test_interleaved_games_never_see_each_other(tmp_path):
    async def scenario():
        arena = new_arena(tmp_path)
        log = []

        async def player(tag, setup):
            view = await arena.start(setup, player=tag)
            item, price = view.item, view.your_price
            views = [view]
            while view.status == "active":
                log.append((tag, view.round))
                await asyncio.sleep(0)
                offer = round(view.your_price * (0.6 if view.role == "buyer" else 1.8), 2)
                view = await arena.move(view.game_id, view.round, "OFFER", offer, f"{tag}-{view.round}")
                views.append(view)
                assert (view.item, view.your_price) == (item, price)
                await asyncio.sleep(0)
            return views

        a, b = await asyncio.gather(
            player("A", Setup(role=Role.BUYER, arm="tactic:linear", seed=21)),
            player("B", Setup(role=Role.SELLER, arm="tactic:hardliner", seed=22, rounds=5)),
        )
        tags = [t for t, _ in log]
        assert sum(x != y for x, y in zip(tags, tags[1:])) >= 2  # really interleaved, not one game then the other
        final_a, final_b = a[-1], b[-1]
        assert final_a.game_id != final_b.game_id
        assert (final_a.item, final_a.your_price) != (final_b.item, final_b.your_price)
        for tag, views in (("A", a), ("B", b)):
            for view in views:
                mine = [t["message"] for t in view.transcript if t["speaker"] == "you"]
                assert mine == [f"{tag}-{r}" for r in range(1, len(mine) + 1)]
                assert all(
                    not t["message"].startswith(("A-", "B-")) for t in view.transcript if t["speaker"] == "agent"
                )
            check_finished(arena.store, views[-1], "tactic:linear" if tag == "A" else "tactic:hardliner")
        moves = arena.store.moves_frame()
        assert set(moves["game_id"]) == {final_a.game_id, final_b.game_id}
        for final in (final_a, final_b):
            mine = moves[moves["game_id"] == final.game_id]
            assert len(mine) == len(final.transcript) and list(mine["seq"]) == list(range(len(mine)))
        assert list(arena.store.games_frame("A")["id"]) == [final_a.game_id]
        assert final_b.max_rounds == 5 and final_b.outcome["rounds"] == 5

    asyncio.run(scenario())


# --- an agent that fails --------------------------------------------------------------------------


class FlakyBackend(CannedBackend):
    """Canned replies, but the first completion fails (after `delay` seconds)."""

    name = "flaky"
    instant = False  # it waits: both sides' moves are asked for at once

    def __init__(self, delay=0.0):
        self.delay, self.calls = delay, 0

    async def complete(self, request):
        self.calls += 1
        if self.calls == 1:
            if self.delay:
                await asyncio.sleep(self.delay)
            raise BackendError("the model server went away")
        return Completion(
            text=canned_reply(request.messages),
            prompt_tokens=5,
            completion_tokens=7,
            latency_s=0.01,
            model=request.model,
            finish_reason="stop",
        )


def test_an_agent_failure_after_the_persons_move_is_retried_by_submitting_again(tmp_path):
    async def scenario():
        backend = FlakyBackend(delay=0.2)  # fails while the person's move is already in
        arena = new_arena(tmp_path, Backends(backend))
        view = await arena.start(Setup(role=Role.BUYER, arm="arm:base", seed=6))
        game_id = view.game_id
        assert view.error is None and view.your_turn
        row = arena.store.game(game_id)
        assert row["backend"] == {"backend": "flaky"} and row["sampling"] == PRESETS["trained"].to_dict()
        failed = await arena.move(game_id, 1, "OFFER", "2.25", "hello")
        assert failed.error and "Press Try again to retry" in failed.error and "went away" not in failed.error
        assert failed.round == 1 and failed.status == "active" and failed.retry and not failed.your_turn
        assert [(t["speaker"], t["price"]) for t in failed.transcript] == [("you", 2.25)]  # kept: stored
        assert stored_rows(arena.store, game_id) == [(1, "buyer", "human", "OFFER", 2.25, "hello")]
        view = await arena.move(game_id, 1, "OFFER", "2.25", "hello")  # sent again: the round is retried
        assert view.error is None and view.round == 2 and view.notice == ALREADY_PLAYED
        rows = stored_rows(arena.store, game_id)
        assert rows == [
            (1, "buyer", "human", "OFFER", 2.25, "hello"),
            (1, "seller", "agent", "OFFER", 5000.0, "My offer is 5000.0."),
        ]
        agent_move = arena.store.game(game_id)["moves"][1]
        assert agent_move["raw"] == canned_reply(agent_move["prompt_messages"])
        assert (agent_move["prompt_tokens"], agent_move["completion_tokens"]) == (5, 7)
        assert backend.calls >= 2  # the failed call, the retry (and round 2 may be under way)

    asyncio.run(scenario())


def test_an_agent_that_fails_at_once_does_not_swallow_the_persons_next_move(tmp_path):
    async def scenario():
        arena = new_arena(tmp_path, Backends(FlakyBackend()))
        view = await arena.start(Setup(role=Role.BUYER, arm="arm:base", seed=6))
        view = await arena.move(view.game_id, 1, "OFFER", "2.25", "hello")
        moved = view.round == 2 and len(stored_rows(arena.store, view.game_id)) == 2
        told = view.error is not None and "to retry" in view.error
        assert moved or told, view

    asyncio.run(scenario())


# --- a model arm ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_game_against_an_adapter_on_the_hf_backend_is_fully_recorded(tmp_path, tiny_backend):
    async def scenario():
        arena = new_arena(tmp_path, Backends(tiny_backend))
        view = await arena.start(Setup(role=Role.BUYER, arm="arm:joint-grpo", rounds=2, seed=12))
        views = await play_out(arena, view, lambda v: ("OFFER", 0.5, "cheap"))
        final = views[-1]
        check_finished(arena.store, final, "arm:joint-grpo")
        row = arena.store.game(final.game_id)
        assert row["backend"]["backend"] == "hf" and "joint-grpo" in row["backend"]["adapters"]
        assert row["sampling"] == PRESETS["trained"].to_dict()
        assert row["prompt_version"] == "train" and row["parsing"] == "strict"
        assert row["out_of_distribution"] is True
        assert row["ood_reasons"] == ["trained with 4 rounds, playing 2"]
        agent_moves = [m for m in row["moves"] if m["actor"] == "agent"]
        assert [m["round"] for m in agent_moves] == [1, 2] and {m["role"] for m in agent_moves} == {"seller"}
        for m in agent_moves:
            assert isinstance(m["raw"], str)
            assert m["latency_s"] > 0 and m["prompt_tokens"] > 0 and m["completion_tokens"] >= 1
            chat = m["prompt_messages"]
            assert chat[0]["role"] == "user" and chat[0]["content"].startswith("You are the SELLER")
            assert chat[-1]["role"] == "user"
        first, second = agent_moves[0]["prompt_messages"], agent_moves[1]["prompt_messages"]
        assert len(second) == len(first) + 2 and second[: len(first)] == first
        assert second[len(first)] == {"role": "assistant", "content": agent_moves[0]["raw"]}
        assert "cheap" in second[-1]["content"]  # the person's round-1 message reached the agent
        for m in row["moves"]:
            if m["actor"] == "human":
                assert m["raw"] is None and m["prompt_messages"] is None and m["latency_s"] is None
        # Four rounds in simultaneous mode is what the adapter was trained on.
        in_distribution = await arena.start(Setup(role=Role.BUYER, arm="arm:joint-grpo", rounds=4, seed=12))
        row = arena.store.game(in_distribution.game_id)
        assert row["out_of_distribution"] is False and row["ood_reasons"] == []

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "spec, match",
    [
        ("arm:base", "started without a model backend"),
        ("arm:joint-grpo", "started without a model backend"),
        ("arm:no-such-adapter", "not an opponent offered here"),
        ("tactic:no-such-tactic", "not an opponent offered here"),
        ("nonsense", "not an opponent offered here"),
        ("robot:x", "not an opponent offered here"),
        ("openai:gpt@http://127.0.0.1:9/v1", "not an opponent offered here"),
    ],
)
def test_an_arm_that_cannot_play_is_refused_and_nothing_is_stored(tmp_path, spec, match):
    async def scenario():
        arena = new_arena(tmp_path, Backends(None))
        with pytest.raises(ArenaError, match=match):
            await arena.start(Setup(arm=spec, seed=1))
        assert arena.store.games_frame().empty and arena.store.moves_frame().empty and arena.live == {}

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "setup, match",
    [
        (Setup(rounds=0, seed=1), "between 1 and 20"),
        (Setup(rounds=21, seed=1), "between 1 and 20"),
        (Setup(scenario="low:99999999", seed=1), "that scenario does not exist"),
        (Setup(scenario="no-such-tier", seed=1), "that scenario does not exist"),
    ],
)
def test_a_setup_that_cannot_be_played_is_refused_and_nothing_is_stored(tmp_path, setup, match):
    async def scenario():
        arena = new_arena(tmp_path)
        with pytest.raises(ArenaError, match=match):
            await arena.start(setup)
        assert arena.store.games_frame().empty and arena.live == {}

    asyncio.run(scenario())


# --- parse_price and human_move ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [
        ("2.5", 2.5),
        ("$2.50", 2.5),
        ("1,200.5", 1200.5),
        ("  7 ", 7.0),
        ("€3", 3.0),
        ("£0.99", 0.99),
        ("2.345", 2.35 if round(2.345, 2) == 2.35 else 2.34),
        (3, 3.0),
        (2.499, 2.5),
        ("1,000,000,000", 1e9),
        ("2,50", 2.5),
        ("2.50 €", 2.5),
        ("1,250.00", 1250.0),
        (1e9, 1e9),
    ],
)
def test_parse_price_accepts_prices(text, value):
    assert parse_price(text) == value


@pytest.mark.parametrize(
    "text, match",
    [
        ("", "enter a price"),
        ("   ", "enter a price"),
        (None, "enter a price"),
        ("abc", "not a price"),
        ("2.5.1", "not a price"),
        ("-1", "cannot be negative"),
        ("0", "at least 0.01"),
        (0, "at least 0.01"),
        (-3.5, "at least 0.01"),
        ("nan", "not a price"),
        ("inf", "not a price"),
        ("-inf", "not a price"),
        (float("nan"), "finite"),
        ("1e12", "not a price"),
        ("1e3", "not a price"),
        ("1_000", "not a price"),
        ("1,2,3", "not a price"),
        ("٣", "digits 0 to 9"),
        (1e9 + 1, "absurdly large"),
        ("9" * 41, "characters long"),
        (True, "must be a number"),
        (False, "must be a number"),
        ([2], "must be a number"),
    ],
)
def test_parse_price_refuses_what_is_not_a_sensible_price(text, match):
    with pytest.raises(ArenaError, match=match):
        parse_price(text)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0.01, max_value=1e9, allow_nan=False, allow_infinity=False))
def test_any_sensible_positive_number_parses_to_itself_in_cents(x):
    expected = round(x, 2)
    assert parse_price(x) == expected
    assert parse_price(repr(x)) == expected
    assert parse_price(f"${x:,.2f}") == expected


NOT_IN_ANY_NUMBER = "bcdghjklmopqrsuvwxz?!#@"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20), st.sampled_from(NOT_IN_ANY_NUMBER), st.text(max_size=20))
def test_non_numeric_text_is_refused(before, letter, after):
    with pytest.raises(ArenaError):
        parse_price(before + letter + after)


def test_a_tiny_positive_price_does_not_round_to_zero():
    try:
        value = parse_price("0.004")
    except ArenaError:
        return
    assert value > 0


def test_human_move_makes_moves():
    assert human_move("OFFER", "$2.50", "  hello  ") == Move(Action.OFFER, price=2.5, message="hello")
    assert human_move("offer", 3, None) == Move(Action.OFFER, price=3.0)
    assert human_move("deal", "99", "ok") == Move(Action.DEAL, message="ok")  # a price with DEAL is ignored
    assert human_move("No_Deal", None, "") == Move(Action.NO_DEAL)
    assert human_move("OFFER", "1", "m" * MAX_MESSAGE).message == "m" * MAX_MESSAGE
    assert human_move("OFFER", "1", " " * 600 + "short").message == "short"  # the limit applies after stripping


@pytest.mark.parametrize(
    "action, price, message, match",
    [
        ("OFFER", "", "", "enter a price"),
        ("OFFER", "abc", "", "not a price"),
        ("OFFER", "1", "m" * (MAX_MESSAGE + 1), "limit is 500"),
        ("HAGGLE", "1", "", "unknown action"),
        ("", "1", "", "unknown action"),
        ("INVALID", None, "", "choose OFFER, DEAL or NO_DEAL"),
    ],
)
def test_human_move_refuses_bad_moves(action, price, message, match):
    with pytest.raises(ArenaError, match=match):
        human_move(action, price, message)


SHOWABLE = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Cf")) | st.sampled_from("\n\t"), max_size=MAX_MESSAGE
)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=20), st.sampled_from(["\x00", "\x1b", "\x7f", "\ud800", "\udfff"]), st.text(max_size=20))
def test_messages_with_control_characters_or_lone_surrogates_are_refused(before, bad, after):
    with pytest.raises(ArenaError, match="control characters or broken Unicode"):
        human_move("OFFER", "1", before + bad + after + "x")


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0.01, max_value=1e9), SHOWABLE)
def test_human_move_offer_roundtrip(price, message):
    move = human_move("OFFER", str(price), message)
    assert move.action is Action.OFFER and move.price == round(price, 2) and move.message == message.strip()
    assert math.isfinite(move.price) and move.price > 0


# --- time limits and flags (study mode) --------------------------------------------------------------


def test_a_move_not_made_in_time_is_a_pass_recorded_as_a_timeout(tmp_path):
    async def scenario():
        arena = new_arena(tmp_path)
        view = await arena.start(
            Setup(role=Role.BUYER, arm="tactic:hardliner", rounds=3), study="s", participant="P1", move_seconds=1.0
        )
        assert 0 < view.seconds_left <= 1.0
        await asyncio.sleep(1.3)  # the person does not move; round 2's clock, from 1 s, has most of its second left
        view = await arena.view(view.game_id, study="s")
        assert view.round == 2 and view.transcript[0]["action"] == "INVALID"
        view = await arena.move(view.game_id, 2, "OFFER", "0.01", "", study="s")  # in time
        row = arena.store.game(view.game_id)
        human = [m for m in row["moves"] if m["actor"] == "human"]
        assert [(m["action"], m["error"]) for m in human] == [("INVALID", "timeout"), ("OFFER", None)]
        assert (row["study"], row["participant"], row["extra"]) == (
            "s",
            "P1",
            {"move_seconds": 1.0, "scenario_choice": "low"},
        )
        # A rebuilt game (a restart) keeps its time limit.
        again = await Arena(arena.store, Backends()).view(view.game_id, wait_s=5, study="s")
        assert again.seconds_left is not None and again.seconds_left <= 1.0

    asyncio.run(scenario())


def test_agent_messages_that_name_ai_or_a_model_are_flagged():
    from bargain.arena.controller import MENTIONS_AI

    for said in ("As an AI, I can't", "I'm a language model", "Qwen thinks", "this bot offers 2", "my algorithm says"):
        assert MENTIONS_AI.search(said), said
    for said in ("I need this chair", "Said the maid", "Robotic vacuum, 2.50", "I'll pay 3"):
        assert not MENTIONS_AI.search(said), said
