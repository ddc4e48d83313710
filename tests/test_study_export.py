"""A study's export (bargain.study.export and `python -m bargain export`): every table in CSV and Parquet,
a codebook that covers every column, the bonus file as Prolific's bulk bonus box takes it, checked against
bonuses computed by hand, pseudonyms, and nothing with a platform id pushed to the Hub."""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest
from cli_runner import run_main
from huggingface_hub import HfApi
from huggingface_hub.hf_api import RepoUrl
from huggingface_hub.utils import filter_repo_objects
from test_study_flow import answers_for, make_study, runner_for

from bargain.cli import main
from bargain.engine.trial import Role
from bargain.records.publish import HubSync, PublishError, push_to_hub
from bargain.study import records
from bargain.study.config import Timing
from bargain.study.export import PAYMENT_DIR, PUBLISHED, TABLES, UNDESCRIBED, WITHHELD_TEXT, export_study
from bargain.study.survey import Builtin, builtin_item


async def take_part(runner, pid: str, *, finish: bool = True, move: bool = True, pass_check: bool = True) -> None:
    """One participant: consent, instructions, the check, then (when `move`) offers halfway between the two
    reservation prices, read from the store as the test's oracle, so that some games end in deals."""
    params = {"PROLIFIC_PID": pid, "STUDY_ID": "S1", "SESSION_ID": f"sess-{pid}"}
    await runner.submit(params, "consent", {"agree": True})
    await runner.submit(params, "instructions", {})
    page = await runner.submit(params, "comprehension", {"no_deal": "Nothing" if pass_check else "Everything"})
    if not pass_check:
        await runner.submit(params, "comprehension", {"no_deal": "Everything"})
        return
    while finish and page.stage in ("game", "game_survey"):
        if page.stage == "game_survey":
            page = await runner.submit(params, "game_survey", answers_for(page.items, attention="Rarely"))
            continue
        if not move:
            await asyncio.sleep(0.5)
            page = await runner.page(params)
            continue
        view = page.view
        game = runner.arena.store.game(view.game_id)
        price = (game["buyer_price"] + game["seller_price"]) / 2
        page = await runner.submit(
            params, "game", {"round": view.round, "action": "OFFER", "price": f"{price:.2f}", "message": "Fair?"}
        )
    if finish:
        await runner.submit(params, "final_survey", {"comments": '=HYPERLINK("http://x")'})
        await runner.submit(params, "debrief", {})


@pytest.fixture(scope="module")
def study_db(tmp_path_factory):
    """Five participants: two complete, one times out every move, one is screened out, one is still playing."""
    tmp_path = tmp_path_factory.mktemp("export")
    # A countdown short enough for LATE's four rounds to run out soon, long enough that the others' moves, made at
    # once, are never late on a busy machine.
    study = dataclasses.replace(make_study(tmp_path), timing=Timing(move_seconds=0.8, idle_minutes=20))

    async def scenario():
        runner = runner_for(tmp_path, study)
        await take_part(runner, "P1")
        await take_part(runner, "P2")
        await take_part(runner, "LATE", move=False)
        await take_part(runner, "OUT", pass_check=False)
        await take_part(runner, "MID", finish=False)
        await runner.submit({"PROLIFIC_PID": "NO"}, "consent", {"agree": False})
        return runner.arena.store

    return tmp_path, asyncio.run(scenario())


def hand_bonus(store, pid: str) -> float:
    """The example study's rule computed here: 1.5 per unit of normalised utility over the games without a
    timeout, capped at 2.00, never below zero."""
    row = records.participant(store, "flow-test", pid)
    total = 0.0
    for game_id in row["games"]:
        game = store.game(game_id)
        if not any(m["actor"] == "human" and m["error"] == "timeout" for m in game["moves"]):
            total += game["buyer_norm_utility"] or 0.0
    return round(max(0.0, min(1.5 * total, 2.0)), 2)


def test_the_bonus_file_is_prolifics_bulk_format_and_matches_bonuses_by_hand(study_db, tmp_path):
    _, store = study_db
    export_study(store, "flow-test", out_dir=tmp_path / "out")
    lines = (tmp_path / "out" / PAYMENT_DIR / "bonuses.csv").read_text().splitlines()
    expected = {pid: hand_bonus(store, pid) for pid in ("P1", "P2", "LATE")}
    assert expected["P1"] > 0 and expected["LATE"] == 0  # deals were made; timed-out games earn nothing
    assert lines == [f"{pid},{amount:.2f}" for pid, amount in expected.items() if amount > 0]  # no header
    payments = pd.read_csv(tmp_path / "out" / PAYMENT_DIR / "payments.csv")
    assert payments["participant_id"].tolist() == ["P1", "P2", "LATE"]  # the completed, with their real ids
    assert payments["bonus"].tolist() == list(expected.values())
    assert payments["total"].tolist() == [round(2.0 + b, 2) for b in expected.values()]
    assert set(payments["currency"]) == {"GBP"}


def test_every_table_is_written_and_the_codebook_covers_every_column(study_db, tmp_path):
    _, store = study_db
    written = export_study(store, "flow-test", out_dir=tmp_path / "out")
    out = tmp_path / "out"
    assert {p.name for p in written} >= {f"{t}{s}" for t in TABLES for s in (".csv", ".parquet")}
    codebook = pd.read_csv(out / "codebook.csv")
    assert UNDESCRIBED not in codebook["description"].tolist()
    for table in TABLES:
        parquet, text = pd.read_parquet(out / f"{table}.parquet"), pd.read_csv(out / f"{table}.csv")
        assert list(parquet.columns) == list(text.columns)
        assert set(codebook.loc[codebook["file"] == table, "column"]) == set(parquet.columns), table
    assert set(codebook.loc[codebook["file"] == "payments", "column"]) == set(
        pd.read_csv(out / PAYMENT_DIR / "payments.csv").columns
    )
    markdown = (out / "codebook.md").read_text()
    assert "## surveys_wide" in markdown and "g2_attention" in markdown and "Choose Rarely" in markdown

    people = pd.read_parquet(out / "participants.parquet")
    assert people["stage"].tolist() == ["completed", "completed", "completed", "screened_out", "game", "declined"]
    assert people.loc[2, "timeouts"] == 4 and people.loc[3, "comprehension_attempts"] == 2
    games = pd.read_parquet(out / "games.parquet")
    assert games.groupby("participant").size().max() == 2 and games["timed_out"].sum() == 2
    wide = pd.read_parquet(out / "surveys_wide.parquet")
    assert wide["g1_honesty"].dtype == "Int64" and wide["g1_honesty"].notna().sum() == 3
    long = pd.read_parquet(out / "surveys_long.parquet")
    assert len(long.drop_duplicates(["participant", "survey", "game", "item", "attempt"])) == len(long)
    moves = pd.read_parquet(out / "moves.parquet")
    assert set(moves["game_id"]) == set(games.loc[games["status"] == "finished", "id"])  # MID has not moved yet
    assert moves["participant"].notna().all() and moves["game_index"].notna().all()
    # A formula typed into a free-text answer is inert in the CSV, exact in Parquet.
    assert long["value"].str.startswith("=HYPERLINK").sum() == 3
    with open(out / "surveys_long.csv", newline="") as handle:
        typed = [row["value"] for row in csv.DictReader(handle) if "HYPERLINK" in row["value"]]
    assert typed and all(value.startswith("'=") for value in typed)


def test_a_hashed_export_carries_pseudonyms_and_no_platform_ids(study_db, tmp_path):
    _, store = study_db
    export_study(store, "flow-test", out_dir=tmp_path / "out")  # the study hashes by default
    salt = records.study_salt(store, "flow-test", 1)
    ids = {"P1", "P2", "LATE", "OUT", "MID", "NO", "S1", "sess-P1"}
    cells = {str(v) for t in TABLES for v in pd.read_csv(tmp_path / "out" / f"{t}.csv", dtype=str).stack()}
    columns = {c for t in TABLES for c in pd.read_csv(tmp_path / "out" / f"{t}.csv", nrows=0).columns}
    assert not ids & cells and not {"player", "source_study_id", "source_session_id"} & columns
    assert {records.pseudonym(salt, pid) for pid in ("P1", "P2", "LATE", "OUT", "MID", "NO")} <= cells
    clear = tmp_path / "clear"
    export_study(store, "flow-test", out_dir=clear, hashed=False)
    people = pd.read_csv(clear / "participants.csv")
    assert people["participant"].tolist()[:3] == ["P1", "P2", "LATE"]
    assert people.loc[0, "source_session_id"] == "sess-P1"


def test_the_command_line_writes_the_export_and_names_what_is_wrong(study_db, tmp_path):
    study_dir, _ = study_db
    db = str(study_dir / "study.db")
    done = run_main(
        main, *["export", "--db", db, "--study", "flow-test", "--out", str(tmp_path / "out"), "--no-hash-ids"]
    )
    assert done.returncode == 0 and "files written" in done.stdout
    assert (tmp_path / "out" / PAYMENT_DIR / "bonuses.csv").read_text().startswith("P1,")
    wrong = run_main(main, *["export", "--db", db, "--study", "nope", "--out", str(tmp_path / "x")])
    assert wrong.returncode == 2 and "no study named 'nope'" in wrong.stderr and "flow-test" in wrong.stderr
    version = run_main(
        main, *["export", "--db", db, "--study", "flow-test", "--version", "3", "--out", str(tmp_path / "x")]
    )
    assert version.returncode == 2 and "has no version 3" in version.stderr
    missing = run_main(
        main, *["export", "--db", str(tmp_path / "none.db"), "--study", "flow-test", "--out", str(tmp_path)]
    )
    assert missing.returncode == 2 and "no database file" in missing.stderr


class RecordingHub(HfApi):
    """The Hub's API with its two writing calls recorded instead of sent (the tests are offline)."""

    def __init__(self):
        super().__init__(token="hf_test")
        self.repos, self.commits = [], []

    def create_repo(self, repo_id, **kwargs):
        self.repos.append((repo_id, kwargs))
        return RepoUrl(f"https://huggingface.co/datasets/{repo_id}")

    def upload_folder(self, **kwargs):
        folder = Path(kwargs["folder_path"])
        files = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
        self.commits.append(sorted(filter_repo_objects(files, allow_patterns=kwargs["allow_patterns"])))

    def create_commit(self, **kwargs):
        self.commits.append(sorted(op.path_in_repo for op in kwargs["operations"]))


def test_pushing_uploads_no_payment_file_and_fails_offline_in_one_line(study_db, tmp_path, monkeypatch):
    _, store = study_db
    export_study(store, "flow-test", out_dir=tmp_path / "out")
    hub = RecordingHub()
    monkeypatch.setattr("bargain.records.publish.get_token", lambda: "hf_test")
    monkeypatch.setattr("bargain.records.publish.HfApi", lambda: hub)
    assert push_to_hub(tmp_path / "out", "lab/study", PUBLISHED).endswith("datasets/lab/study")
    assert hub.repos[0][1]["private"] is True and hub.repos[0][1]["repo_type"] == "dataset"
    assert hub.commits == [sorted(PUBLISHED)] and not {"bonuses.csv", "payments.csv"} & set(hub.commits[0])
    monkeypatch.setattr("bargain.records.publish.get_token", lambda: None)
    with pytest.raises(PublishError, match="no Hugging Face token"):
        push_to_hub(tmp_path / "out", "lab/study", PUBLISHED)
    monkeypatch.undo()
    offline = run_main(
        main,
        "export",
        "--db",
        str(study_db[0] / "study.db"),
        "--study",
        "flow-test",
        "--out",
        str(tmp_path / "again"),
        "--to-hub",
        "lab/study",
        env={"HF_TOKEN": "hf_x"},
    )
    assert offline.returncode == 2 and offline.stderr.startswith("error: cannot push to the Hub dataset lab/study")
    assert (tmp_path / "again" / PAYMENT_DIR / "bonuses.csv").exists()  # written before the push failed


def test_a_running_study_keeps_a_private_copy_in_step_on_the_hub(study_db):
    _, store = study_db
    hub = RecordingHub()
    sync = HubSync("lab/live", lambda folder: export_study(store, "flow-test", out_dir=folder), 60, PUBLISHED, api=hub)
    try:
        sync.trigger().result(timeout=60)  # queued after the push made at start
        sync.trigger().result(timeout=60)  # nothing changed since: no commit
        assert hub.repos == [("lab/live", {"private": True, "repo_type": "dataset", "exist_ok": True})]
        assert hub.commits == [sorted(PUBLISHED)]
        assert not list(sync.folder_path.parent.glob("bargain-sync-new-*"))
    finally:
        sync.stop()


def test_the_app_will_not_start_a_sync_it_cannot_make(tmp_path):
    from bargain import app as arena_app

    make_study(tmp_path)
    started = run_main(
        arena_app.main,
        "--db",
        str(tmp_path / "a.db"),
        "--study",
        str(tmp_path / "study.yaml"),
        "--sync-to-hub",
        "lab/live",
        env={"HF_TOKEN": None, "HF_HOME": str(tmp_path / "hf")},
    )
    assert started.returncode == 1 and "Traceback" not in started.stderr
    assert "error: cannot push to the Hub dataset lab/live: no Hugging Face token" in started.stderr


def test_the_codebook_says_what_each_rubric_level_and_scale_point_means_and_how_cells_are_drawn(study_db, tmp_path):
    _, store = study_db
    export_study(store, "flow-test", out_dir=tmp_path / "out")
    codebook = pd.read_csv(tmp_path / "out" / "codebook.csv").set_index(["file", "column"])["description"]
    honesty = codebook["surveys_wide", "g1_honesty"]
    levels = builtin_item(Builtin.HONESTY, role=Role.BUYER).options  # the study's participants are buyers
    assert all(f"{level} = {text}" in honesty for level, text in enumerate(levels)), honesty
    assert (
        "1 = Not at all" in codebook["surveys_wide", "g2_satisfied"]
        and "5 = Very" in codebook["surveys_wide", "g2_satisfied"]
    )
    assert "person = A person" in codebook["surveys_wide", "g1_person_or_program"]
    cells = codebook["participants", "cells"]
    assert "within subjects" in cells and "fewest" in cells and "same arm" in cells and "fixed order" in cells
    markdown = (tmp_path / "out" / "codebook.md").read_text()
    assert cells.replace("|", "/") in markdown and f"4 = {levels[4]}" in markdown


def test_the_codebook_gives_the_rubric_for_each_role_played_and_says_when_arms_are_distinct(tmp_path):
    study = make_study(tmp_path)
    study = dataclasses.replace(
        study,
        cells=tuple(dataclasses.replace(c, role=Role.SELLER) for c in study.cells),
        design=dataclasses.replace(study.design, distinct_arms=True),
    )
    runner = runner_for(tmp_path, study)
    asyncio.run(take_part(runner, "S1"))
    export_study(runner.arena.store, "flow-test", out_dir=tmp_path / "out")
    codebook = pd.read_csv(tmp_path / "out" / "codebook.csv").set_index(["file", "column"])["description"]
    levels = builtin_item(Builtin.HONESTY, role=Role.SELLER).options
    assert "price ceiling" in levels[0] and f"0 = {levels[0]}" in codebook["surveys_wide", "g1_honesty"]
    assert "different arm" in codebook["participants", "cells"]


def test_the_payment_file_carries_each_participants_completion_code(study_db, tmp_path):
    _, store = study_db
    export_study(store, "flow-test", out_dir=tmp_path / "out")
    payments = pd.read_csv(tmp_path / "out" / PAYMENT_DIR / "payments.csv")
    assert payments["completion_code"].tolist() == ["DONE123"] * 3  # the study's one code, by default


def test_a_study_nobody_has_joined_yet_exports_its_empty_tables(tmp_path):
    """The researcher may press Export before the first participant arrives: every file is written, empty."""
    from test_study_flow import runner_for

    runner = runner_for(tmp_path)
    written = export_study(runner.arena.store, "flow-test", out_dir=tmp_path / "out")
    assert {p.name for p in written} >= {"participants.csv", "surveys_wide.csv", "codebook.md"}
    assert pd.read_csv(tmp_path / "out" / "surveys_wide.csv").empty


def test_the_studys_settings_are_exported_without_its_completion_codes_and_described(study_db, tmp_path):
    """study.json holds what an analysis needs to know of the study (its arms in order, cells, design, surveys),
    for each version exported; it is published with the tables, so nothing in it claims a completion."""
    _, store = study_db
    written = export_study(store, "flow-test", out_dir=tmp_path / "out")
    document = json.loads((tmp_path / "out" / "study.json").read_text())
    assert tmp_path / "out" / "study.json" in written and "study.json" in PUBLISHED
    (version,) = document["versions"]
    settings = version["settings"]
    assert document["name"] == "flow-test" and version["version"] == 1 and version["hash"] == settings["hash"]
    assert list(settings["arms"]) == ["a", "b"] and settings["design"]["assignment"] == "within"
    assert [item["id"] for item in settings["surveys"]["per_game"]] == ["honesty", "person_or_program", "satisfied"]
    text = (tmp_path / "out" / "study.json").read_text()
    assert "DONE123" not in text and "OUT456" not in text and "path" not in settings
    assert settings["completion"]["code"] == settings["completion"]["screened_out_code"] == WITHHELD_TEXT
    codebook = pd.read_csv(tmp_path / "out" / "codebook.csv")
    described = codebook[codebook["file"] == "study"].set_index("column")
    assert set(described.index) >= {"name", "versions", "versions[].hash", "versions[].settings.arms"}
    assert {f"versions[].settings.{key}" for key in settings} <= set(described.index)
    assert UNDESCRIBED not in described["description"].tolist()
    assert described.loc["versions[].settings.arms", "type"] == "JSON"
    assert described.loc["versions[].version", "type"] == "integer"
    assert "## study (study.json)" in (tmp_path / "out" / "codebook.md").read_text()
