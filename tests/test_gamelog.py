"""games.jsonl: each model move's chat stored as what it adds to the side's previous chat, rebuilt whole on
reading; files written before (whole chats per move) still read and resume."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from bargain.agents.agent import Side
from bargain.agents.backends import Backends
from bargain.agents.backends.canned import CannedBackend
from bargain.agents.factory import agent_factory
from bargain.engine import scenarios
from bargain.runs.batch import RunSetup, game_record, run
from bargain.runs.gamelog import pack_records, read_games, unpack_records

GRID = scenarios.GridSpec(tier="low", start=1508, stop=1510, trials_per_cell=2, max_rounds=4)


def play(out, trials=None):
    """LLM agents on both sides over the instant canned backend, into run directory `out`."""
    setup = RunSetup(grid=GRID, seed=42, buyer="arm:buyer-grpo", seller="arm:base", scenarios="bundled")
    trials = trials if trials is not None else scenarios.make_trials(GRID, scenarios.bundled(), 42)
    backends = Backends(CannedBackend())
    buyer, seller = agent_factory(setup.buyer, backends, Side()), agent_factory(setup.seller, backends, Side())
    played = []

    def agents_for(trial):
        played.append(trial.trial_id)
        return buyer(trial.trial_id), seller(trial.trial_id)

    run(setup, trials, agents_for, out, concurrency=4, progress=False)
    return setup, played


def old_layout(record: dict, records: list[dict]) -> str:
    """A line as files were written before packing: every record with its whole chat."""
    return json.dumps({**record, "records": records}, ensure_ascii=False) + "\n"


def test_records_read_back_whole_and_the_file_holds_each_prompt_once(tmp_path):
    setup, _ = play(tmp_path)
    games = list(read_games(tmp_path / "games.jsonl"))
    assert len(games) == 16 and all(g.finished and len(g.records) == 8 for g in games)
    for game in games:
        for role in ("buyer", "seller"):
            chats = [r["messages"] for r in game.records if r["role"] == role]
            assert [len(c) for c in chats] == [1, 3, 5, 7]  # the whole chat of each move: prompt, then reply + user
            assert all(later[: len(earlier)] == earlier for earlier, later in zip(chats, chats[1:]))
            assert chats[0][0]["content"].startswith(f"You are the {role.upper()}")
    stored = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert all("messages" not in r and r["new_messages"] for line in stored for r in line["records"])
    assert [r["messages_kept"] for r in stored[0]["records"]] == [0, 1, 3, 5] * 2
    for line, game in zip((tmp_path / "games.jsonl").read_text().splitlines(), games):
        for role in ("buyer", "seller"):
            prompt = json.dumps(
                next(r for r in game.records if r["role"] == role)["messages"][0]["content"], ensure_ascii=False
            )[1:-1]
            assert line.count(prompt) == 1  # the system prompt, once per side, not once per move
    packed = len((tmp_path / "games.jsonl").read_bytes())
    whole = sum(len(old_layout(line, unpack_records(line["records"])).encode()) for line in stored)
    assert packed < 0.7 * whole


def test_files_written_before_packing_read_and_resume(tmp_path):
    setup, _ = play(tmp_path / "new")
    stored = [json.loads(line) for line in (tmp_path / "new" / "games.jsonl").read_text().splitlines()]
    expected = [unpack_records(line["records"]) for line in stored]
    old = tmp_path / "old"
    old.mkdir()
    (old / "config.json").write_text((tmp_path / "new" / "config.json").read_text())
    (old / "games.jsonl").write_text("".join(old_layout(line, records) for line, records in zip(stored[:10], expected)))
    assert [g.records for g in read_games(old / "games.jsonl")] == expected[:10]
    _, played = play(old)  # resumes: only the six games the old file lacks are played
    assert len(played) == 6 and set(played) == {line["trial_id"] for line in stored[10:]}
    games = list(read_games(old / "games.jsonl"))
    assert [g.trial.trial_id for g in games] == [line["trial_id"] for line in stored]
    assert [g.records for g in games][:10] == expected[:10]


MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=5)})


@given(st.lists(st.tuples(st.sampled_from(["buyer", "seller"]), st.lists(MESSAGE, max_size=6)), max_size=10))
def test_packing_any_records_reads_back_the_same(moves):
    """Whatever the chats (growing or not, both sides interleaved), unpacking gives every record back."""
    records = [{"role": role, "messages": chat, "raw": "x"} for role, chat in moves]
    packed = json.loads(json.dumps(pack_records(records)))
    assert unpack_records(packed) == records


def test_a_game_record_keeps_the_records_it_was_given(tmp_path):
    setup, _ = play(tmp_path)
    (game,) = [g for g in read_games(tmp_path / "games.jsonl")][:1]
    again = game_record(game, setup)
    assert unpack_records(again["records"]) == game.records
