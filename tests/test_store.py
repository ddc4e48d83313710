"""The arena's records (bargain.records.store): schema, games and moves, idle games, exports."""

import json
from datetime import timedelta

import pandas as pd
import pytest
from databases import back_to_hand_version
from sqlalchemy import inspect, text, update
from sqlalchemy.orm import Session

import bargain.records.store as store_module
from bargain.records import migrations
from bargain.records.store import GameRow, MoveRow, Store, StoreError, default_url, utcnow

TRIAL = {"trial_id": 1, "scenario": {"tier": "low", "index": 3, "product_name": "mug"}, "condition": "full"}


def url_in(tmp_path, name="arena.db"):
    return f"sqlite:///{tmp_path / name}"


def game_fields(game_id, **overrides):
    fields = {
        "id": game_id,
        "player": None,
        "human_role": "buyer",
        "arm": "tactic:linear",
        "scenario": "low:3",
        "seed": 7,
        "condition": "full",
        "mode": "simultaneous",
        "max_rounds": 4,
        "first_actor": "buyer",
        "buyer_price": 7.25,
        "seller_price": 5.5,
        "trial": TRIAL,
        "prompt_version": "train",
        "parsing": "strict",
        "sampling": {"temperature": 0.7},
        "backend": {"backend": "hf"},
        "ood_reasons": ["trained with 4 rounds"],
    }
    fields.update(overrides)
    return fields


def move(round_, role, actor, action="OFFER", price=6.0, message="", **extra):
    return {
        "round": round_,
        "role": role,
        "actor": actor,
        "action": action,
        "price": price,
        "message": message,
        **extra,
    }


# --- schema ------------------------------------------------------------------------------------------------------
# (its revisions, the adoption of databases versioned by hand, and concurrent upgrades: tests/test_migrations.py)


def test_a_new_database_gets_every_table_and_the_current_schema_revision(tmp_path):
    store = Store(url_in(tmp_path))
    inspector = inspect(store.engine)
    assert {"bargain_meta", "alembic_version", "games", "moves", "studies"} <= set(inspector.get_table_names())
    assert {c["name"] for c in inspector.get_columns("games")} == set(GameRow.__table__.columns.keys())
    assert {c["name"] for c in inspector.get_columns("moves")} == set(MoveRow.__table__.columns.keys())
    assert store.revision() == migrations.head()
    assert (tmp_path / "arena.db").is_file()


def test_the_directory_of_a_sqlite_file_is_created(tmp_path):
    store = Store(url_in(tmp_path / "deep" / "er", "x.db"))
    assert store.revision() == migrations.head()
    assert (tmp_path / "deep" / "er" / "x.db").is_file()


def test_opening_again_keeps_data_and_revision(tmp_path):
    url = url_in(tmp_path)
    first = Store(url)
    first.create_game(**game_fields("g1"))
    first.add_moves("g1", [move(1, "buyer", "human", message="hello")])
    first.engine.dispose()
    again = Store(url)
    assert again.upgraded == (migrations.head(), migrations.head())
    game = again.game("g1")
    assert game["trial"] == TRIAL and [m["message"] for m in game["moves"]] == ["hello"]
    assert len(again.games_frame()) == 1


# --- games and moves ---------------------------------------------------------------------------


def test_moves_come_back_in_order_across_several_calls(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1"))
    store.create_game(**game_fields("g2", player="bob"))
    batches = [
        [move(1, "buyer", "human", price=5.0, message="a"), move(1, "seller", "agent", price=9.0, message="b")],
        [move(2, "buyer", "human", price=5.5, message="c")],
        [
            move(
                2,
                "seller",
                "agent",
                action="INVALID",
                price=None,
                message="d",
                raw="junk",
                error="no json",
                prompt_messages=[{"role": "user", "content": "hi"}],
                latency_s=0.25,
                prompt_tokens=12,
                completion_tokens=3,
                thought="hmm",
            )
        ],
    ]
    for batch in batches:
        store.add_moves("g1", batch)
    store.add_moves("g2", [move(1, "buyer", "human", message="other game")])
    game = store.game("g1")
    moves = game["moves"]
    assert [m["seq"] for m in moves] == [0, 1, 2, 3]
    assert [m["message"] for m in moves] == ["a", "b", "c", "d"]
    assert [(m["round"], m["role"], m["actor"], m["action"], m["price"]) for m in moves] == [
        (1, "buyer", "human", "OFFER", 5.0),
        (1, "seller", "agent", "OFFER", 9.0),
        (2, "buyer", "human", "OFFER", 5.5),
        (2, "seller", "agent", "INVALID", None),
    ]
    last = moves[-1]
    assert (last["raw"], last["error"], last["thought"], last["latency_s"]) == ("junk", "no json", "hmm", 0.25)
    assert last["prompt_messages"] == [{"role": "user", "content": "hi"}]
    assert (last["prompt_tokens"], last["completion_tokens"]) == (12, 3)
    assert moves[0]["thought"] == "" and moves[0]["raw"] is None
    assert all(m["game_id"] == "g1" for m in moves)
    assert [m["seq"] for m in store.game("g2")["moves"]] == [0]
    assert game["status"] == "active" and game["finished_at"] is None and game["deal"] is None
    assert game["sampling"] == {"temperature": 0.7} and game["ood_reasons"] == ["trained with 4 rounds"]
    assert game["extra"] == {} and game["updated_at"] >= game["created_at"]


def test_an_unknown_game_has_no_record_and_takes_no_moves(tmp_path):
    store = Store(url_in(tmp_path))
    assert store.game("nope") is None
    with pytest.raises(StoreError, match="no game"):
        store.add_moves("nope", [move(1, "buyer", "human")])
    assert store.moves_frame().empty


def test_adding_moves_touches_the_game(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1"))
    age(store, "g1", timedelta(hours=5))
    before = store.game("g1")["updated_at"]
    store.add_moves("g1", [move(1, "buyer", "human")])
    assert store.game("g1")["updated_at"] > before + timedelta(hours=4)


def test_finish_game_records_the_outcome(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1"))
    outcome = {
        "deal": True,
        "deal_price": 6.375,
        "rounds": 2,
        "buyer_utility": 0.875,
        "seller_utility": 0.875,
        "buyer_norm_utility": 0.5,
        "seller_norm_utility": 0.5,
    }
    store.finish_game("g1", outcome)
    game = store.game("g1")
    assert game["status"] == "finished" and game["finished_at"] is not None
    assert game["finished_at"] >= game["created_at"] and game["updated_at"] == game["finished_at"]
    assert {key: game[key] for key in outcome} == outcome


def age(store, game_id, by):
    with Session(store.engine) as session, session.begin():
        session.execute(update(GameRow).where(GameRow.id == game_id).values(updated_at=utcnow() - by))


def test_abandon_idle_marks_only_old_active_games(tmp_path):
    store = Store(url_in(tmp_path))
    for game_id in ("old", "fresh", "old-finished"):
        store.create_game(**game_fields(game_id))
    store.finish_game("old-finished", {"deal": False, "rounds": 4})
    age(store, "old", timedelta(hours=3))
    age(store, "old-finished", timedelta(hours=3))
    assert store.abandon_idle(timedelta(hours=2)) == ["old"]
    assert {g: store.game(g)["status"] for g in ("old", "fresh", "old-finished")} == {
        "old": "abandoned",
        "fresh": "active",
        "old-finished": "finished",
    }
    assert store.abandon_idle(timedelta(hours=2)) == []  # already abandoned: not again
    assert store.abandon_idle(timedelta(0)) == ["fresh"]
    assert store.game("fresh")["status"] == "abandoned"


def test_games_frame_filters_by_player_and_moves_frame_holds_every_move(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("a1", player="alice"))
    store.create_game(**game_fields("b1", player="bob"))
    store.create_game(**game_fields("a2", player="alice", status="finished"))  # one going on per browser
    store.create_game(**game_fields("n1", player=None))
    store.add_moves("b1", [move(1, "buyer", "human", message="b-0"), move(1, "seller", "agent", message="b-1")])
    store.add_moves("a1", [move(1, "buyer", "human", message="a-0")])
    store.add_moves("b1", [move(2, "buyer", "human", message="b-2")])
    assert list(store.games_frame()["id"]) == ["a1", "b1", "a2", "n1"]
    assert list(store.games_frame("alice")["id"]) == ["a1", "a2"]
    assert list(store.games_frame("bob")["id"]) == ["b1"]
    assert store.games_frame("carol").empty
    moves = store.moves_frame()
    assert list(zip(moves["game_id"], moves["seq"], moves["message"])) == [
        ("a1", 0, "a-0"),
        ("b1", 0, "b-0"),
        ("b1", 1, "b-1"),
        ("b1", 2, "b-2"),
    ]


JSON_GAME_COLUMNS = ("trial", "sampling", "backend", "ood_reasons", "extra")


def test_export_writes_csv_and_parquet_that_read_back_the_same(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1"))
    store.create_game(
        **game_fields("g2", player="bob", sampling=None, backend=None, ood_reasons=[], arm="tactic:hardliner")
    )
    store.add_moves(
        "g1",
        [
            move(1, "buyer", "human", message="hello, 'quoted' \"text\""),
            move(
                1,
                "seller",
                "agent",
                action="INVALID",
                price=None,
                raw="raw\nreply",
                prompt_messages=[{"role": "user", "content": "a,b\nc"}],
                latency_s=0.5,
                prompt_tokens=10,
                completion_tokens=2,
            ),
        ],
    )
    store.add_moves("g2", [move(1, "buyer", "human", price=2.5)])
    store.finish_game(
        "g1",
        {
            "deal": True,
            "deal_price": 6.25,
            "rounds": 1,
            "buyer_utility": 1.0,
            "seller_utility": 0.75,
            "buyer_norm_utility": 0.571,
            "seller_norm_utility": 0.429,
        },
    )

    out = tmp_path / "export"
    written = store.export(out)
    assert sorted(p.name for p in written) == [
        "games.csv",
        "games.parquet",
        "moves.csv",
        "moves.parquet",
        "seats.csv",
        "seats.parquet",
    ]
    assert all(p.parent == out and p.is_file() for p in written)

    games, moves = store.games_frame(), store.moves_frame()
    for name, frame, json_columns in (("games", games, JSON_GAME_COLUMNS), ("moves", moves, ("prompt_messages",))):
        for reader in (pd.read_csv, pd.read_parquet):
            back = reader(out / f"{name}.{'csv' if reader is pd.read_csv else 'parquet'}")
            assert list(back.columns) == list(frame.columns)
            assert len(back) == len(frame)
            assert list(back["id"].astype(str)) == list(frame["id"].astype(str))
            for column in json_columns:  # JSON columns are JSON text
                for original, exported in zip(frame[column], back[column]):
                    if original is None:
                        assert pd.isna(exported)
                    else:
                        assert isinstance(exported, str) and json.loads(exported) == original
            for column in frame.columns:
                if column in json_columns or column.endswith("_at"):
                    continue
                for original, exported in zip(frame[column], back[column]):
                    if original is None or (isinstance(original, float) and pd.isna(original)):
                        assert pd.isna(exported), (name, column)
                    elif original == "" and reader is pd.read_csv:  # CSV cannot tell "" from a missing value
                        assert pd.isna(exported) or exported == "", (name, column)
                    elif isinstance(original, (int, float)) and not isinstance(original, bool):
                        assert float(exported) == pytest.approx(float(original)), (name, column)
                    else:
                        assert str(exported) == str(original), (name, column)
            assert list(pd.to_datetime(back["created_at"])) == list(pd.to_datetime(frame["created_at"]))


def test_export_of_an_empty_store(tmp_path):
    written = Store(url_in(tmp_path)).export(tmp_path / "out")
    assert sorted(p.name for p in written) == [
        "games.csv",
        "games.parquet",
        "moves.csv",
        "moves.parquet",
        "seats.csv",
        "seats.parquet",
    ]


# --- default_url -------------------------------------------------------------------------------


def test_default_url_is_a_sqlite_file_inside_the_directory(tmp_path):
    url = default_url(tmp_path / "data")
    assert url == f"sqlite:///{(tmp_path / 'data').resolve() / 'bargain.db'}"
    store = Store(url)
    store.create_game(**game_fields("g1"))
    assert (tmp_path / "data" / "bargain.db").is_file()


def test_default_url_resolves_a_relative_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_url("rel") == f"sqlite:///{tmp_path.resolve() / 'rel' / 'bargain.db'}"
    assert default_url().startswith("sqlite:///") and default_url().endswith("/data/bargain.db")


def test_csv_exports_show_no_float_noise_and_parquet_stays_exact(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1"))
    noisy = 2.3200000000000003
    store.finish_game("g1", {"deal": True, "deal_price": noisy, "rounds": 1})
    store.export(tmp_path / "out")
    assert (
        "2.32," in (tmp_path / "out" / "games.csv").read_text()
        and "2.3200000000000003" not in (tmp_path / "out" / "games.csv").read_text()
    )
    assert pd.read_parquet(tmp_path / "out" / "games.parquet")["deal_price"].iloc[0] == noisy


def test_a_round_and_the_end_of_a_game_are_stored_together_or_not_at_all(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1"))
    with pytest.raises(StoreError):  # the second move breaks a constraint: nothing of the call is stored
        store.add_moves(
            "g1",
            [move(1, "buyer", "human"), {**move(1, "seller", "agent"), "role": None}],
            {"deal": False, "rounds": 1, "paper_rounds": 4},
        )
    game = store.game("g1")
    assert game["moves"] == [] and game["status"] == "active"
    store.add_moves("g1", [move(1, "buyer", "human")], {"deal": False, "rounds": 1, "paper_rounds": 4})
    game = store.game("g1")
    assert len(game["moves"]) == 1 and game["status"] == "finished" and (game["rounds"], game["paper_rounds"]) == (1, 4)


def test_a_read_only_database_is_found_before_any_write(tmp_path):
    Store(url_in(tmp_path)).engine.dispose()
    read_only = Store(f"sqlite:///file:{tmp_path / 'arena.db'}?mode=ro&uri=true")
    with pytest.raises(StoreError, match="readonly|read-only|read only"):
        read_only.check_writable()
    Store(url_in(tmp_path)).check_writable()  # a writable one passes, and nothing was written
    assert Store(url_in(tmp_path)).games_frame().empty


# --- games stay whole when requests race (several processes, requests sent twice) -----------------------------


def test_a_write_based_on_a_stale_state_is_refused(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1"))
    store.add_moves("g1", [move(1, "buyer", "human"), move(1, "seller", "agent")], based_on=0)
    with pytest.raises(store_module.StaleGame, match="holds 2 moves, not the 0"):  # a second process read 0 moves
        store.add_moves("g1", [move(1, "buyer", "human", price=9.0), move(1, "seller", "agent")], based_on=0)
    with pytest.raises(store_module.StaleGame, match="generation"):  # a pass timed out by a process not driving it
        store.add_moves("g1", [move(2, "buyer", "human", action="INVALID", price=None)], generation=7, based_on=2)
    store.finish_game("g1", {"deal": False, "rounds": 1})
    with pytest.raises(store_module.StaleGame, match="finished"):  # nothing lands on a game that has ended
        store.add_moves("g1", [move(2, "buyer", "human")], based_on=2)
    assert [(m["round"], m["role"], m["price"]) for m in store.game("g1")["moves"]] == [
        (1, "buyer", 6.0),
        (1, "seller", 6.0),
    ]


def test_the_database_itself_refuses_a_second_move_for_a_round_and_side(tmp_path):
    """Whatever a process believes, the constraint holds: at most one counted move per (game, round, role)."""
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1"))
    store.add_moves("g1", [move(1, "buyer", "human")])
    with pytest.raises(StoreError, match="UNIQUE"):
        store.add_moves("g1", [move(1, "buyer", "human", price=7.0)])  # no state named: only the constraint stops it
    store.add_moves("g1", [move(1, "seller", "agent")])
    assert len(store.game("g1")["moves"]) == 2


def test_a_browser_has_one_active_game_and_a_participant_one_game_per_index(tmp_path):
    store = Store(url_in(tmp_path))
    store.create_game(**game_fields("g1", player="alice"))
    with pytest.raises(store_module.AlreadyStarted) as started:
        store.create_game(**game_fields("g2", player="alice"))
    assert started.value.game_id == "g1" and store.game("g2") is None
    store.create_game(**game_fields("g3", player="alice"), replace_active=True)  # the person chose to leave g1
    assert (store.game("g1")["status"], store.game("g1")["abandoned_by"], store.game("g3")["status"]) == (
        "abandoned",
        "person",
        "active",
    )
    study = {"study": "s", "participant": "P1", "game_index": 1}
    store.create_game(**game_fields("s1", **study))
    with pytest.raises(store_module.AlreadyStarted) as started:
        store.create_game(**game_fields("s2", **study))
    assert started.value.game_id == "s1"
    store.create_game(**game_fields("s3", **{**study, "game_index": 2}))


def test_a_version_3_database_with_a_round_stored_twice_is_adopted_and_loads(tmp_path):
    """Data stored before the constraints: a round stored twice still loads (the first stored move of a round and
    side counts, the later one is flagged and exported as such), a participant's games get their index from their
    list, a browser's extra active games are abandoned, and the constraints hold from then on."""
    from bargain.engine.scenarios import bundled
    from bargain.engine.trial import Condition, Mode, Trial
    from bargain.study import records

    full = Trial(
        trial_id=1,
        scenario=bundled().get("low:3"),
        condition=Condition.FULL,
        buyer_price=7.25,
        seller_price=5.5,
        max_rounds=4,
        mode=Mode.SIMULTANEOUS,
    ).to_dict()
    url = url_in(tmp_path)
    store = Store(url)
    records.register(store, "s", 1, "h" * 64, {}, {"a/full/buyer": 5})
    person = records.arrive(store, "s", 1, "h" * 64, "P1", {})
    store.create_game(**game_fields("g0", player="alice", trial=full, status="finished"))  # an older game of alice's
    for game_id, player, participant in (("g1", "alice", None), ("g2", None, None), ("s1", None, "P1")):
        store.create_game(
            **game_fields(
                game_id, player=player, participant=participant, study="s" if participant else None, trial=full
            )
        )
    records.move_to(store, person["id"], "game", games=["s1"])
    store.add_moves(
        "g1", [move(1, "buyer", "human", price=6.0, message="first"), move(1, "seller", "agent", price=7.0)]
    )
    store.engine.dispose()
    back_to_hand_version(url, 3)  # no constraints, no flag, no index of games
    with store.engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO moves (game_id, seq, round, role, actor, action, price, message, thought, "
                "flags, created_at) VALUES ('g1', 2, 1, 'buyer', 'human', 'OFFER', 6.5, 'again', '', "
                "'[]', '2026-01-01')"
            )
        )
        connection.execute(text("UPDATE games SET status = 'active' WHERE id = 'g0'"))  # alice: two games going on
    store.engine.dispose()
    upgraded = Store(url)
    assert upgraded.upgraded == (None, migrations.head())
    game = upgraded.game("g1")
    assert [(m["round"], m["role"], m["message"]) for m in game["moves"]] == [(1, "buyer", "first"), (1, "seller", "")]
    assert store_module.game_state(game).round == 2  # it replays: the round as first stored
    moves = upgraded.moves_frame()
    assert list(zip(moves["message"], moves["duplicate"])) == [("first", False), ("", False), ("again", True)]
    assert upgraded.game("s1")["game_index"] == 1 and upgraded.game("g2")["game_index"] is None
    assert {g: upgraded.game(g)["status"] for g in ("g0", "g1")} == {"g0": "abandoned", "g1": "active"}
    with pytest.raises(StoreError, match="UNIQUE"):
        upgraded.add_moves("g1", [move(1, "buyer", "human", price=9.0)])
    with pytest.raises(store_module.AlreadyStarted):
        upgraded.create_game(**game_fields("g9", player="alice"))
    upgraded.add_moves("g1", [move(2, "buyer", "human")], based_on=2)  # the game goes on from its counted moves


def test_a_new_database_file_is_readable_by_its_owner_only(tmp_path):
    import stat

    store = Store(url_in(tmp_path / "new"))
    store.create_game(**game_fields("g1"))  # the journal files are written too
    for path in (tmp_path / "new").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
