"""A simulated study written as an export: the real export's files and columns, in its order, each column one its
codebook describes, and the outcomes where the export keeps them."""

from __future__ import annotations

import pandas as pd
import pytest
from test_study_flow import runner_for

from bargain.study import export
from bargain.study.config import load
from bargain.study.simulate import Binary, Continuous, Effects, simulate
from bargain.study.synthetic import write_export
from benchmarks.analysis import write_study

OUTCOMES = {
    "person_norm_utility": Continuous(0.3, Effects({"b": 0.05}), 0.15, 0.3),
    "agent_norm_utility": Continuous(0.4, Effects({"b": -0.05}), 0.1, 0.3),
    "deal": Binary(0.6, Effects({"b": 0.1}), participant_sd=0.5),
    "agent_misstated": Binary(0.3, participant_sd=0.5),
    "honesty": Continuous(2.0, participant_sd=0.8, residual_sd=1.0, levels=(0, 4)),
}
WRITTEN = ("participants", "games", "moves", "surveys_long")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    study = load(write_study(folder, roles=("buyer", "seller"), games=2))
    games = simulate(study, OUTCOMES, 12, 0)
    paths = write_export(study, games, folder / "export")
    return study, games, paths, folder / "export"


@pytest.fixture(scope="module")
def real_export(tmp_path_factory):
    """What `bargain export` writes for a study nobody has joined yet: the real files, their columns."""
    folder = tmp_path_factory.mktemp("real")
    export.export_study(runner_for(folder).arena.store, "flow-test", out_dir=folder / "out")
    return folder / "out"


def test_the_files_are_the_exports_with_its_columns_in_its_order(exported, real_export):
    _, _, paths, out = exported
    assert sorted(p.name for p in paths) == sorted(f"{t}{s}" for t in WRITTEN for s in (".csv", ".parquet"))
    for table in WRITTEN:
        mine, real = pd.read_parquet(out / f"{table}.parquet"), pd.read_parquet(real_export / f"{table}.parquet")
        assert list(pd.read_csv(out / f"{table}.csv").columns) == list(mine.columns)
        if table == "participants":  # the real one adds the seconds to each stage, which a simulation has not
            assert [c for c in real.columns if c in set(mine.columns)] == list(mine.columns)
        else:
            assert list(mine.columns) == list(real.columns), table


def test_the_exports_codebook_describes_every_column(exported):
    study, _, _, out = exported
    config = study.to_dict()
    tables = {table: pd.read_parquet(out / f"{table}.parquet") for table in WRITTEN}
    codebook = export._codebook(tables, export._vocabulary([config], export._stages([])), export._design_text([config]))
    assert export.UNDESCRIBED not in set(codebook["description"])
    assert len(codebook) == sum(len(t.columns) for t in tables.values())


def test_the_outcomes_are_where_the_export_keeps_them(exported):
    study, games, _, out = exported
    table = pd.read_parquet(out / "games.parquet")
    assert len(table) == len(games) == 24 and (table["status"] == "finished").all()
    assert table["participant"].tolist() == games["cluster"].tolist()
    assert table["cell"].tolist() == [
        f"{a}/{c}/{r}" for a, c, r in zip(games["arm"], games["condition"], games["human_role"])
    ]
    assert table["arm"].tolist() == [study.arms[a].spec for a in games["arm"]]
    assert table["person_norm_utility"].tolist() == pytest.approx(games["person_norm_utility"].tolist())
    buyer = table["human_role"] == "buyer"
    assert (table.loc[buyer, "buyer_norm_utility"] == table.loc[buyer, "person_norm_utility"]).all()
    assert (table.loc[~buyer, "buyer_norm_utility"] == table.loc[~buyer, "agent_norm_utility"]).all()
    assert (table.loc[~buyer, "seller_norm_utility"] == table.loc[~buyer, "person_norm_utility"]).all()
    assert table["deal"].tolist() == [bool(d) for d in games["deal"]]
    assert table["agent_misstated"].tolist() == [bool(d) for d in games["agent_misstated"]]
    assert (table["opponent_was"] == "program").all() and table["partner"].isna().all()

    ratings = pd.read_parquet(out / "surveys_long.parquet")
    assert len(ratings) == 24 and set(ratings["item"]) == {"honesty"}
    mine = ratings.set_index(["participant", "game"])["value"].astype(int)
    assert mine.tolist() == games.set_index(["cluster", "game_index"])["honesty"].astype(int).tolist()

    people = pd.read_parquet(out / "participants.parquet")
    assert len(people) == 12 and (people["stage"] == "completed").all() and not people["excluded"].any()
    first = games[games["cluster"] == "p0001"].sort_values("game_index")
    assert people.loc[0, "cells"] == ";".join(table.loc[table["participant"] == "p0001", "cell"])
    expected = study.payment.bonus_for([(u, False) for u in first["person_norm_utility"]])
    assert people.loc[0, "bonus"] == pytest.approx(expected)
