"""A study under the conditions it advertises: every request may arrive twice, at two app processes at once, or
die halfway. Two `StudyRunner`s with arenas and stores of their own stand for two processes on one SQLite file
(tests/test_study_processes.py runs real processes on PostgreSQL and kills one). Each case checks what the
database holds afterwards: nothing written twice, nothing lost, nobody stranded."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

from sqlalchemy import update
from test_study_flow import answers_for, make_study, play_game

from bargain.agents.backends import Backends
from bargain.arena.controller import ALREADY_PLAYED, Arena
from bargain.records.store import Store, StoreError, utcnow
from bargain.study import records
from bargain.study.config import Timing
from bargain.study.flow import StudyRunner


def processes(tmp_path, study=None, count: int = 2) -> list[StudyRunner]:
    """`count` runners of one study over one database, each with its own store (connections) and arena."""
    study = study or make_study(tmp_path)
    url = f"sqlite:///{tmp_path / 'study.db'}"
    return [
        StudyRunner(study, Arena(Store(url), Backends(), arms=["tactic:hardliner", "tactic:linear"]))
        for _ in range(count)
    ]


async def to_first_game(runner: StudyRunner, params: dict) -> dict:
    await runner.submit(params, "consent", {"agree": True})
    await runner.submit(params, "instructions", {})
    return await runner.submit(params, "comprehension", {"no_deal": "Nothing"})


def held_slots(store: Store, within: bool = True) -> dict[str, int]:
    """The slots each cell should have taken, from the participants' own records (one who left, dropped, declining
    or screened out, keeps only the games they finished): what `study_cells.filled` must equal, however requests
    raced or processes died."""
    held: dict[str, int] = {}
    for row in records.participants(store, "flow-test", [1]):
        left = row["stage"] in ("dropped", "declined", "screened_out")
        kept = row["cells"][: row["games_done"]] if left else row["cells"]
        for cell in kept if within else kept[:1]:
            held[cell] = held.get(cell, 0) + 1
    return held


def study_games(store: Store, participant: str):
    games = store.games_frame()
    return games[games["participant"] == participant].sort_values("game_index")


def test_reloads_on_two_processes_while_a_game_starts_make_one_game(tmp_path):
    async def scenario():
        first, second = processes(tmp_path)
        for n in range(6):
            params = {"participant": f"R{n}"}
            await to_first_game(first, params)
            page = await play_game(first, params, await first.page(params), [])
            # The survey moves the participant to game 2, which the next page load starts; meanwhile they reload
            # in this tab and in another one that reached the other process.
            pages = await asyncio.gather(
                first.submit(params, "game_survey", answers_for(page.items)),
                first.page(params),
                second.page(params),
                second.page(params),
                first.page(params),
            )
            shown = {p.view.game_id for p in pages if p.stage == "game"}
            games = study_games(first.arena.store, f"R{n}")
            assert list(games["game_index"]) == [1, 2] and (games["status"] == "finished").sum() == 1
            assert shown <= set(games["id"]) and len(shown) == 1
            row = records.participant(first.arena.store, "flow-test", f"R{n}")
            assert row["games"] == list(games["id"])

    asyncio.run(scenario())


def test_the_same_move_sent_to_two_processes_at_once_is_played_once(tmp_path):
    async def scenario():
        first, second = processes(tmp_path)
        for n in range(8):
            params = {"participant": f"M{n}"}
            view = (await to_first_game(first, params)).view
            move = {"round": view.round, "action": "OFFER", "message": "twice"}
            pages = await asyncio.gather(  # bids below any seller's cost: the round never ends the game
                first.submit(params, "game", {**move, "price": "0.01"}),
                second.submit(params, "game", {**move, "price": "0.02"}),
            )
            game = first.arena.store.game(view.game_id)
            mine = [(m["round"], m["price"]) for m in game["moves"] if m["actor"] == "human"]
            assert len(mine) == 1 and mine[0][0] == 1  # one of the two prices, once
            views = [p.view for p in pages]
            assert views[0].transcript == views[1].transcript and views[0].round == 2
            assert sorted(v.notice or "" for v in views) == ["", ALREADY_PLAYED]
            page = await play_game(second, params, await second.page(params), [])  # and it goes on, anywhere
            assert page.stage == "game_survey"

    asyncio.run(scenario())


def test_a_survey_sent_again_is_taken_once_and_different_answers_are_refused_politely(tmp_path):
    async def scenario():
        first, second = processes(tmp_path)
        params = {"participant": "S1"}
        page = await play_game(first, params, await to_first_game(first, params), [])
        answers = answers_for(page.items)
        after = await first.submit(params, "game_survey", answers)
        again = await second.submit(params, "game_survey", answers)  # a retry after a lost answer, elsewhere
        assert (after.stage, again.stage) == ("game", "game") and "already saved" in again.note
        changed = await first.submit(params, "game_survey", {**answers, "satisfied": 1})
        assert changed.stage == "game" and "first sent count" in changed.note
        store = first.arena.store
        row = records.participant(store, "flow-test", "S1")
        saved = {a["item"]: a["value"] for a in records.answers(store, row["id"]) if a["survey"] == "per_game"}
        assert saved.keys() == answers.keys() and saved["satisfied"] == "3"  # once, as first sent
        assert row["stage_times"].keys() >= {"game_survey", "game"} and len(row["games"]) == 2

    asyncio.run(scenario())


def test_answers_left_by_a_process_that_died_before_moving_on_do_not_block_the_retry(tmp_path):
    """A page saved and not moved on (a process killed between the two, as an older version could be): the retry
    moves the participant on and the answers first saved are the ones kept."""

    async def scenario():
        (runner,) = processes(tmp_path, count=1)
        params = {"participant": "D1"}
        page = await play_game(runner, params, await to_first_game(runner, params), [])
        store = runner.arena.store
        row = records.participant(store, "flow-test", "D1")
        first = runner._answers(row, "game_survey", answers_for(page.items))
        records.move_to(store, row["id"], "game_survey", "game_survey", [first])  # saved; the stage unchanged
        page = await runner.submit(params, "game_survey", {**answers_for(page.items), "satisfied": 5})
        assert page.stage == "game"
        saved = {a["item"]: a["value"] for a in records.answers(store, row["id"]) if a["survey"] == "per_game"}
        assert saved == {k: v for k, (v, _) in first.items.items()}

    asyncio.run(scenario())


def test_a_step_that_fails_halfway_is_taken_whole_by_the_retry_and_slots_are_counted_once(tmp_path, monkeypatch):
    """The slots are taken, then moving on to the game fails (the process dies, the database refuses): the retry
    takes no second slot, saves the comprehension answers once and starts one game."""

    async def scenario():
        (runner,) = processes(tmp_path, count=1)
        params = {"participant": "F1"}
        await runner.submit(params, "consent", {"agree": True})
        await runner.submit(params, "instructions", {})
        real = records.move_to

        def dies(store, row_id, stage, *args, **kwargs):
            if stage == "game":
                raise StoreError("cannot update a participant in the database: the server closed the connection")
            return real(store, row_id, stage, *args, **kwargs)

        monkeypatch.setattr(records, "move_to", dies)
        try:
            await runner.submit(params, "comprehension", {"no_deal": "Nothing"})
        except StoreError:
            pass
        monkeypatch.setattr(records, "move_to", real)
        store = runner.arena.store
        row = records.participant(store, "flow-test", "F1")
        assert row["stage"] == "comprehension" and records.answers(store, row["id"]) == [] and row["cells"]
        page = await runner.submit(params, "comprehension", {"no_deal": "Nothing"})
        assert page.stage == "game"
        counts = records.cell_counts(store, "flow-test", 1)
        assert {cell: taken for cell, (taken, _) in counts.items() if taken} == held_slots(store)
        assert len(records.answers(store, row["id"])) == 1 and len(study_games(store, "F1")) == 1

    asyncio.run(scenario())


def test_any_request_counts_as_activity_and_the_idle_are_released_once(tmp_path):
    async def scenario():
        study = dataclasses.replace(make_study(tmp_path), timing=Timing(move_seconds=600, idle_minutes=1))
        first, second = processes(tmp_path, study)
        for name in ("active", "gone"):
            await to_first_game(first, {"participant": name})
        store = first.arena.store
        with store.writing("age") as session:  # both last seen two minutes ago, mid-game
            session.execute(update(records.ParticipantRow).values(updated_at=utcnow() - timedelta(minutes=2)))
        for runner in (first, second):
            runner._released = float("-inf")  # the next request looks for idle participants, in both processes
        view = (await first.page({"participant": "active"})).view
        page = await second.submit(
            {"participant": "active"},
            "game",
            {"round": view.round, "action": "OFFER", "price": "1.00", "message": ""},
        )
        assert page.stage == "game" and page.view.round == 2  # a move is activity: not dropped mid-game
        gone = records.participant(store, "flow-test", "gone")
        assert gone["stage"] == "dropped"
        assert store.game(gone["games"][0])["status"] == "abandoned"  # the game they left is not left running
        counts = records.cell_counts(store, "flow-test", 1)
        assert {cell: taken for cell, (taken, _) in counts.items() if taken} == held_slots(store)
        assert records.release_idle(store, "flow-test", 1, timedelta(minutes=1), within=True) == []

    asyncio.run(scenario())


def test_a_reload_elsewhere_while_the_last_game_ends_shows_the_survey_the_participant_moved_on_to(tmp_path):
    """A participant's last move ends their last game on one process while a reload on the other is reading that
    game: the reload finds it ended and the participant already moved on to its survey (their record read again),
    and shows that survey, counting nothing a second time."""

    async def scenario():
        first, second = processes(tmp_path)
        params = {"participant": "L1"}
        page = await play_game(first, params, await to_first_game(first, params), [])
        page = await first.submit(params, "game_survey", answers_for(page.items))
        view = page.view
        page = await first.submit(params, "game", {"round": 1, "action": "OFFER", "price": "0.01", "message": "hi"})
        assert page.stage == "game" and page.game == 2 and page.view.round == 2
        reading = second.arena.view

        async def racing(game_id, *args, **kwargs):  # the last move lands on the other process while this one reads
            await first.submit(params, "game", {"round": 2, "action": "OFFER", "price": "0.01", "message": "bye"})
            return await reading(game_id, *args, **kwargs)

        second.arena.view = racing  # type: ignore[method-assign]
        shown = await second.page(params)
        assert shown.stage == "game_survey" and shown.game == 2 and shown.outcome is not None
        row = records.participant(first.arena.store, "flow-test", "L1")
        assert (row["stage"], row["games_done"]) == ("game_survey", 2)
        assert view.game_id == row["games"][1]

    asyncio.run(scenario())
