"""games.jsonl, a run's log of games: one JSON line per game, written as each game ends.

A line holds the game's set-up, its move log (`GameState.from_dict` rebuilds the state) and the
model agents' per-move records. A record stores the chat sent for its move as the messages it adds
to the same side's previous chat (`messages_kept` of those, then `new_messages`), so a game's long
first prompt is written once, not once per move; `read_games` gives every record its whole
`messages` again, and reads files written before (records holding their whole `messages`).
Lines are encoded with orjson, a few times faster than the json module, to the same JSON.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from bargain.engine.game import GameState
from bargain.runs.episodes import Episode


def encode(record: dict) -> bytes:
    """One line of games.jsonl."""
    return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)


def _kept(before: list[dict], chat: list[dict]) -> int:
    """How many messages `chat` starts with that `before` had (an agent's chat grows by appending)."""
    kept, most = 0, min(len(before), len(chat))
    while kept < most and (before[kept] is chat[kept] or before[kept] == chat[kept]):
        kept += 1
    return kept


def pack_records(records: list[dict]) -> list[dict]:
    """The records as stored: each move's `messages` as `messages_kept` (how many of the same side's previous
    move's messages it starts with) and `new_messages` (the rest)."""
    previous: dict[str, list[dict]] = {}
    packed = []
    for record in records:
        chat = record["messages"]
        kept = _kept(previous.get(record["role"], []), chat)
        previous[record["role"]] = chat
        row = record.copy()
        del row["messages"]
        row["messages_kept"], row["new_messages"] = kept, chat[kept:]
        packed.append(row)
    return packed


def unpack_records(records: list[dict]) -> list[dict]:
    """Inverse of `pack_records`; records that hold their whole `messages` (files written before packing) as
    they are."""
    previous: dict[str, list[dict]] = {}
    unpacked = []
    for record in records:
        if "messages" not in record:
            record = {key: value for key, value in record.items() if key not in ("messages_kept", "new_messages")} | {
                "messages": previous.get(record["role"], [])[: record["messages_kept"]] + record["new_messages"]
            }
        previous[record["role"]] = record["messages"]
        unpacked.append(record)
    return unpacked


def _episode(record: dict) -> Episode:
    state = GameState.from_dict(record)
    return Episode(
        state.trial,
        state,
        record["buyer_agent"],
        record["seller_agent"],
        record["error"],
        unpack_records(record.get("records", [])),
    )


def read_games(path: Path) -> Iterator[Episode]:
    """The games of a games.jsonl in file order. A line cut short by an interruption is skipped, with a word: a
    resumed run plays its game again, and a merge counts it missing."""
    with open(path, "rb") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                yield _episode(orjson.loads(line))
            except (ValueError, KeyError) as exc:
                print(f"skipping an unreadable line of {path}: {exc}")
