"""The study's analysis against studies whose truth is known, and the speed of `bargain plan`.

    python -m benchmarks.analysis --coverage [--studies 300] [--seed S]
    python -m benchmarks.analysis --null [--studies 500] [--seed S]
    python -m benchmarks.analysis --plan-speed [--sims 400]
    python -m benchmarks.analysis --analyse-speed

The studies are simulated (bargain.study.simulate) in one within design: 4 arms (a, the reference, then b, c,
d) x 2 information conditions, the participant a buyer, 3 games each against 3 different arms, seated as the app
seats them. Known truth (`TRUTH`): the participant's normalised utility with arm effects (one differing by
condition), a participant SD of 0.15 and a game SD of 0.3; deal and the agent's misstatement as random-intercept
logits, their arm effects on the log odds, participant SDs 0.8 and 0.5 on the log odds.

--coverage: at 120 and at 30 participants, `--studies` studies each, the share of 95% intervals of each arm
contrast (arm minus a, per condition and averaged over conditions) that hold the truth: M1 (REML mixed model) for
the utility; M2 (GEE) for deal and misstatement, whose truth is the risk difference over participants, computed
by Gauss-Hermite quadrature (bargain.analysis.latent); and each contrast's mean bias in units of its mean
standard error. Goals: each model's coverage (over its contrasts) in [0.925, 0.975] at 120 and [0.91, 0.98] at
30; mean |bias| < 0.25 SE. --null: every arm effect 0, `--studies` studies at 120 participants; the share of
studies where Holm's correction lets any contrast of an outcome be significant (goal <= 0.065 for each).
--plan-speed: `bargain plan` on this design, 5 sizes (80 to 400 participants) x `--sims` simulations, both
outcomes; goal <= 120 s. --analyse-speed: `python -m bargain analyse` (a fresh process, as a researcher runs it,
B = 2000) on a simulated export of 1,000 participants x 3 games (goal <= 30 s wall, <= 2 GiB) and of 100 (goal
<= 8 s). The seed is drawn at run time and printed, unless `--seed` gives it.

Each simulated study is written as an export in the real schema (bargain.study.synthetic) and analysed as
`bargain analyse` analyses one (`contrasts_of`: bargain.study.analyse's read_export and analysis_of).
"""

from __future__ import annotations

import argparse
import math
import secrets
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from tqdm import tqdm

from bargain.study.analyse import analysis_of, read_export
from bargain.study.config import EXAMPLE, Study, load
from bargain.study.simulate import Binary, Continuous, Effects, Outcome, Scale, simulate
from bargain.study.synthetic import write_export

REFERENCE = "a"
LEADERBOARD_RESAMPLES = 50  # analyse's leaderboard bootstrap, run with each study: kept short, as it is not measured
ARMS = ("a", "b", "c", "d")
CONDITIONS = ("buyer_unaware", "both_unaware")
SPECS = {"a": "arm:base", "b": "arm:seller-grpo", "c": "tactic:boulware", "d": "tactic:conceder"}
MODELS = {"person_norm_utility": "M1", "deal": "M2", "agent_misstated": "M2"}
TRUTH: dict[str, Outcome] = {
    "person_norm_utility": Continuous(
        0.3, Effects({"b": 0.05, "c": -0.03, "d": 0.08}, {("d", "both_unaware"): 0.02}), 0.15, 0.3
    ),
    "deal": Binary(0.6, Effects({"b": 0.4, "c": -0.3, "d": 0.2}), Scale.LOGIT, 0.8),
    "agent_misstated": Binary(0.25, Effects({"b": 0.5, "c": -0.5}), Scale.LOGIT, 0.5),
}
NULL: dict[str, Outcome] = {
    "person_norm_utility": Continuous(0.3, participant_sd=0.15, residual_sd=0.3),
    "deal": Binary(0.6, scale=Scale.LOGIT, participant_sd=0.8),
    "agent_misstated": Binary(0.25, scale=Scale.LOGIT, participant_sd=0.5),
}
GOALS = {120: (0.925, 0.975), 30: (0.91, 0.98)}  # participants: the band each model's coverage must fall in
MAX_BIAS = 0.25  # mean |bias| in standard errors
MAX_FAMILYWISE = 0.065
PLAN_SECONDS = 120.0
ANALYSE_SECONDS = {1000: 30.0, 100: 8.0}  # participants: the goal for `bargain analyse`, wall seconds
ANALYSE_GIB = 2.0


def write_study(
    folder: Path,
    *,
    arms: Sequence[str] = ARMS,
    conditions: Sequence[str] = CONDITIONS,
    roles: Sequence[str] = ("buyer",),
    games: int = 3,
    assignment: str = "within",
    quota: int = 10_000,
    distinct_arms: bool = True,
    order: str = "random",
) -> Path:
    """A study file in `folder`: the example's, with these arms (SPECS's agents), cells and design."""
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    shutil.copytree(EXAMPLE.parent / "example", folder / "example", dirs_exist_ok=True)
    document["arms"] = {arm: {"spec": SPECS[arm]} for arm in arms}
    document["cells"] = {"arms": list(arms), "conditions": list(conditions), "roles": list(roles)}
    document["games_per_participant"] = games
    design = {"assignment": assignment, "quota_per_cell": quota}
    if assignment == "within":
        design |= {"order": order, "distinct_arms": distinct_arms}
    document["design"] = design
    document["attention_checks"] = [c for c in document["attention_checks"] if c["after_game"] <= games]
    if not document["attention_checks"]:
        document["exclusions"] = [e for e in document["exclusions"] if "failed_attention_checks_over" not in e]
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def contrasts_of(study: Study, games: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Every contrast of a simulated study as `bargain analyse` reports it (tables/contrasts.csv), through the same
    code path: the study written as an export into `folder`, read and analysed as `analyse` does it (the leaderboard's
    bootstrap cut to LEADERBOARD_RESAMPLES: its intervals are not what is measured here), M1's and M2's kept."""
    write_export(study, games, folder)
    table = analysis_of(read_export(folder), reference=REFERENCE, bootstrap=LEADERBOARD_RESAMPLES).contrasts
    return table[[MODELS.get(outcome) == model for outcome, model in zip(table["outcome"], table["model"])]]


def truths(outcomes: Mapping[str, Outcome]) -> dict[tuple[str, str, str], float]:
    """Each contrast's true value: the difference of the cells' means over participants, per condition and
    averaged over conditions (the contrasts' equal weights)."""
    found = {}
    for name, outcome in outcomes.items():
        for arm in ARMS[1:]:
            each = [outcome.cell_mean(arm, c) - outcome.cell_mean(REFERENCE, c) for c in CONDITIONS]
            found |= {(name, arm, c): value for c, value in zip(CONDITIONS, each)}
            found[(name, arm, "average")] = float(np.mean(each))
    return found


def studies(study: Study, outcomes: Mapping[str, Outcome], participants: int, count: int, seed: int) -> pd.DataFrame:
    """The contrasts of `count` simulated studies with a truth here (MODELS' models of TRUTH's outcomes), each
    numbered in a `study` column (each study written as an export into one scratch folder in turn)."""
    rng = np.random.default_rng([seed, participants])
    found = []
    with tempfile.TemporaryDirectory() as folder:
        for number in tqdm(range(count), desc=f"{participants} participants", unit="study"):
            games = simulate(study, outcomes, participants, rng)
            found.append(contrasts_of(study, games, Path(folder)).assign(study=number))
    every = pd.concat(found, ignore_index=True)
    return every[[pair in MODELS.items() for pair in zip(every["outcome"], every["model"])]]  # what has a truth here


def coverage(study: Study, count: int, seed: int) -> bool:
    """Print coverage and bias per contrast and model at each size; whether every goal is met."""
    truth = truths(TRUTH)
    met = True
    for participants, (low, high) in GOALS.items():
        found = studies(study, TRUTH, participants, count, seed)
        found["truth"] = [truth[key] for key in zip(found["outcome"], found["arm"], found["condition"])]
        found["covered"] = (found["ci_low"] <= found["truth"]) & (found["truth"] <= found["ci_high"])
        estimated = found[np.isfinite(found["estimate"]) & np.isfinite(found["se"])]
        per_contrast = estimated.groupby(["model", "outcome", "arm", "condition"], sort=False).agg(
            coverage=("covered", "mean"),
            bias=("estimate", "mean"),
            truth=("truth", "first"),
            se=("se", "mean"),
            studies=("covered", "size"),
        )
        per_contrast["bias_se"] = (per_contrast["bias"] - per_contrast["truth"]) / per_contrast["se"]
        print(f"\n{participants} participants, {count} studies: 95% interval coverage and bias per contrast")
        print(per_contrast[["coverage", "bias_se", "studies"]].round(3).reset_index().to_markdown(index=False))
        for model, rows in per_contrast.groupby("model"):
            share = float(estimated.loc[estimated["model"] == model, "covered"].mean())
            bias = float(rows["bias_se"].abs().mean())
            ok = low <= share <= high and bias < MAX_BIAS
            met &= ok
            lost = int((found["model"] == model).sum() - (estimated["model"] == model).sum())
            print(
                f"{model}: coverage {share:.3f} (goal [{low}, {high}]; one contrast's Monte Carlo error "
                f"{math.sqrt(0.95 * 0.05 / count):.3f}), mean |bias| {bias:.3f} SE "
                f"(goal < {MAX_BIAS}), {lost} contrasts not estimable: {'met' if ok else 'MISSED'}"
            )
    return met


def null(study: Study, count: int, seed: int) -> bool:
    """Print each outcome's family-wise rejection rate with no arm effect; whether each is within the goal."""
    found = studies(study, NULL, 120, count, seed)
    rejected = found.assign(significant=found["p_holm"] < 0.05).groupby(["model", "outcome", "study"])["significant"]
    rates = rejected.any().groupby(["model", "outcome"]).mean()
    print(f"\nNo arm effects, 120 participants, {count} studies: family-wise rejection rate after Holm per outcome")
    met = True
    for (model, outcome), rate in rates.items():
        ok = rate <= MAX_FAMILYWISE
        met &= ok
        print(f"{model} {outcome}: {rate:.3f} (goal <= {MAX_FAMILYWISE}): {'met' if ok else 'MISSED'}")
    return met


def plan_speed(path: Path, sims: int, seed: int) -> bool:
    """Time `bargain plan` on the design at 5 sizes; whether it is within the goal."""
    from bargain.cli import main

    argv = ["plan", str(path), "--effect", "utility=0.05", "--effect", "deal=0.10", "--participants", "80:400:80"]
    argv += ["--sims", str(sims), "--seed", str(seed), "--quiet"]
    start = time.perf_counter()
    main(argv)
    seconds = time.perf_counter() - start
    ok = seconds <= PLAN_SECONDS
    print(
        f"\nbargain plan, 5 sizes x {sims} simulations: {seconds:.1f} s (goal <= {PLAN_SECONDS:.0f} s): "
        f"{'met' if ok else 'MISSED'}"
    )
    return ok


def analyse_speed(study: Study, seed: int) -> bool:
    """Time `python -m bargain analyse` in a fresh process on simulated exports of 1,000 and 100 participants (wall
    time and peak memory); whether both are within their goals."""
    import resource
    import subprocess
    import sys

    met = True
    for participants, goal_s in ANALYSE_SECONDS.items():
        with tempfile.TemporaryDirectory() as folder:
            export = Path(folder) / "export"
            write_export(study, simulate(study, TRUTH, participants, seed), export)
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            start = time.perf_counter()
            run = subprocess.run(
                [sys.executable, "-m", "bargain", "analyse", str(export), "--out", str(Path(folder) / "out")],
                capture_output=True,
                text=True,
            )
            seconds = time.perf_counter() - start
            peak_gib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 2**20
        if run.returncode != 0:
            raise SystemExit(f"bargain analyse failed: {run.stderr.strip().splitlines()[-1]}")
        ok = seconds <= goal_s and peak_gib <= ANALYSE_GIB
        met &= ok
        print(
            f"bargain analyse, {participants} participants x 3 games, B = 2000: {seconds:.1f} s, peak {peak_gib:.2f} "
            f"GiB (goal <= {goal_s:.0f} s, <= {ANALYSE_GIB:.0f} GiB): {'met' if ok else 'MISSED'}"
        )
    return met


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.analysis", description=__doc__.splitlines()[0])
    parser.add_argument("--coverage", action="store_true", help="interval coverage and bias at 120 and 30 participants")
    parser.add_argument("--null", action="store_true", help="family-wise rejection rate with no arm effect")
    parser.add_argument("--plan-speed", action="store_true", help="time bargain plan at 5 sizes")
    parser.add_argument("--analyse-speed", action="store_true", help="time bargain analyse at 1,000 and 100 people")
    parser.add_argument(
        "--studies", type=int, help="simulated studies per size (default 300 for --coverage, 500 for --null)"
    )
    parser.add_argument("--sims", type=int, default=400, help="--plan-speed: simulations per size (default 400)")
    parser.add_argument("--seed", type=int, help="the seed (default: drawn now, and printed)")
    args = parser.parse_args()
    if not (args.coverage or args.null or args.plan_speed or args.analyse_speed):
        parser.error("choose --coverage, --null, --plan-speed or --analyse-speed")
    seed = secrets.randbelow(2**32) if args.seed is None else args.seed
    print(f"seed {seed}")
    with tempfile.TemporaryDirectory() as folder:
        path = write_study(Path(folder))
        study = load(path)
        met = True
        if args.coverage:
            met &= coverage(study, args.studies or 300, seed)
        if args.null:
            met &= null(study, args.studies or 500, seed)
        if args.plan_speed:
            met &= plan_speed(path, args.sims, seed)
        if args.analyse_speed:
            met &= analyse_speed(study, seed)
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
