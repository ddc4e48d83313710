"""Games between two people (bargain.arena.people): seated by an invitation link or the public queue, played
through the same rules and records, each side seeing only what its condition reveals, every move stored once by
whichever process it reaches. Two `Arena`s over one database stand for two app processes here;
tests/test_people_processes.py runs real ones."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bargain.agents.backends import Backends
from bargain.arena import people
from bargain.arena.controller import Arena, ArenaError, Setup
from bargain.arena.people import INVITE, MAX_OPEN, QUEUE
from bargain.arena.views import ALREADY_PLAYED
from bargain.engine.game import Condition
from bargain.engine.trial import Mode, Role
from bargain.records.store import Store

OFFERED = ["tactic:linear", INVITE, QUEUE]


def arenas(tmp_path, n: int = 2) -> list[Arena]:
    """`n` arenas over one database: as many app processes."""
    url = f"sqlite:///{tmp_path / 'people.db'}"
    return [Arena(Store(url), Backends(), arms=OFFERED) for _ in range(n)]


def run(coroutine):
    return asyncio.run(coroutine)


async def invited(a: Arena, b: Arena, **setup) -> tuple[dict, dict]:
    """Alice invites on one process, Bob opens the link on the other: both views of the game."""
    alice = await a.start(Setup(arm=INVITE, **setup), player="alice")
    assert alice.status == "waiting" and alice.thinking and alice.invitation
    bob = await b.join(alice.invitation, "bob")
    return await a.view(alice.game_id), bob


def test_two_people_play_a_simultaneous_game_each_seeing_only_their_side(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        alice, bob = await invited(a, b, role=Role.BUYER, rounds=3, condition=Condition.BOTH_UNAWARE)
        assert alice.status == bob.status == "active" and alice.invitation is None
        assert (alice.role, bob.role) == ("buyer", "seller") and alice.game_id != bob.game_id
        assert alice.their_price is None and bob.their_price is None  # neither is told the other's price
        assert alice.your_turn and bob.your_turn and alice.other == bob.other == "person"

        alice = await a.move(alice.game_id, 1, "OFFER", "1.00", "My budget is 1.50.")
        assert not alice.your_turn and alice.thinking  # her move is shown, Bob's is awaited
        assert [(t["speaker"], t["price"]) for t in alice.transcript] == [("you", 1.0)]
        bob = await b.view(bob.game_id)
        assert bob.transcript == [] and bob.your_turn  # a simultaneous move stays hidden until the round ends

        ask = round(max(bob.your_price * 3, 50.0), 2)  # far above her 1.00 whatever his price: no deal
        bob = await b.move(bob.game_id, 1, "OFFER", f"{ask}", "Not below that.")
        assert bob.round == 2 and bob.your_turn
        assert [(t["speaker"], t["price"]) for t in bob.transcript] == [("person", 1.0), ("you", ask)]
        alice = await a.view(alice.game_id, wait_s=1)
        assert alice.round == 2 and alice.your_turn and not alice.thinking

        again = await a.move(alice.game_id, 1, "OFFER", "1.00", "sent twice")
        assert again.notice == ALREADY_PLAYED and again.round == 2

        await a.move(alice.game_id, 2, "NO_DEAL", "", "Goodbye.")
        bob = await b.move(bob.game_id, 2, "OFFER", f"{ask}", "")
        alice = await a.view(alice.game_id)
        for view, other in ((alice, "seller"), (bob, "buyer")):
            assert view.status == "finished" and not view.outcome["deal"] and not view.thinking
            assert view.debrief["agent_role"] == other  # the other side's price, now told
            assert (view.debrief["other"], view.debrief["strategy"]) == ("person", [])  # a person writes none
        assert alice.debrief["agent_price"] == bob.your_price and bob.debrief["agent_price"] == alice.your_price
        claims = [c for c in alice.debrief["claims"] if c["kind"] == "own_limit"]
        assert [(c["speaker"], c["said"]) for c in claims] == [("you", 1.5)]  # the checker reads both sides

        game = a.store.game(a.store.games_frame()["id"].iloc[0])
        assert game["arm"] == "person" and game["status"] == "finished"
        assert [(m["round"], m["role"], m["person"]) for m in game["moves"]] == [
            (1, "buyer", "alice"),
            (1, "seller", "bob"),
            (2, "buyer", "alice"),
            (2, "seller", "bob"),
        ]

    run(scenario())


def test_a_sequential_game_between_two_people_alternates_and_accepts(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        alice, bob = await invited(a, b, role=Role.SELLER, mode=Mode.SEQUENTIAL, rounds=4, first_actor=Role.BUYER)
        assert bob.your_turn and not alice.your_turn and alice.thinking
        with pytest.raises(ArenaError, match="wait for the other side"):
            await a.move(alice.game_id, 1, "OFFER", "9.00", "")
        bob = await b.move(bob.game_id, 1, "OFFER", "2.00", "Two?")
        alice = await a.view(alice.game_id, wait_s=1)
        assert alice.your_turn and "DEAL" in alice.actions
        alice = await a.move(alice.game_id, 2, "DEAL", "", "Done.")  # one move a round
        assert alice.status == "finished" and alice.outcome["deal_price"] == 2.0

    run(scenario())


def test_an_invitation_seats_one_person_once_and_never_its_sender(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        alice = await a.start(Setup(arm=INVITE, role=Role.BUYER), player="alice")
        link = alice.invitation
        with pytest.raises(ArenaError, match="your own invitation"):
            await b.join(link, "alice")
        bob = await b.join(link, "bob")
        again = await b.join(link, "bob", held=bob.game_id)  # Bob's browser opens the link again: his seat
        assert again.game_id == bob.game_id
        assert link != bob.game_id  # the link is no handle: Alice cannot move for Bob with it
        with pytest.raises(ArenaError):
            await a.move(link, 1, "OFFER", "1", "")
        with pytest.raises(ArenaError, match="already taken"):
            await b.join(link, "carol")
        with pytest.raises(ArenaError, match="not valid"):
            await b.join("0" * 32, "carol")

    run(scenario())


def test_a_person_waiting_can_stop_and_an_idle_wait_ends(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        alice = await a.start(Setup(arm=INVITE), player="alice")
        stopped = await a.cancel(alice.game_id)
        assert stopped.status == "cancelled" and not stopped.thinking and stopped.invitation is None
        with pytest.raises(ArenaError, match="already taken, or the game was cancelled"):
            await b.join(alice.invitation, "bob")
        queued = await a.start(Setup(arm=QUEUE), player="carol")
        a.idle_timeout = timedelta(0)
        await a.sweep()
        assert (await a.view(queued.game_id)).status == "abandoned"  # nobody waits forever

    run(scenario())


def test_the_queue_pairs_the_next_person_with_the_same_settings_and_the_other_role(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        carol = await a.start(Setup(arm=QUEUE, role=Role.SELLER, rounds=3), player="carol")
        assert carol.status == "waiting" and carol.invitation is None
        other_settings = await b.start(Setup(arm=QUEUE, role=Role.BUYER, rounds=2), player="dave")
        same_role = await b.start(Setup(arm=QUEUE, role=Role.SELLER, rounds=3), player="erin")
        assert other_settings.status == same_role.status == "waiting"
        # carol, now as a buyer: never seated against herself, so erin's wait (the next oldest) is the one served
        herself = await a.start(Setup(arm=QUEUE, role=Role.BUYER, rounds=3), player="carol")
        assert herself.status == "active" and (await b.view(same_role.game_id)).status == "active"
        assert (await a.view(carol.game_id)).status == "waiting"
        frank = await b.start(Setup(arm=QUEUE, role=Role.BUYER, rounds=3), player="frank")
        assert frank.status == "active" and frank.role == "buyer"
        assert (await a.view(carol.game_id)).status == "active"
        assert (await a.view(other_settings.game_id)).status == "waiting"

    run(scenario())


def test_two_people_moving_at_once_on_two_processes_are_both_applied_once(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        alice, bob = await invited(a, b, role=Role.BUYER, rounds=5)
        for round_ in range(1, 5):
            alice, bob = await asyncio.gather(
                a.move(alice.game_id, round_, "OFFER", "1.00", f"a{round_}"),
                b.move(bob.game_id, round_, "OFFER", "15.00", f"b{round_}"),
            )
        game = a.store.game(a.store.games_frame()["id"].iloc[0])
        stored = sorted((m["round"], m["role"], m["message"]) for m in game["moves"])
        assert stored == [
            (r, role, f"{'a' if role == 'buyer' else 'b'}{r}") for r in range(1, 5) for role in ("buyer", "seller")
        ]  # each once: Alice's (a) and Bob's (b) of every round
        assert (await b.view(bob.game_id)).round == 5
        for player, role in (("alice", "buyer"), ("bob", "seller")):  # each person's Results: their own side
            mine = a.store.player_games(player)
            assert list(mine.opponent) == ["person"] and list(mine.role) == [role]

    run(scenario())


def test_hostile_requests_about_people_are_refused_in_words(tmp_path):
    async def scenario():
        (a,) = arenas(tmp_path, 1)
        for token in (None, 12, "x" * 33, "../../etc/passwd"):
            with pytest.raises(ArenaError):
                await a.join(token, "bob")
        with pytest.raises(ArenaError, match="only a game waiting"):
            await a.cancel("f" * 32)
        plain = Arena(a.store, Backends(), arms=["tactic:linear"])  # a server that offers no people
        with pytest.raises(ArenaError, match="not offered here"):
            await plain.start(Setup(arm=INVITE), player="alice")

    run(scenario())


def test_the_report_sets_games_between_people_beside_games_against_agents(tmp_path):
    from bargain.runs.report import arena_tables

    async def scenario():
        a, b = arenas(tmp_path)
        alice, bob = await invited(a, b, role=Role.BUYER, rounds=1)
        await asyncio.gather(
            a.move(alice.game_id, 1, "OFFER", "0.01", f"My budget is {alice.your_price / 2:.2f}."),
            b.move(bob.game_id, 1, "OFFER", "99", "I cannot go below 50."),
        )
        lone = await a.start(Setup(arm="tactic:linear", role=Role.BUYER, rounds=1), player="carol")
        await a.move(lone.game_id, 1, "NO_DEAL", "", "")

    run(scenario())
    table = arena_tables(f"sqlite:///{tmp_path / 'people.db'}")["arena"].set_index("opponent")
    assert set(table.index) == {"person", "tactic:linear"}
    people = table.loc["person"]
    assert people["games"] == 1 and people["deal_rate"] == 0.0
    assert people["person_claims_per_game"] == 1 and people["agent_claims_per_game"] == 1  # both sides read
    assert people["person_misrepresentation_rate"] == 1.0  # alice's budget was twice what she said


def test_a_browser_with_a_game_going_on_against_an_agent_can_still_be_joined(tmp_path):
    """A game between people is no browser's one game going on: Alice's tactic game in another tab does not stop
    Bob from taking her invitation (the database's one-active-game-per-browser rule is about agents)."""

    async def scenario():
        a, b = arenas(tmp_path)
        await a.start(Setup(arm="tactic:linear"), player="alice")
        alice, bob = await invited(a, b, role=Role.BUYER)
        assert alice.status == bob.status == "active"

    run(scenario())


@pytest.mark.parametrize("condition", list(Condition))
def test_each_person_is_told_exactly_what_their_condition_reveals_to_their_role(tmp_path, condition):
    async def scenario():
        a, b = arenas(tmp_path)
        alice, bob = await invited(a, b, role=Role.BUYER, rounds=2, condition=condition)
        game = a.store.game(a.store.games_frame()["id"].iloc[0])
        truth = {"buyer": game["buyer_price"], "seller": game["seller_price"]}
        for view, other in ((alice, "seller"), (bob, "buyer")):
            assert view.your_price == truth[view.role]
            told = condition.knows_other_price(Role(view.role))
            assert view.their_price == (truth[other] if told else None)
            assert (view.their_price_prior is None) == told  # a prior only where the price is not told
            assert view.debrief is None and view.outcome is None

    run(scenario())


@pytest.mark.slow  # a move countdown waited out (seconds)
def test_under_a_move_countdown_a_person_who_does_not_move_passes_once_and_the_game_ends_by_the_rules(tmp_path):
    """A study's move countdown (`move_seconds`): the side whose time runs out passes, written once by whichever
    request sees it first (here: a look from the other process), and the game goes on by the protocol. The countdown
    is long enough for the start, the join and Alice's move to be made within it on a busy machine (at 0.6 s they
    were not, once: round 1 had passed before her move was stored)."""
    countdown = 1.5

    async def scenario():
        a, b = arenas(tmp_path)
        alice = await a.start(Setup(arm=INVITE, role=Role.BUYER, rounds=2), player="alice", move_seconds=countdown)
        bob = await b.join(alice.invitation, "bob")
        assert 0 < bob.seconds_left <= countdown
        alice = await a.move(alice.game_id, 1, "OFFER", "1.00", "")
        assert alice.seconds_left is None  # she has moved: no clock of hers runs
        await asyncio.sleep(countdown + 0.2)
        bob, again = await asyncio.gather(b.view(bob.game_id), a.view(alice.game_id))  # both see it late
        assert bob.round == again.round == 2
        assert [t["timed_out"] for t in bob.transcript if t["speaker"] == "you"] == [True]
        await asyncio.sleep(countdown + 0.2)  # nobody moves in round 2: both pass, and the last round ends the game
        alice = await a.view(alice.game_id)
        assert alice.status == "finished" and not alice.outcome["deal"]
        moves = a.store.game(a.store.games_frame()["id"].iloc[0])["moves"]
        assert sorted((m["round"], m["role"], m["action"], m["error"]) for m in moves) == [
            (1, "buyer", "OFFER", None),
            (1, "seller", "INVALID", "timeout"),  # each pass once, though two processes saw it due
            (2, "buyer", "INVALID", "timeout"),
            (2, "seller", "INVALID", "timeout"),
        ]

    run(scenario())


# --- seats: a seat is its token's ---------------------------------------------------------------------------------


def test_a_taken_seat_opens_to_its_token_only_whatever_player_id_a_second_caller_sends(tmp_path):
    """Bob joins Alice's link without a player id: he is stored under a fresh random id, and nobody who has the link
    (no id, `guest`, Bob's stored id, Alice's) gets his seat, his price or his moves; only his seat token does."""

    async def scenario():
        a, b = arenas(tmp_path)
        alice = await a.start(Setup(arm=INVITE, role=Role.BUYER), player="alice")
        link = alice.invitation
        bob = await b.join(link, None)
        stored = a.store.seats_frame().set_index("role")["person"]
        assert stored["seller"].startswith("anon-") and stored["seller"] != "guest"
        for who in (None, "", "guest", stored["seller"], "bob"):
            with pytest.raises(ArenaError, match="already taken"):
                await b.join(link, who)
            with pytest.raises(ArenaError, match="already taken"):
                await a.join(link, who, held=alice.game_id)  # a token of the same game, not this seat's
        with pytest.raises(ArenaError, match="your own invitation|already taken"):
            await a.join(link, "alice")
        assert (await a.view(bob.game_id)).your_price == bob.your_price  # the token is the handle

        # The queue: a second caller sending the id of someone who waits is never given their seat.
        carol = await a.start(Setup(arm=QUEUE, role=Role.SELLER), player="carol")
        posing = await b.start(Setup(arm=QUEUE, role=Role.SELLER), player="carol")
        assert posing.game_id != carol.game_id and posing.status == "waiting"

    run(scenario())


def test_two_anonymous_callers_are_two_people_and_a_player_has_a_bounded_number_of_open_games(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        first = await a.start(Setup(arm=QUEUE, role=Role.SELLER))
        second = await b.start(Setup(arm=QUEUE, role=Role.BUYER))  # no id either: paired, not taken for the first
        assert first.status == "waiting" and second.status == "active"
        persons = set(a.store.seats_frame()["person"])
        assert len(persons) == 2 and all(p.startswith("anon-") for p in persons)

        waits = [await (a, b)[i % 2].start(Setup(arm=INVITE), player="pat") for i in range(MAX_OPEN)]
        with pytest.raises(ArenaError, match=f"already have {MAX_OPEN} games with other people"):
            await b.start(Setup(arm=QUEUE), player="pat")
        other = await a.start(Setup(arm=INVITE, role=Role.SELLER), player="quinn")
        with pytest.raises(ArenaError, match=f"already have {MAX_OPEN} games"):
            await b.join(other.invitation, "pat")  # joining opens a game too
        await a.cancel(waits[0].game_id)
        assert (await b.join(other.invitation, "pat")).status == "active"

    run(scenario())


def test_a_price_between_people_is_bounded_by_the_scenario_as_against_a_program(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        alice, bob = await invited(a, b, role=Role.BUYER)
        with pytest.raises(ArenaError) as between:
            await b.move(bob.game_id, 1, "OFFER", "100000000", "")
        program = await a.start(Setup(arm="tactic:linear", role=Role.SELLER), player="erin")
        with pytest.raises(ArenaError) as against:
            await a.move(program.game_id, 1, "OFFER", "100000000", "")
        assert str(between.value) == str(against.value) and "far more than anything" in str(between.value)
        assert a.store.game(a.store.games_frame()["id"].iloc[0])["moves"] == []

    run(scenario())


# --- waits: live while asked for ---------------------------------------------------------------------------------


def test_the_oldest_live_wait_is_paired_first_and_a_wait_nobody_asks_for_is_cancelled(tmp_path, monkeypatch):
    """Three sellers wait in turn. The first stops asking (its tab closed); the other two keep asking. A buyer is
    seated with the oldest live wait (the second), never with the gone one, whose wait is cancelled as gone; the
    next buyer gets the third. Its person coming back finds their wait cancelled."""
    monkeypatch.setattr(people, "LIVE_S", 1.0)
    monkeypatch.setattr(people, "SEEN_EVERY_S", 0.05)

    async def scenario():
        a, b = arenas(tmp_path)
        gone = await a.start(Setup(arm=QUEUE, role=Role.SELLER), player="gone")
        older = await b.start(Setup(arm=QUEUE, role=Role.SELLER), player="older")
        newer = await a.start(Setup(arm=QUEUE, role=Role.SELLER), player="newer")
        for _ in range(3):  # the two live pages keep asking, on either process; the first does not
            await asyncio.sleep(0.4)
            await a.view(older.game_id)
            await b.view(newer.game_id)
        buyer = await b.start(Setup(arm=QUEUE, role=Role.BUYER), player="buyer")
        assert buyer.status == "active"
        assert (await a.view(older.game_id)).status == "active"
        assert (await a.view(newer.game_id)).status == "waiting"
        games = a.store.games_frame().set_index("id")
        game_of = {s: g for g, s in zip(a.store.seats_frame()["game_id"], a.store.seats_frame()["person"])}
        assert (games.loc[game_of["gone"], "status"], games.loc[game_of["gone"], "abandoned_by"]) == (
            "cancelled",
            people.GONE,
        )
        second = await a.start(Setup(arm=QUEUE, role=Role.BUYER), player="second")
        assert second.status == "active" and (await b.view(newer.game_id)).status == "active"
        assert (await a.view(gone.game_id)).status == "cancelled"  # back too late: start again

    run(scenario())


def test_a_wait_looked_at_after_it_has_gone_is_cancelled_and_the_sweep_cancels_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(people, "LIVE_S", 0.5)

    async def scenario():
        a, b = arenas(tmp_path)
        back = await a.start(Setup(arm=QUEUE, role=Role.SELLER), player="back")
        never = await a.start(Setup(arm=QUEUE, role=Role.BUYER, rounds=2), player="never")
        invited_ = await a.start(Setup(arm=INVITE), player="inviter")  # a link's wait is not the queue's
        await asyncio.sleep(0.7)
        assert (await a.view(back.game_id)).status == "cancelled"  # its person returns after it had gone
        await b.sweep()
        assert (await a.view(never.game_id)).status == "cancelled"
        assert (await a.view(invited_.game_id)).status == "waiting"

    run(scenario())


def test_a_start_sent_again_with_its_start_id_gives_the_seat_it_took_and_never_a_second(tmp_path):
    """A free-play start whose answer was lost (a dropped connection, a process stopped after it stored the seat) is
    sent again, to either process, with the same start id: the caller is given the seat the first one took, even
    with a full quota of open games or other settings, never a second seat whose partner would wait for ever. The
    same id with another player id, or none, is another start; an id that is no such id is refused."""

    async def scenario():
        a, b = arenas(tmp_path)
        carol = await a.start(Setup(arm=QUEUE, role=Role.SELLER, rounds=3), player="carol")
        once = "dave-start-0001-xyz"
        dave = await a.start(Setup(arm=QUEUE, role=Role.BUYER, rounds=3), player="dave", start_id=once)
        assert dave.status == "active" and (await a.view(carol.game_id)).status == "active"
        again = await b.start(Setup(arm=QUEUE, role=Role.SELLER, rounds=5), player="dave", start_id=once)
        assert (again.game_id, again.status, again.role) == (dave.game_id, "active", "buyer")

        # sent twice at once, to both processes: one seat, the same for both answers
        twice = await asyncio.gather(
            *(arena.start(Setup(arm=QUEUE, role=Role.BUYER), player="erin", start_id="e" * 16) for arena in (a, b))
        )
        assert twice[0].game_id == twice[1].game_id and twice[0].status == "waiting"

        # a player at their bound of open games is given the seat their last start took, not refused
        opened = [await a.start(Setup(arm=INVITE), player="pat", start_id=f"pat-start-{i:06d}") for i in range(3)]
        last = await b.start(Setup(arm=INVITE), player="pat", start_id="pat-start-000002")
        assert last.game_id == opened[2].game_id

        # the same id with another player id is another person's start; without one, the same anonymous caller's
        assert (await a.start(Setup(arm=QUEUE), player="mallory", start_id=once)).game_id != dave.game_id
        anonymous = [await arena.start(Setup(arm=INVITE), start_id="a" * 64) for arena in (a, b)]
        assert anonymous[0].game_id == anonymous[1].game_id
        for bad in ("short", "x" * 65, "has space in it!!", 12):
            with pytest.raises(ArenaError, match="start id must be 16 to 64"):
                await a.start(Setup(arm=QUEUE), player="dave", start_id=bad)

        held = a.store.seats_frame().dropna(subset=["person"]).groupby("person").size().to_dict()
        anon = people.fresh_player("a" * 64)
        assert held == {"carol": 1, "dave": 1, "erin": 1, "pat": 3, "mallory": 1, anon: 1}

    run(scenario())


def test_a_join_sent_again_with_its_start_id_gives_the_seat_it_took_and_the_link_stays_closed_to_others(tmp_path):
    async def scenario():
        a, b = arenas(tmp_path)
        alice = await a.start(Setup(arm=INVITE), player="alice")
        once = "bob-join-0001-abcdef"
        bob = await b.join(alice.invitation, "bob", start_id=once)
        again = await a.join(alice.invitation, "bob", start_id=once)  # its answer lost: sent again, elsewhere
        assert again.game_id == bob.game_id and again.status == "active" and again.role != alice.role
        for who, start_id in (("bob", None), ("bob", "bob-join-0002-abcdef"), ("mallory", once)):
            with pytest.raises(ArenaError, match="already taken"):
                await b.join(alice.invitation, who, start_id=start_id)

        carol = await a.start(Setup(arm=INVITE), player="carol")
        twice = await asyncio.gather(*(arena.join(carol.invitation, None, start_id="d" * 20) for arena in (a, b)))
        assert twice[0].game_id == twice[1].game_id  # at once, on both processes: one seat, an anonymous caller's
        with pytest.raises(ArenaError, match="start id must be 16 to 64"):
            await a.join(carol.invitation, "dave", start_id="short")

    run(scenario())
