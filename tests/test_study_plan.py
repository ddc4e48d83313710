"""`bargain plan`: its power against statsmodels' for the design where the answer is known, the same numbers from
the same seed, a pilot export's assumptions recovered, and every mistake in one plain line."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_main
from statsmodels.stats.power import TTestIndPower
from test_cli import assert_one_line_error

from bargain.cli import main
from bargain.study.assumptions import Assumptions
from bargain.study.config import load
from bargain.study.plan import Power, make_plan, outcomes_for, parse_effects, pilot_parameters, power, smallest
from bargain.study.simulate import Binary, Continuous, Effects, simulate
from bargain.study.synthetic import write_export
from benchmarks.analysis import write_study


def two_arms(folder: Path) -> Path:
    """Two arms between subjects, one game each, one condition: the t-test's design."""
    return write_study(folder, arms=("a", "b"), conditions=("full",), games=1, assignment="between")


def plan(*args: str):
    return run_main(main, "plan", *args, "--quiet")


@pytest.mark.slow
def test_power_for_two_arms_without_participant_effects_is_the_t_tests(tmp_path):
    """Within 3 points of TTestIndPower where it is low and where it is high (20 and 100 participants: about 0.18
    and 0.70; the t on participants - 1 degrees of freedom matters most at 20), 1500 studies a size: Monte Carlo
    error <= 1.2 points."""
    study = load(two_arms(tmp_path))
    outcomes = outcomes_for(
        Assumptions(participant_sd=0.0, utility_sd=0.3), parse_effects(["utility=0.15"], study, "a")
    )
    results = power(study, outcomes, (20, 100), 1500, 0, "a")
    assert [(r.arm, r.condition) for r in results] == [("b", "full")] * 2
    for r in results:
        expected = TTestIndPower().power(effect_size=0.5, nobs1=r.participants / 2, alpha=0.05)
        assert abs(r.power - expected) < 0.03, (r, expected)


@pytest.mark.slow  # hundreds of simulated studies (seconds)
def test_the_same_seed_prints_the_same_plan_and_a_size_the_same_whatever_else_is_asked(tmp_path):
    study_file = write_study(tmp_path)
    args = dict(pilot=None, assume=(), effects=["utility=0.1", "deal=0.15"], sims=30, seed=3)
    first = make_plan(study_file, participants="30:60:30", **args)
    assert first == make_plan(study_file, participants="30:60:30", **args)
    assert first != make_plan(study_file, participants="30:60:30", **{**args, "seed": 4})
    study = load(study_file)
    outcomes = outcomes_for(Assumptions(), parse_effects(["utility=0.1"], study, "a"))
    alone = power(study, outcomes, (60,), 30, 3, "a")
    assert alone == tuple(r for r in power(study, outcomes, (30, 60), 30, 3, "a") if r.participants == 60)


def test_the_plan_prints_every_contrast_at_every_size_and_the_sizes_that_reach_80_and_90_percent(tmp_path):
    run = plan(str(write_study(tmp_path)), "--effect", "utility:b=0.3", "--participants", "20:40:20", "--sims", "40")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("Study ai-bargaining-example v3: within subjects, 3 game(s) per participant, 8 cells")
    assert "(the defaults): utility_mean=0.3 utility_sd=0.3 participant_sd=0.15" in lines[1]
    assert lines[2] == "Effects: utility +0.3 (b)."
    table = [line for line in lines if line.startswith("| utility")]
    assert len(table) == 9  # b, c, d minus a, in each condition and averaged
    assert table[0].startswith("| utility | b | both_unaware | ") and table[2].startswith("| utility | b | average | ")
    assert all(line.count(" ± ") == 2 for line in table)
    assert lines[lines.index(table[0]) - 2].endswith("| 20 | 40 | 80% at | 90% at |")


def test_the_smallest_size_is_the_first_to_reach_the_target():
    def at(n: int, share: float) -> Power:
        return Power("utility", "b", None, n, share, 0.01, 0)

    results = [at(40, 0.5), at(80, 0.82), at(120, 0.79), at(160, 0.93)]
    assert smallest(results, 0.8) == {("utility", "b", None): 80}
    assert smallest(results, 0.9) == {("utility", "b", None): 160}
    assert smallest(results, 0.95) == {("utility", "b", None): None}


def test_a_pilot_exports_spreads_are_recovered(tmp_path):
    study = load(write_study(tmp_path, quota=100_000))
    truth = {
        "person_norm_utility": Continuous(0.35, Effects({"b": 0.1}), participant_sd=0.15, residual_sd=0.3),
        "deal": Binary(0.6, Effects({"b": 0.1}), participant_sd=0.8),
    }
    write_export(study, simulate(study, truth, 600, 11), tmp_path / "pilot")
    found = pilot_parameters(tmp_path / "pilot", "a")
    assert found.utility_mean == pytest.approx(0.35, abs=0.03)
    assert found.participant_sd == pytest.approx(0.15, abs=0.03)
    assert found.utility_sd == pytest.approx(0.3, abs=0.015)
    assert found.deal_rate == pytest.approx(0.6, abs=0.04)
    assert found.deal_participant_sd == pytest.approx(0.8, abs=0.3)
    run = plan(str(write_study(tmp_path)), "--pilot", str(tmp_path / "pilot"), "--effect", "deal=0.2", "--sims", "5")
    assert run.returncode == 0, run.stderr
    assert f"Outcomes from the pilot export {tmp_path / 'pilot'}: utility_mean=" in run.stdout


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--assume", "utility_sigma=0.3", "--effect", "utility=0.1"], "the names are deal_participant_sd, "),
        (["--assume", "utility_sd=lots", "--effect", "utility=0.1"], "'lots' is not a number"),
        (["--effect", "utility:z=0.1"], "z is not one of the study's arms other than a"),
        (["--effect", "welfare=0.1"], "the outcomes are utility, deal"),
        ([], "give the effects to find"),
        (["--effect", "utility=0.1", "--participants", "40:20"], "write START:STOP:STEP"),
        (["--effect", "utility=0.1", "--participants", "40:400:40"], "seat 80 participants, not 400"),
        (["--effect", "deal=0.5"], "a rate of 0.6 and an effect of +0.5"),
        (["--effect", "utility=0.1", "--reference", "z"], "--reference z is not an arm of the study"),
        (["--effect", "utility=0.1", "--pilot", "/nonexistent"], "--pilot /nonexistent: "),
    ],
)
def test_every_mistake_is_one_plain_line(tmp_path, args, needle):
    """Each found before anything is simulated (a study of at most 80 participants: 30 games in each of 8 cells)."""
    sizes = [] if "--participants" in args else ["--participants", "40"]
    assert_one_line_error(plan(str(write_study(tmp_path, quota=30)), *args, *sizes), needle)


def test_a_pilot_that_is_no_export_is_one_line(tmp_path):
    (tmp_path / "games.csv").write_text("id,participant\ng1,p1\n")
    (tmp_path / "participants.csv").write_text("participant\np1\n")
    run = plan(str(write_study(tmp_path)), "--pilot", str(tmp_path), "--effect", "utility=0.1")
    assert_one_line_error(run, f"--pilot {tmp_path}: ", "`bargain export` or the dashboard's Export writes one")


def test_a_broken_study_file_is_one_line_with_every_problem(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: Not A Slug\nversion: 0\n")
    assert_one_line_error(plan(str(broken), "--effect", "utility=0.1"), "name", "; ")


def test_the_help_states_every_assumption_with_its_default():
    run = run_main(main, "plan", "--help")
    flat = " ".join(run.stdout.split())
    for name, default in (("utility_sd", 0.3), ("participant_sd", 0.15), ("deal_rate", 0.6)):
        assert f"{name}={default}" in flat
    assert "--pilot EXPORT_DIR" in flat and "80% and 90%" in flat and "default 40:400:40" in flat


def test_a_study_too_small_to_fit_counts_as_finding_nothing(tmp_path):
    """Two participants between six cells: most simulated studies lack the reference arm or a second cluster."""
    study = load(write_study(tmp_path, arms=("a", "b", "c"), games=1, assignment="between"))
    outcomes = outcomes_for(Assumptions(), parse_effects(["utility=0.1", "deal=0.1"], study, "a"))
    results = power(study, outcomes, (2,), 10, 0, "a")
    assert len(results) == 2 * 2 * 3  # 2 outcomes x arms b, c x 2 conditions and the average
    assert all(r.power == 0.0 and r.unfitted == 10 for r in results)
