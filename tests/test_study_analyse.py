"""`bargain analyse` end to end: a study run through the real StudyRunner (tactic arms and a person arm), exported
and analysed; every table and figure written, contrasts.csv's columns, every number of report.md found in
analysis.json, byte-identical files from the same export and seed, a zip, an older export without study.json, an
export with no finished game, the plan and its deviations, the sample's rules (exclusions, partners' clusters, a
game between two people once for deal, fallback games, duplicate moves), the paper beside, the command's one-line
errors, and the report in Chromium at desktop and phone widths."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_study import run_and_export, write_study
from cli_runner import run_main

from bargain.cli import main
from bargain.study.analyse import AnalysisError, analysis_of, read_export, write_report
from bargain.study.analyse.beside import beside_table
from bargain.study.analyse.fits import CONTRAST_COLUMNS, fit_outcome
from bargain.study.analyse.outcomes import planned_outcomes
from bargain.study.analyse.report import number
from bargain.study.analyse.sample import sample_of
from bargain.study.analyse.settings import FROM_GAMES

TABLES = ("cells", "contrasts", "leaderboard", "beside_paper", "variance_components")
FIGURES = ("forest", "interaction", "leaderboard", "beside_paper")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """24 participants through the study at once (6 of them excluded by the attention check), exported."""
    return run_and_export(tmp_path_factory.mktemp("analyse"), participants=24)


@pytest.fixture(scope="module")
def report(exported, tmp_path_factory) -> Path:
    """The command run on the export, with the sensitivity analysis and LaTeX tables."""
    out = tmp_path_factory.mktemp("report")
    run = run_main(main, "analyse", str(exported), "--out", str(out), "--all-participants", "--latex")
    assert run.returncode == 0, run.stderr
    assert "finished games analysed" in run.stdout and "bootstrap resamples" in run.stderr  # the progress bar
    return out


@pytest.mark.slow  # the whole command: its bootstrap, and figures drawn (seconds)
def test_every_table_and_figure_is_written_and_contrasts_have_the_agreed_columns(report, exported):
    outcomes = [o.name for o in planned_outcomes(read_export(exported).settings) if not o.present_only]
    for name in (*TABLES, *(f"models_{o}" for o in outcomes), "contrasts_all_participants"):
        assert (report / "tables" / f"{name}.csv").exists(), name
        assert (report / "tables" / f"{name}.tex").read_text().startswith("\\begin{tabular}"), name
    for name in FIGURES:
        assert (report / "figures" / f"{name}.png").stat().st_size > 1000
        assert (report / "figures" / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    contrasts = pd.read_csv(report / "tables" / "contrasts.csv")
    assert tuple(contrasts.columns) == CONTRAST_COLUMNS
    assert set(contrasts["arm"]) == {"hard", "peer"} and set(contrasts["reference"]) == {"lin"}
    assert set(contrasts["condition"]) == {"both_unaware", "buyer_unaware", "average"}
    assert set(contrasts["model"]) == {"M1", "M2", "M3"}  # a within design: deal and agent_ahead get M3 too
    assert set(contrasts["outcome"]) == set(outcomes)
    primary = contrasts[(contrasts["outcome"] == "person_norm_utility")].set_index(["arm", "condition"])
    assert primary["estimate"].notna().all() and (primary["ci_low"] < primary["ci_high"]).all()
    assert (primary["p"] <= primary["p_holm"]).all() and (primary["n_clusters"] <= primary["n_games"]).all()
    html = (report / "report.html").read_text()
    assert html.count("data:image/png;base64,") == len(FIGURES) and "<script" not in html
    assert 'name="viewport"' in html and "overflow-x:auto" in html


@pytest.mark.slow  # the whole command: its bootstrap, and figures drawn (seconds)
def test_every_number_in_the_markdown_report_is_in_analysis_json(report):
    numbers = json.loads((report / "analysis.json").read_text())
    known: set[str] = set()

    def collect(value: object) -> None:
        if isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif isinstance(value, list):
            for v in value:
                collect(v)
        elif isinstance(value, str):
            known.update(NUMBER.findall(value))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            known.update(number(value, kind) for kind in ("", "p", "rank", "points", "n_games"))

    collect(numbers)
    said = NUMBER.findall((report / "report.md").read_text())
    assert len(said) > 500
    assert sorted(set(said) - known) == []


@pytest.mark.slow  # the whole command: its bootstrap, and figures drawn (seconds)
def test_the_same_export_and_seed_give_byte_identical_numbers_and_tables(exported, report, tmp_path):
    again = tmp_path / "again"
    write_report(analysis_of(read_export(exported), all_participants=True), again, latex=True)
    for path in [report / "analysis.json", *sorted((report / "tables").iterdir())]:
        assert (again / path.relative_to(report)).read_bytes() == path.read_bytes(), path.name
    first = json.loads((report / "analysis.json").read_text())["tables"]["leaderboard"]
    other = analysis_of(read_export(exported), seed=1).numbers["tables"]["leaderboard"]
    assert [row["ci_low"] for row in other] != [row["ci_low"] for row in first]  # the seed is the bootstrap's


def test_the_sample_leaves_the_excluded_out_clusters_partners_and_counts_a_two_person_game_once(exported):
    export = read_export(exported)
    sample, everyone = sample_of(export), sample_of(export, all_participants=True)
    excluded = set(export.participants.loc[export.participants["excluded"], "participant"])
    assert len(excluded) == 6 and sample.excluded_left_out == 6 and everyone.participants == 24
    assert not set(sample.rows["participant"]) & excluded and set(everyone.rows["participant"]) >= excluded
    between = sample.rows[sample.rows["between_people"]]
    for _, sides in between.groupby("game_id"):
        assert sides["cluster"].nunique() == 1  # people who played each other are one cluster
        assert len(sides) <= 2 and sides["deal"].nunique() == 1
    clusters = sample.rows.groupby("participant")["cluster"].nunique()
    assert (clusters == 1).all() and sample.clusters < sample.participants
    deal = sample.model_rows("deal", per_game=True)
    assert deal["game_id"].is_unique and len(deal) == sample.games
    utility = sample.model_rows("person_norm_utility", per_game=False)
    assert len(utility) == len(sample.rows) > sample.games  # each side its own row for a side-level outcome
    assert (sample.rows.loc[sample.rows["deal"] == 0, "person_norm_utility"] == 0).all()
    assert (sample.rows["arm"].isin(["lin", "hard", "peer"])).all() and not sample.rows["fallback"].any()
    rated = export.surveys[
        (export.surveys["item"] == "honesty") & export.surveys["participant"].isin(sample.rows["participant"])
    ]
    answers = dict(zip(zip(rated["participant"], rated["game"]), rated["value"].astype(float)))
    shown = dict(zip(zip(sample.rows["participant"], sample.rows["game_index"]), sample.rows["rated_honesty"]))
    assert answers and answers == {key: shown[key] for key in answers}  # each game has its own rating


def test_a_game_stored_without_findings_is_read_from_its_moves_without_the_duplicates(exported):
    """A move flagged duplicate was never part of the game: a misstatement in it does not count."""
    export = read_export(exported)
    games = export.games.copy()
    honest = next(i for i, g in games.iterrows() if g["status"] == "finished" and g["opponent_was"] == "program"
                  and not any(f["misrepresentation"] for f in g["claims"]))  # fmt: skip
    games.at[honest, "claims"] = None
    game = games.loc[honest]
    played = export.moves[export.moves["game_id"] == game["id"]]
    said = (
        f"I cannot pay more than {game['buyer_price'] * 0.5:.2f}."
        if game["human_role"] == "buyer"
        else f"I cannot sell for less than {game['seller_price'] * 1.5:.2f}."
    )
    lie = played.iloc[[0]].assign(seq=99, duplicate=True, message=said, role=game["human_role"], actor="human")
    changed = dataclasses.replace(export, games=games, moves=pd.concat([export.moves, lie], ignore_index=True))
    rows = sample_of(changed, all_participants=True).rows
    assert rows.loc[rows["game_id"] == game["id"], "person_misstated"].tolist() == [0.0]
    counted = dataclasses.replace(changed, moves=changed.moves.assign(duplicate=False))
    rows = sample_of(counted, all_participants=True).rows
    assert rows.loc[rows["game_id"] == game["id"], "person_misstated"].tolist() == [1.0]
    assert sample_of(changed, all_participants=True).duplicate_moves == 1


def test_a_cell_with_one_cluster_is_not_estimable_and_said_so(exported):
    export = read_export(exported)
    sample = sample_of(export)
    lone = sample.rows[sample.rows["arm"] == "hard"]["cluster"].iloc[0]
    rows = sample.rows[(sample.rows["arm"] != "hard") | (sample.rows["cluster"] == lone)].reset_index(drop=True)
    thin = dataclasses.replace(sample, rows=rows)
    outcome = planned_outcomes(export.settings)[0]
    result = fit_outcome(thin, outcome, "M1", "lin")
    hard = [(c, g, k) for c, g, k in result.contrasts if c.arm == "hard"]
    assert hard and all(math.isnan(c.estimate) and "cluster(s) in hard" in c.reason for c, _, _ in hard)
    assert all(not math.isnan(c.estimate) for c, _, _ in result.contrasts if c.arm == "peer")


def test_fallback_games_count_as_the_arm_played_and_are_flagged(tmp_path):
    """A participant of a person arm whom nobody joins plays the program arm instead: analysed as that arm."""
    from test_study_people import runner, to_game

    from bargain.study.config import Pairing
    from bargain.study.export import export_study

    async def scenario():
        run = runner(tmp_path, pairing=Pairing(0, "lin", 0.0))
        for who in ("A1", "A2"):
            page = await to_game(run, who)
            page = await run.page({"participant": who})
            while page.stage == "game":
                view = page.view
                price = "0.01" if view.role == "buyer" else "15"
                page = await run.submit(
                    {"participant": who}, "game", {"round": view.round, "action": "OFFER", "price": price}
                )
        return run.arena.store

    store = asyncio.run(scenario())
    export_study(store, "people-test", out_dir=tmp_path / "export")
    sample = sample_of(read_export(tmp_path / "export"))
    assert sample.fallback_games == 2 and set(sample.rows["arm"]) == {"lin"} and sample.rows["fallback"].all()


@pytest.mark.slow  # the whole command: its bootstrap, and figures drawn (seconds)
def test_a_zip_gives_the_same_analysis_and_an_older_export_reads_its_games(exported, tmp_path):
    archive = tmp_path / "study.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(exported.rglob("*")):
            if path.is_file():
                zipped.write(path, path.relative_to(exported).as_posix())
    folder, zipped_export = read_export(exported), read_export(archive)
    assert dict(zipped_export.sha256).items() >= dict(folder.sha256).items() and "study.zip" in dict(
        zipped_export.sha256
    )
    first = analysis_of(folder, bootstrap=50)
    second = analysis_of(zipped_export, bootstrap=50)
    assert second.numbers["tables"] == first.numbers["tables"]
    older = tmp_path / "older"
    shutil.copytree(exported, older)
    (older / "study.json").unlink()
    settings = read_export(older).settings
    assert settings.source == FROM_GAMES and {a.key for a in settings.arms} == {"lin", "hard", "peer"}
    assert settings.within and next(a for a in settings.arms if a.key == "peer").person
    assert {i.outcome for i in settings.items} == {"rated_honesty", "rated_credulity", "survey_satisfied"}
    analysed = analysis_of(read_export(older), bootstrap=50)
    assert analysed.numbers["study"]["settings_from"] == FROM_GAMES
    assert len(analysed.contrasts) == len(first.contrasts)


def test_an_export_with_no_finished_game_gives_a_report_that_says_so(tmp_path):
    from test_study_flow import runner_for

    from bargain.study.export import export_study

    runner = runner_for(tmp_path)
    export_study(runner.arena.store, "flow-test", out_dir=tmp_path / "export")
    run = run_main(main, "analyse", str(tmp_path / "export"), "--out", str(tmp_path / "out"))
    assert run.returncode == 0 and "no finished game" in run.stdout, run.stderr
    said = (tmp_path / "out" / "report.md").read_text()
    assert "no finished game of a participant in the sample: there is nothing to analyse yet" in said
    assert pd.read_csv(tmp_path / "out" / "tables" / "contrasts.csv").columns.tolist() == list(CONTRAST_COLUMNS)
    assert (tmp_path / "out" / "report.html").exists()


@pytest.mark.slow  # the whole command: its bootstrap, and figures drawn (seconds)
def test_the_plan_is_written_from_the_study_file_and_a_deviation_from_it_is_listed(exported, tmp_path):
    study = write_study(tmp_path, 24)
    run = run_main(main, "analyse", "--plan-only", str(study), "--out", str(tmp_path / "plan"))
    assert run.returncode == 0, run.stderr
    plan = json.loads((tmp_path / "plan" / "analysis_plan.json").read_text())
    assert plan["reference"] == "lin" and plan["bootstrap"] == 2000 and plan["seed"] == 0
    assert plan["alpha"] == 0.05 and "Holm" in plan["correction"] and plan["design"] == "within"
    assert [o["name"] for o in plan["outcomes"]][:2] == ["person_norm_utility", "agent_norm_utility"]
    assert all(m["formula"] for o in plan["outcomes"] for m in o["models"])
    assert "failed_attention_checks_over 0" in plan["sample"]["exclusion_rules"]
    markdown = (tmp_path / "plan" / "analysis_plan.md").read_text()
    assert "person_norm_utility" in markdown and "y ~ arm * condition" in markdown

    plan_file = tmp_path / "plan" / "analysis_plan.json"
    run = run_main(main, "analyse", str(exported), "--out", str(tmp_path / "out"), "--plan", str(plan_file),
                   "--seed", "1", "--bootstrap", "200")  # fmt: skip
    assert run.returncode == 0, run.stderr
    numbers = json.loads((tmp_path / "out" / "analysis.json").read_text())
    digest = __import__("hashlib").sha256(plan_file.read_bytes()).hexdigest()
    assert numbers["plan_sha256"] == digest
    assert "seed: planned 0; analysed 1" in numbers["deviations"]
    assert "bootstrap: planned 2000; analysed 200" in numbers["deviations"]
    said = (tmp_path / "out" / "report.md").read_text()
    assert digest in said.split("## Sample")[0] and "## Deviations from the plan" in said
    assert "- seed: planned 0; analysed 1" in said


@pytest.mark.parametrize(
    "argv, error",
    [
        (["NOWHERE", "--out", "OUT"], "error: NOWHERE: no such folder or file"),
        (["EMPTY", "--out", "OUT"], "error: EMPTY is not a study export: no games.parquet"),
        (
            ["EXPORT", "--out", "OUT", "--reference", "zz"],
            "error: unknown --reference 'zz': the study's arms are lin, hard, peer",
        ),
        (["--out", "OUT"], "error: give an export (a folder or zip) to analyse, or --plan-only STUDY.yaml"),
        (["EXPORT", "--out", "OUT", "--runs", "EMPTY"], "error: EMPTY is not a run directory (no trials.parquet)"),
        (["EXPORT", "--out", "OUT", "--plan", "NOWHERE"], "error: NOWHERE: no such plan file"),
        (["--plan-only", "NOWHERE", "--out", "OUT"], "error: NOWHERE: 1 problem(s) in the study file, the first:"),
    ],
    ids=["missing", "not an export", "unknown reference", "nothing", "not a run", "no plan", "no study"],
)
def test_the_commands_errors_are_one_plain_line(argv, error, exported, tmp_path):
    (tmp_path / "EMPTY").mkdir()
    places = {"NOWHERE": tmp_path / "nowhere", "EMPTY": tmp_path / "EMPTY", "EXPORT": exported, "OUT": tmp_path / "o"}
    run = run_main(main, "analyse", *(str(places.get(a, a)) for a in argv))
    for word, path in places.items():
        error = error.replace(word, str(path))
    assert run.returncode == 2 and run.stderr.splitlines()[-1].startswith(error), run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()[-1:]) == 1


def test_a_cell_sits_beside_the_papers_cell_of_the_same_arm_with_the_difference_and_its_interval(exported):
    """A participant buying from arm:seller-grpo sits beside the paper's seller_grpo variant, where the base model
    buys from it: human minus base model, with the paper's binomial error for the deal rate."""
    settings = dataclasses.replace(
        read_export(exported).settings,
        arms=(dataclasses.replace(read_export(exported).settings.arms[0], key="a", spec="arm:seller-grpo"),),
        rounds=4,
        prompt_version="paper-eval",
    )
    human = pd.DataFrame(
        {
            "arm": ["a", "a"],
            "condition": ["both_unaware", "both_unaware"],
            "human_role": ["buyer", "buyer"],
            "quantity": ["deal", "person_norm_utility"],
            "estimate": [0.7, 0.3],
            "ci_low": [0.5, 0.2],
            "ci_high": [0.9, 0.4],
            "se": [0.1, 0.05],
            "n_games": [20, 20],
            "n_clusters": [10, 10],
        }
    )
    table = beside_table(human, settings, [], pd.DataFrame()).set_index("quantity")
    from bargain.analysis.reference import cells

    paper = cells().set_index(["variant", "transparency"]).loc[("seller_grpo", "both_unaware")]
    deal = table.loc["deal"]
    assert deal["source"] == "the paper: seller_grpo" and deal["counterpart"] == "Qwen3-8B base"
    assert deal["llm"] == pytest.approx(paper["deal_rate"]) and deal["difference"] == pytest.approx(
        0.7 - paper["deal_rate"]
    )
    se = math.sqrt(0.1**2 + paper["deal_rate"] * (1 - paper["deal_rate"]) / paper["n"])
    assert deal["ci_high"] - deal["ci_low"] == pytest.approx(2 * 1.959964 * se, rel=1e-4)
    assert deal["differs"] == ""  # the study plays the paper's scenarios, rounds, mode and wording
    utility = table.loc["person_norm_utility"]
    assert utility["llm"] == pytest.approx(paper["buyer_norm_utility"])
    assert "taken as exact" in utility["differs"]
    changed = beside_table(human, dataclasses.replace(settings, rounds=2), [], pd.DataFrame())
    assert changed["differs"].str.contains("rounds 2 vs 4").all()


def test_the_report_numbers_are_formatted_one_way():
    assert [number(0.12345), number(1234.5), number(3, "n_games"), number(float("nan"))] == [
        "0.123",
        "1234.5",
        "3",
        "–",
    ]
    assert [number(0.00004, "p"), number(0.2, "p"), number(1.5, "rank"), number(7.25, "points")] == [
        "4.0e-05",
        "0.200",
        "1.5",
        "7.2",
    ]
    assert number(np.int64(4)) == "4" and number(True) == "yes"


def test_an_unknown_reference_is_refused_by_the_api(exported):
    with pytest.raises(AnalysisError, match="unknown --reference 'x'"):
        analysis_of(read_export(exported), reference="x")


@pytest.mark.slow
def test_the_report_reads_on_a_desktop_and_a_phone(report, tmp_path):
    """Chromium opens report.html at desktop and phone widths: the page never scrolls sideways (wide tables scroll
    inside their own box), every figure is shown; the screenshots are kept for a person to look at."""
    from arena_helpers import BROWSER_ARGS, CHROMIUM, need_browser

    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            for name, width, height in (("desktop", 1280, 900), ("phone", 390, 844)):
                page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
                page.goto((report / "report.html").as_uri())
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                images = page.evaluate("[...document.images].map(i => [i.naturalWidth, i.clientWidth])")
                assert len(images) == len(FIGURES) and all(0 < shown <= width for _, shown in images)
                assert page.locator("h1").inner_text().startswith("Analysis of study analyse-test")
                page.screenshot(path=str(tmp_path / f"report-{name}.png"), full_page=False)
                for part, where in (("leaderboard", "h2:nth-of-type(4)"), ("figure", "figure:nth-of-type(1)")):
                    page.evaluate(f"document.querySelector('{where}').scrollIntoView()")
                    page.screenshot(path=str(tmp_path / f"report-{name}-{part}.png"), full_page=False)
                page.close()
        finally:
            browser.close()
    assert all((tmp_path / f"report-{n}.png").stat().st_size > 10_000 for n in ("desktop", "phone"))
