"""The schema under Alembic (bargain.records.migrations): a new database, the adoption of one versioned by hand
(versions 1 to 4) with every row kept, processes upgrading one database at the same time, revisions after head,
rescoring the claim findings, and the `db` and `rescore` commands. On SQLite, and on PostgreSQL when
BARGAIN_TEST_POSTGRES_URL names a scratch database."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from cli_runner import run_main
from databases import POSTGRES, back_to_hand_version, emptied
from sqlalchemy import MetaData, create_engine, select, text

from bargain import cli
from bargain.records import migrations
from bargain.records.migrations import legacy
from bargain.records.store import Base, Store, StoreError
from bargain.study import records

HEAD = migrations.head()
TRIAL = {"trial_id": 1, "scenario": {"tier": "low", "index": 3}, "condition": "full"}
on_postgres = pytest.mark.skipif(not POSTGRES, reason="set BARGAIN_TEST_POSTGRES_URL to run against PostgreSQL")
BOTH = ["sqlite", pytest.param("postgresql", marks=on_postgres)]


@pytest.fixture
def url(request, tmp_path) -> str:
    """An empty database of the kind the test is parametrised with (SQLite by default)."""
    kind = getattr(request, "param", "sqlite")
    return emptied(POSTGRES) if kind == "postgresql" else f"sqlite:///{tmp_path / 'arena.db'}"


def game(game_id: str, **fields) -> dict:
    return {
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
        **fields,
    }


def move(round_: int, role: str, actor: str, price: float | None = 6.0, message: str = "", **fields) -> dict:
    return {
        "round": round_,
        "role": role,
        "actor": actor,
        "action": "OFFER",
        "price": price,
        "message": message,
        **fields,
    }


def played(url: str) -> Store:
    """A database with a row in every table, written by today's store: two finished games (one with findings), a
    game abandoned when idle, a browser's game going on, a study with a participant, their answers and their game."""
    store = Store(url)
    store.create_game(**game("g_fin", player="alice"))
    store.add_moves(
        "g_fin",
        [
            move(1, "buyer", "human", 6.5, "my budget is 3", prompt_tokens=3),
            move(1, "seller", "agent", 9.0, "hmm", raw="{}", latency_s=0.25),
        ],
        {
            "deal": False,
            "rounds": 1,
            "paper_rounds": 4,
            "buyer_utility": 0.0,
            "claims": [{"kind": "x"}],
            "agent_misstated": True,
        },
        based_on=0,
    )
    store.create_game(**game("g_two", player="alice"))
    store.finish_game("g_two", {"deal": False, "rounds": 2})
    store.create_game(**game("g_idle", player="bob"))
    store.abandon_idle(timedelta(0))
    store.create_game(**game("g_on", player="alice", extra={"note": "é"}))
    store.add_moves("g_on", [move(1, "buyer", "human", endpoint="http://a", flags=["mentions_ai"])])
    records.register(store, "s", 1, "h" * 64, {"name": "s"}, {"a/full/buyer": 5})
    person = records.arrive(store, "s", 1, "h" * 64, "P1", {"STUDY_ID": "x"}, browser="b1")
    records.assign(store, "s", 1, person["id"], 1, within=False)
    store.create_game(**game("s1", study="s", participant="P1", game_index=1))
    records.record_game(store, person["id"], 1, "s1")
    records.move_to(store, person["id"], "game", "consent", [records.Answers("comprehension", 0, {"q1": ("b", True)})])
    store.engine.dispose()
    return store


def rows(url: str) -> dict[str, dict[tuple, dict]]:
    """Every row of every table but Alembic's, by table and primary key."""
    engine = create_engine(url)
    tables = MetaData()
    tables.reflect(engine)
    with engine.connect() as connection:
        found = {
            name: {
                tuple(row[c.name] for c in table.primary_key.columns): dict(row)
                for row in connection.execute(select(table)).mappings()
            }
            for name, table in tables.tables.items()
            if name != "alembic_version"
        }
    engine.dispose()
    return found


def schema_differences(url: str) -> list:
    """What differs between the database's schema and the program's models (nothing, at head)."""
    engine = create_engine(url)
    with engine.connect() as connection:
        found = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [HEAD]
    engine.dispose()
    return found


# --- a new database ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", BOTH, indirect=True)
def test_a_new_database_gets_every_table_at_head_as_the_models_describe_them(url):
    store = Store(url)
    assert store.upgraded == (None, HEAD) and store.revision() == HEAD
    assert schema_differences(url) == []  # arena and study tables alike, made by the revisions
    assert {"studies", "study_cells", "study_participants", "study_answers", "rescores"} <= set(rows(url))
    assert rows(url)["bargain_meta"] == {("schema_version",): {"key": "schema_version", "value": "5"}}
    assert Store(url).upgraded == (HEAD, HEAD)  # the next opening has nothing to do


def from_a_newer_program(url: str) -> str:
    """`url`, a database at a revision this program does not know, as a newer bargain would leave it."""
    Store(url).engine.dispose()
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    engine.dispose()
    return url


def test_a_database_from_a_newer_program_is_refused_with_upgrade_advice(url):
    from_a_newer_program(url)
    with pytest.raises(StoreError, match=r"schema revision 0099, which this program does not know .*: upgrade bargain"):
        Store(url)


# --- databases versioned by hand are adopted, every row kept ------------------------------------------------------


NEW_COLUMN_DEFAULTS = {"generation": 0, "duplicate": False}  # what a column added by a hand version holds


@pytest.mark.parametrize("url", BOTH, indirect=True)
@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_database_of_each_hand_version_is_adopted_with_every_row_kept(url, version):
    played(url)
    back_to_hand_version(url, version)
    engine = create_engine(url)
    with engine.begin() as connection:
        if version < 4:  # data from before the constraints: a round stored twice, a browser with two games going on
            flags = ("", "") if version < 2 else (", flags", ", '[]'")
            connection.execute(
                text(
                    f"INSERT INTO moves (game_id, seq, round, role, actor, action, price, message, "
                    f"thought, created_at{flags[0]}) VALUES ('g_on', 1, 1, 'buyer', 'human', 'OFFER', "
                    f"6.5, 'again', '', '2026-01-01'{flags[1]})"
                )
            )
            connection.execute(text("UPDATE games SET status = 'active' WHERE id = 'g_two'"))
        if version < 2:
            connection.execute(text("UPDATE games SET rounds = 4 WHERE id = 'g_fin'"))  # version 1: the paper's
    engine.dispose()
    before = rows(url)
    assert "alembic_version" not in before and "claims_checker" not in before["games"][("g_fin",)]

    adopted = Store(url)
    assert adopted.upgraded == (None, HEAD)
    after = rows(url)
    twice = [key for key, row in after["moves"].items() if row["message"] == "again"]
    changed = {("bargain_meta", ("schema_version",), "value"): "5"}
    if version < 4:  # the second move is flagged, the study's game gets its index, alice's older game is abandoned
        changed |= {
            ("moves", twice[0], "duplicate"): True,
            ("games", ("g_two",), "status"): "abandoned",
            ("games", ("g_two",), "abandoned_by"): "person",
            ("games", ("s1",), "game_index"): 1,
        }
    if version < 2:  # who abandoned, the round the game ended in and the paper's rounds; no findings are made
        changed |= {
            ("games", ("g_idle",), "abandoned_by"): "idle",
            ("games", ("g_fin",), "rounds"): 1,
            ("games", ("g_fin",), "paper_rounds"): 4,
        }
    added = {"rescores", "seats", "limit_events", "limit_failures"}  # the tables of revisions after 0001: empty
    assert set(after) == set(before) | added and all(after[table] == {} for table in added)
    for table, kept in before.items():
        assert set(after[table]) == set(kept), table  # not a row lost, none added
        for key, row in after[table].items():
            for column, value in row.items():
                expected = changed.get((table, key, column), kept[key].get(column, NEW_COLUMN_DEFAULTS.get(column)))
                assert value == expected, (table, key, column)
    differences = [(kind, table, column) for ((kind, _, table, column, *_),) in schema_differences(url)]
    # as under the program of hand version 4: version 2's columns came nullable (old rows hold none)
    assert differences == (
        [("modify_nullable", "games", "generation"), ("modify_nullable", "moves", "flags")] if version == 1 else []
    )
    game_on = adopted.game("g_on")
    assert [(m["message"], m["endpoint"]) for m in game_on["moves"]] == [("", "http://a" if version >= 3 else None)]
    adopted.add_moves("g_on", [move(1, "seller", "agent")], based_on=1)  # it plays on from its counted moves


@pytest.mark.parametrize("url", BOTH, indirect=True)
def test_a_database_from_before_any_study_gets_the_study_tables_and_its_missing_study_columns(url):
    """Study tables were made outside the versions: a database may lack them, or lack columns they gained (a
    study's pseudonym salt, retention's flag, the browser token)."""
    played(url)
    back_to_hand_version(url, 4)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("DROP INDEX ix_study_participants_browser"))
        for table, column in (
            ("studies", "salt"),
            ("study_participants", "forgotten"),
            ("study_participants", "browser"),
        ):
            connection.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))
    engine.dispose()
    adopted = Store(url)
    assert schema_differences(url) == []
    people = records.participants(adopted, "s", [1])
    assert [(p["participant"], p["forgotten"], p["browser"]) for p in people] == [("P1", False, None)]
    assert len(records.study_salt(adopted, "s", 1)) == 32
    assert records.forget_identifiers(adopted, "s", 1, days=-1) == 1

    adopted.engine.dispose()
    fresh = emptied(url) if url.startswith("postgresql") else url.replace("arena.db", "fresh.db")
    Store(fresh).engine.dispose()
    back_to_hand_version(fresh, 2)
    engine = create_engine(fresh)
    with engine.begin() as connection:
        for table in ("study_answers", "study_participants", "study_cells", "studies"):
            connection.execute(text(f"DROP TABLE {table}"))
    engine.dispose()
    store = Store(fresh)
    assert schema_differences(fresh) == []
    records.register(store, "s", 1, "h" * 64, {}, {"a/full/buyer": 5})


def test_a_database_that_bargain_did_not_make_is_refused(url):
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE games (id INTEGER)"))
    engine.dispose()
    with pytest.raises(StoreError, match="games table but no bargain_meta"):
        Store(url)


def test_a_program_from_before_alembic_is_told_to_upgrade(url):
    """bargain_meta holds 5 from now on: the store of hand version 4 refused a database of a version above its own
    with "schema version 5, newer than this program's 4: upgrade bargain"."""
    Store(url).engine.dispose()
    assert rows(url)["bargain_meta"][("schema_version",)]["value"] == str(legacy.RETIRED) == "5"


def test_a_store_opening_a_new_file_another_process_holds_waits_for_it(tmp_path):
    """Turning a new file to WAL needs it alone, and SQLite refuses at once, busy timeout or not, while another
    process creates the schema in it: the store tries again as long as an upgrade may wait (under load, one of
    three processes opening a new file together gave up)."""
    import sqlite3

    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("CREATE TABLE held (x INTEGER)")
    release = threading.Timer(1.5, holder.execute, ["COMMIT"])
    release.start()
    began = time.monotonic()
    store = Store(f"sqlite:///{path}", busy_timeout_s=0.3)  # a write's wait, far shorter than the hold
    release.join()
    assert time.monotonic() - began >= 1.0 and store.upgraded[1] == migrations.head()
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    store.engine.dispose()
    holder.close()


# --- processes starting together upgrade a database once -----------------------------------------------------------

OPEN_AT = """import sys, time
from bargain.records.store import Store
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
print(Store(sys.argv[1]).upgraded)
"""


def open_together(url: str, processes: int = 3) -> list[str]:
    """What each of `processes` app processes opening `url` at the same instant says of its upgrade."""
    at = time.time() + 3.0  # after every process has loaded the program
    running = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_AT, url, str(at)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        for _ in range(processes)
    ]
    answers = [process.communicate(timeout=120) for process in running]
    assert [(process.returncode, err) for process, (_, err) in zip(running, answers)] == [(0, "")] * processes
    return sorted(out.strip() for out, _ in answers)


@pytest.mark.slow
@pytest.mark.parametrize("url", BOTH, indirect=True)
def test_processes_starting_together_on_an_empty_database_create_it_once(url):
    assert open_together(url) == [f"('{HEAD}', '{HEAD}')"] * 2 + [f"(None, '{HEAD}')"]
    assert schema_differences(url) == []


@pytest.mark.slow
@pytest.mark.parametrize("url", BOTH, indirect=True)
def test_processes_starting_together_on_an_old_database_adopt_it_once(url):
    played(url)
    back_to_hand_version(url, 1)
    before = rows(url)
    assert open_together(url) == [f"('{HEAD}', '{HEAD}')"] * 2 + [f"(None, '{HEAD}')"]
    assert len(schema_differences(url)) == 2  # version 2's nullable columns, as in the test above
    after = rows(url)
    assert all(set(after[table]) == set(kept) for table, kept in before.items())


# --- revisions after head -----------------------------------------------------------------------------------------

NEXT = """import sqlalchemy as sa
from alembic import op

revision = "9001"
down_revision = "{head}"


def upgrade() -> None:
    op.add_column("games", sa.Column("note", sa.String(40)))
    op.execute("{then}")
"""


@pytest.fixture
def scripts(tmp_path, monkeypatch) -> Path:
    """A copy of the revisions in which the tests may add one; the program runs the copy."""
    copy = tmp_path / "migrations"
    shutil.copytree(migrations.SCRIPTS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(migrations, "SCRIPTS", copy)
    return copy


def test_a_new_revision_runs_once_and_a_failing_one_changes_nothing(url, scripts):
    Store(url).create_game(**game("g1"))
    revision = scripts / "versions" / "9001_note.py"
    revision.write_text(NEXT.format(head=HEAD, then="SELECT * FROM no_such_table"))
    with pytest.raises(StoreError, match="no_such_table"):
        Store(url)
    assert "note" not in rows(url)["games"][("g1",)]
    revision.write_text(NEXT.format(head=HEAD, then="UPDATE games SET note = 'seen'"))
    upgraded = Store(url)
    assert upgraded.upgraded == (HEAD, "9001") and rows(url)["games"][("g1",)]["note"] == "seen"
    assert Store(url).upgraded == ("9001", "9001")  # not again (adding the column twice would fail)


# --- rescoring the claim findings ----------------------------------------------------------------------------------


def test_rescore_remakes_findings_that_no_known_checker_made_and_records_it(url):
    from bargain.analysis.claims import CHECKER_VERSION

    played(url)
    back_to_hand_version(url, 1)  # version 1 had no findings, and the adoption makes none
    store = Store(url)
    assert store.game("g_fin")["claims"] is None and store.unscored() == 2
    assert store.rescore() == 2
    scored = store.game("g_fin")
    assert scored["claims_checker"] == CHECKER_VERSION and scored["agent_misstated"] is False
    assert [(c["role"], c["kind"], c["said"]) for c in scored["claims"]] == [("buyer", "own_limit", 3.0)]
    assert store.game("g_two")["claims"] == [] and store.game("g_on")["claims"] is None  # finished games only
    assert store.unscored() == 0 and store.rescore() == 0  # made by this checker already
    assert store.rescore(every=True) == 2
    done = rows(url)["rescores"]
    assert [(done[key]["checker"], done[key]["games"]) for key in sorted(done)] == [
        (CHECKER_VERSION, 2),
        (CHECKER_VERSION, 0),
        (CHECKER_VERSION, 2),
    ]


@pytest.mark.parametrize("url", BOTH, indirect=True)
def test_two_rescores_at_once_score_each_game_once(url, monkeypatch):
    """Two `bargain rescore` at the same moment (two stores, as two processes would have): the first holds its
    transaction open, scoring, while the second starts; between them each game is scored once and counted once."""
    from bargain.records import store as store_module

    played(url)
    back_to_hand_version(url, 1)
    first, second = Store(url), Store(url)
    assert first.unscored() == 2
    counted: dict[str, int] = {}
    findings = store_module.game_findings

    def rescore_second() -> None:
        counted["second"] = second.rescore()

    other = threading.Thread(target=rescore_second)

    def slow_findings(game: dict, moves: list) -> dict:
        if other.ident is None:  # not started yet: this is the first rescore's first game
            other.start()  # the second rescore begins while the first is scoring
            time.sleep(1.0)  # time enough for it to read the games, were it not made to wait for the first
        return findings(game, moves)

    monkeypatch.setattr(store_module, "game_findings", slow_findings)
    counted["first"] = first.rescore()
    other.join(timeout=60)
    assert counted == {"first": 2, "second": 0}
    assert sorted(row["games"] for row in rows(url)["rescores"].values()) == [0, 2]
    assert first.unscored() == 0


# --- the commands -------------------------------------------------------------------------------------------------


def test_db_current_and_upgrade_and_rescore_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "old.db"
    played(f"sqlite:///{path}")
    back_to_hand_version(f"sqlite:///{path}", 3)
    assert cli.main(["db", "current", "--db", str(path)]) == 0
    assert "schema version 3, versioned by hand before Alembic" in capsys.readouterr().out
    assert cli.main(["db", "upgrade", "--db", str(path)]) == 0
    assert capsys.readouterr().out == f"schema revision {HEAD}: created, or adopted from the schema versioned by hand\n"
    assert cli.main(["db", "upgrade", "--db", str(path)]) == 0
    assert capsys.readouterr().out == f"schema revision {HEAD}: already this program's\n"
    assert cli.main(["db", "current", "--db", str(path)]) == 0
    assert capsys.readouterr().out.endswith(f": schema revision {HEAD} (head, this program's)\n")
    assert cli.main(["rescore", "--db", str(path)]) == 0
    assert capsys.readouterr().out == "2 finished games scored by claim checker version 1\n"
    assert cli.main(["db", "current", "--db", str(tmp_path / "missing.db")]) == 2
    assert "there is no database file" in capsys.readouterr().err
    assert not (tmp_path / "missing.db").exists()


def test_every_database_command_tells_to_upgrade_bargain_for_a_database_from_a_newer_program(tmp_path):
    """`db current` included: it read the revision and advised `db upgrade`, which cannot help."""
    path = tmp_path / "newer.db"
    from_a_newer_program(f"sqlite:///{path}")
    for command in (["db", "current"], ["db", "upgrade"], ["rescore"]):
        result = run_main(cli.main, *command, "--db", str(path))
        assert (result.returncode, result.stdout) == (2, ""), command
        assert result.stderr.endswith(
            "schema revision 0099, which this program does not know (a newer bargain made it): upgrade bargain\n"
        ), command
        assert "db upgrade" not in result.stderr


def test_the_database_page_names_the_newest_revision_and_the_next():
    """docs/database.md says which revision is the newest and which number a new one takes: from the code's head,
    so that a revision added without the page is caught here."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "database.md").read_text(encoding="utf-8")
    head = migrations.head()
    assert re.findall(r"The newest revision is `(\d{4})`", text) == [head]
    assert re.findall(r"--rev-id (\d{4})", text) == [f"{int(head) + 1:04d}"]
