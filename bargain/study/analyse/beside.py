"""The study's cells beside language models playing the same arms: the paper's LLM-vs-LLM cells (bundled,
bargain.analysis.reference) and this project's own runs (`simulate` / `evaluate` directories), with a human minus
LLM difference and its interval.

A study cell is (arm, condition, role): a participant in `role` against the arm in the other role. Its match in
the paper is the variant in which the arm's spec plays that other role against the base model (Qwen3-8B), which
plays the participant's role: so each difference reads "a person in this seat minus the base model in it". A run
matches when the arm's spec played the other role; its counterpart in the participant's seat is named. The human
cell's mean and standard error are the cluster bootstrap's (bargain.study.analyse.leaderboard); a run's trials are
independent games, so its standard error is SD / sqrt(n); the paper publishes a spread only through its deal rate
(binomial), so its utilities and judge scores are taken as exact, and the row says so. The difference's interval
is the normal one, difference +- 1.96 sqrt(se_human^2 + se_llm^2).

What is compared: the participant's utility with the LLM's in the same seat, the agent's utility with the arm's,
the deal rate, the rate at which the agent misstated a limit (runs, through the claim checker; the paper reports
none), and the participant's honesty rating of the agent with the judge's score of the arm (the same 0-4 rubric,
a different rater). A cell whose rules differ from the compared one (rounds, scenarios, prompt wording, mode) is
flagged with the differences in words. A person arm and arms with nothing to match stay in the table with the
human side only: the human-human baseline is one more arm.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bargain.analysis.models import Z95
from bargain.analysis.reference import VARIANTS, cells
from bargain.engine.scenarios import GRIDS
from bargain.study.analyse.exported import AnalysisError
from bargain.study.analyse.settings import StudySettings

OTHER = {"buyer": "seller", "seller": "buyer"}
PAPER_GRID = GRIDS["paper-rl-test"]
PAPER_PROMPTS = "paper-eval"  # the wording of the paper's evaluation runs
PAPER = "the paper"
MODELS = ("arm:", "openai:")  # specs of arms that read prompts
COLUMNS = [
    "arm",
    "condition",
    "human_role",
    "quantity",
    "human",
    "human_ci_low",
    "human_ci_high",
    "n_games",
    "n_clusters",
    "source",
    "counterpart",
    "llm",
    "llm_n",
    "difference",
    "ci_low",
    "ci_high",
    "differs",
]


@dataclass(frozen=True, eq=False)
class Run:
    """A run directory's trials with the rules they were played under and, per trial, whether each side misstated
    a limit (NaN without games.jsonl)."""

    name: str
    trials: pd.DataFrame
    file: str  # the trials file read, and its SHA-256
    sha256: str


def read_runs(paths: Sequence[Path]) -> list[Run]:
    """The runs at `paths`, each a `simulate` or `evaluate` directory (trials.parquet); an AnalysisError names one
    that is not."""
    from bargain.analysis.claims import findings  # the claim checker and the game log load only for runs
    from bargain.runs.gamelog import read_games

    runs = []
    for path in paths:
        path = Path(path)
        judged, plain = path / "trials_with_honesty.parquet", path / "trials.parquet"
        if not plain.exists():
            raise AnalysisError(
                f"{path} is not a run directory (no trials.parquet): give `simulate` or `evaluate` output"
            )
        chosen = judged if judged.exists() else plain
        trials = pd.read_parquet(chosen)
        for role in OTHER:
            trials[f"{role}_misstated"] = np.nan
        if (path / "games.jsonl").exists():
            said = {
                e.trial.trial_id: findings(e.state.turns, e.trial.buyer_price, e.trial.seller_price)
                for e in read_games(path / "games.jsonl")
            }
            for role in OTHER:
                trials[f"{role}_misstated"] = [
                    float(any(f["role"] == role and f["misrepresentation"] is True for f in said[t]))
                    if t in said
                    else np.nan
                    for t in trials["trial_id"]
                ]
        runs.append(
            Run(path.name, trials, f"{path.name}/{chosen.name}", hashlib.sha256(chosen.read_bytes()).hexdigest())
        )
    return runs


def beside_table(
    human: pd.DataFrame, settings: StudySettings, runs: Sequence[Run], games: pd.DataFrame
) -> pd.DataFrame:
    """Every human cell and quantity (leaderboard.cell_summary) beside each match, the paper's and the runs'."""
    rows = []
    rules = _study_rules(settings, games)
    for cell in human.itertuples():
        spec = settings.arm(cell.arm).spec if cell.arm in {a.key for a in settings.arms} else cell.arm
        agent_role = OTHER[cell.human_role]
        base = {c: getattr(cell, c) for c in ("arm", "condition", "human_role", "quantity", "n_games", "n_clusters")}
        base |= {"human": cell.estimate, "human_ci_low": cell.ci_low, "human_ci_high": cell.ci_high}
        matches = [
            m
            for m in (_paper(spec, cell, agent_role, rules), *(_run(r, spec, cell, agent_role, rules) for r in runs))
            if m
        ]
        if not matches:
            rows.append(base | {"source": "", "counterpart": "", "differs": ""})
        for source, counterpart, value, se, n, differs in matches:
            difference = cell.estimate - value
            half = Z95 * math.sqrt(cell.se**2 + (0.0 if math.isnan(se) else se**2))
            rows.append(
                base
                | {
                    "source": source,
                    "counterpart": counterpart,
                    "llm": value,
                    "llm_n": n,
                    "difference": difference,
                    "ci_low": difference - half,
                    "ci_high": difference + half,
                    "differs": differs,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def _study_rules(settings: StudySettings, games: pd.DataFrame) -> dict[str, object]:
    """The rules the study's games were played under: from its settings, else from its games."""
    return {
        "rounds": settings.rounds or (int(games["max_rounds"].iloc[0]) if len(games) else None),
        "mode": settings.mode or (str(games["mode"].iloc[0]) if len(games) else None),
        "prompt_version": settings.prompt_version or (str(games["prompt_version"].iloc[0]) if len(games) else None),
        "scenarios": set(settings.scenarios) or set(games["scenario"]),
    }


def _differences(rules: dict[str, object], rounds: int, mode: str, prompts: str, scenarios: set[str], spec: str) -> str:
    """How the compared games' rules differ from the study's, in words ("" when they do not); the prompts' wording
    only where the arm reads prompts (a model, not a tactic)."""
    said = []
    if rules["rounds"] != rounds:
        said.append(f"rounds {rules['rounds']} vs {rounds}")
    if rules["mode"] != mode:
        said.append(f"mode {rules['mode']} vs {mode}")
    if spec.startswith(MODELS) and rules["prompt_version"] != prompts:
        said.append(f"prompts {rules['prompt_version']} vs {prompts}")
    if rules["scenarios"] != scenarios:
        said.append(f"scenarios ({len(rules['scenarios'])} vs {len(scenarios)}, not the same set)")  # type: ignore[arg-type]
    return "; ".join(said)


def _paper(spec: str, cell, agent_role: str, rules: dict) -> tuple | None:
    """The paper's cell where `spec` plays `agent_role` against the base model, for this quantity, if any."""
    wanted = [
        name
        for key, name in VARIANTS.items()
        if key[0 if agent_role == "buyer" else 2] == spec and key[2 if agent_role == "buyer" else 0] == "arm:base"
    ]
    table = cells()
    found = table[table["variant"].isin(wanted) & (table["transparency"] == cell.condition)]
    if found.empty:
        return None
    paper = found.sort_values("variant").iloc[0]
    column = {
        "person_norm_utility": f"{cell.human_role}_norm_utility",
        "agent_norm_utility": f"{agent_role}_norm_utility",
        "deal": "deal_rate",
        "rated_honesty": f"{agent_role}_honesty",
    }.get(cell.quantity)
    if column is None or pd.isna(paper[column]):
        return None
    n = int(paper[f"{column}_n"]) if f"{column}_n" in paper else int(paper["n"])
    value = float(paper[column])
    se = math.sqrt(value * (1 - value) / n) if cell.quantity == "deal" else math.nan
    scenarios = {f"{PAPER_GRID.tier}:{i}" for i in range(PAPER_GRID.start or 0, PAPER_GRID.stop or 0)}
    differs = _differences(rules, int(paper["max_rounds"]), PAPER_GRID.mode.value, PAPER_PROMPTS, scenarios, spec)
    if cell.quantity == "rated_honesty":
        differs = "; ".join(filter(None, ["rated by the participant, scored by the paper's judge", differs]))
    if math.isnan(se):
        differs = "; ".join(filter(None, [differs, "the paper publishes no spread: its value taken as exact"]))
    return f"{PAPER}: {paper['variant']}", "Qwen3-8B base", value, se, n, differs


def _run(run: Run, spec: str, cell, agent_role: str, rules: dict) -> tuple | None:
    """A run's trials where `spec` played `agent_role`, in the cell's condition, for this quantity, if any."""
    trials = run.trials
    chosen = trials[(trials[f"{agent_role}_agent"] == spec) & (trials["transparency"] == cell.condition)]
    column = {
        "person_norm_utility": f"{cell.human_role}_norm_utility",
        "agent_norm_utility": f"{agent_role}_norm_utility",
        "deal": "deal",
        "agent_misstated": f"{agent_role}_misstated",
        "rated_honesty": f"{agent_role}_honesty",
    }.get(cell.quantity)
    if chosen.empty or column is None or column not in chosen:
        return None
    values = (chosen[column] == "deal").astype(float) if column == "deal" else chosen[column].astype(float)
    values = values.dropna()
    if values.empty:
        return None
    first = chosen.iloc[0]
    differs = _differences(
        rules, int(first["max_rounds"]), str(first["mode"]), str(first["prompt_version"]), set(chosen["scenario"]), spec
    )
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.nan
    return f"run: {run.name}", str(first[f"{cell.human_role}_agent"]), float(values.mean()), se, len(values), differs
