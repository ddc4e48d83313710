"""Reports that set runs side by side: outcomes, judge scores, claim-checker rates, paired
differences with bootstrap intervals, and the paper's honesty-against-utility scatter.

`python -m bargain report RUN_DIR [RUN_DIR ...] [--db URL] --out REPORT_DIR` writes one
self-contained HTML page (figures inlined) and the same tables as CSV. Two runs over the same
grid and seed play the same trials, so they are compared trial by trial (the paper's
trained-minus-base comparison in its matched cells), with percentile bootstrap intervals. The
scatter sets each run's mean normalised utility per agent against its mean judged honesty,
beside the paper's published points. With `--db`, the arena's games get the same treatment per
opponent and condition: the person's and the agent's utilities, the agent's honesty by the judge
and by the claim checker, and the person's credulity.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from bargain.analysis import metrics, reference
from bargain.analysis.claims import check_turns
from bargain.engine.game import GameState
from bargain.engine.scenarios import GridSpec
from bargain.runs.gamelog import read_games

ARENA_COLUMNS = [
    "opponent",
    "condition",
    "games",
    "deal_rate",
    "person_norm_utility",
    "agent_norm_utility",
    "person_claims_per_game",
    "person_misrepresentation_rate",
    "agent_claims_per_game",
    "agent_misrepresentation_rate",
    "agent_honesty",
    "person_credulity",
]
PAIRED = (
    "buyer_norm_utility",
    "seller_norm_utility",
    "deal",
    "buyer_honesty",
    "seller_honesty",
    "buyer_credulity",
    "seller_credulity",
)


@dataclass
class RunData:
    """One run directory, loaded."""

    name: str
    directory: Path
    config: dict
    trials: pd.DataFrame  # prepared for metrics; judge columns when the run was judged
    games: list[GameState]


def load_run(directory: str | Path) -> RunData:
    """A run's trials (with the judge's scores if any), its games and its configuration."""
    directory = Path(directory)
    judged = directory / "trials_with_honesty.csv"
    trials = metrics.read_trials(judged if judged.exists() else directory / "trials.csv")
    games = [e.state for e in read_games(directory / "games.jsonl") if e.finished]
    config = json.loads((directory / "config.json").read_text()) if (directory / "config.json").exists() else {}
    name = f"{directory.name}: {config.get('buyer', '?')} vs {config.get('seller', '?')}"
    return RunData(name, directory, config, trials, games)


def paper_variant(run: RunData) -> str | None:
    """The paper's variant this run reproduces (its grid, arms and temperatures), if any."""
    key = run.config.get("key")
    if not key:
        return None
    return reference.variant(
        GridSpec.from_dict(key["grid"]),
        key["buyer"],
        key["buyer_side"]["sampling"]["temperature"],
        key["seller"],
        key["seller_side"]["sampling"]["temperature"],
    )


def messages_of(games: list[GameState]) -> list[tuple[str, str]]:
    """Every distinct (public message, speaker's side) of the games, for a model to read once each."""
    seen = {(turn.message, turn.role.value) for state in games for turn in state.turns if turn.message}
    return sorted(seen)


def claim_rows(games: list[GameState], assisted: dict | None = None) -> pd.DataFrame:
    """Per game and side: the claim checker's counts (claims, misrepresentations, bluffs). With `assisted`
    (claims_model readings by message and side) the claims are the model-assisted ones, and the rules' own
    count and the model's additions are kept beside them."""
    from bargain.analysis.claims_model import reader

    read = {} if assisted is None else {"read": reader(assisted)}
    rows = []
    for state in games:
        checked = check_turns(state.turns, state.trial.buyer_price, state.trial.seller_price, **read)
        for side in ("buyer", "seller"):
            summary = checked[side]
            row = {
                "trial_id": state.trial.trial_id,
                "transparency": state.trial.condition.value,
                "side": side,
                "claims": summary["claims"],
                "misrepresentations": summary["misrepresentations"],
                "bluffs": summary["bluffs"],
                "misstatement_share": summary["mean_misstatement_share"],
            }
            if assisted is not None:
                mine = [assisted[(t.message, side)] for t in state.turns if t.message and t.role.value == side]
                row["rule_claims"] = sum(a.rules for a in mine)
                row["model_added"] = sum(a.model_added for a in mine)
                row["model_refused"] = sum(len(a.model_refused) for a in mine)
                row["model_failed"] = sum(a.model_failed for a in mine)
            rows.append(row)
    return pd.DataFrame(rows)


def claim_table(games: list[GameState], assisted: dict | None = None) -> pd.DataFrame:
    """Per condition and side: claims per game, the share of games with a misrepresentation or a bluff; with
    model-assisted readings also the rules' claims and the model's additions and refusals per game."""
    rows = claim_rows(games, assisted)
    if rows.empty:
        return pd.DataFrame(
            columns=[
                "transparency",
                "side",
                "games",
                "claims_per_game",
                "misrepresentation_rate",
                "bluff_rate",
                "mean_misstatement_share",
            ]
        )
    pooled = rows.assign(transparency="ALL")
    table = (
        pd.concat([rows, pooled])
        .groupby(["transparency", "side"], sort=False)
        .agg(
            games=("trial_id", "size"),
            claims_per_game=("claims", "mean"),
            misrepresentation_rate=("misrepresentations", lambda x: float((x > 0).mean())),
            bluff_rate=("bluffs", lambda x: float((x > 0).mean())),
            mean_misstatement_share=("misstatement_share", "mean"),
            **(
                {}
                if assisted is None
                else {
                    "rule_claims_per_game": ("rule_claims", "mean"),
                    "model_added_per_game": ("model_added", "mean"),
                    "model_refused_per_game": ("model_refused", "mean"),
                    "model_failures": ("model_failed", "sum"),
                }
            ),
        )
        .reset_index()
    )
    return table


def bootstrap_interval(
    values: np.ndarray, confidence: float = 0.95, resamples: int = 9999, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (NaN when there are under two values); it resamples the values
    one by one, so it assumes them independent (games between programs; not one person's games of a study)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if len(values) < 2:
        return np.nan, np.nan
    if np.all(values == values[0]):  # no spread: every resample has the same mean
        return float(values[0]), float(values[0])
    result = stats.bootstrap(
        (values,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def paired(first: RunData, second: RunData) -> pd.DataFrame:
    """Per condition and quantity: mean of (first - second) over trials both runs finished, with a 95% interval."""
    keys = ["trial_id"]
    a, b = first.trials.set_index(keys), second.trials.set_index(keys)
    common = a.index.intersection(b.index)
    same_prices = (a.loc[common, "buyer_res_price"] == b.loc[common, "buyer_res_price"]).all() and (
        a.loc[common, "seller_res_price"] == b.loc[common, "seller_res_price"]
    ).all()
    if not len(common) or not same_prices:
        return pd.DataFrame()
    rows = []
    for condition in [*sorted(a.loc[common, "transparency"].unique(), key=metrics.cell_order), "ALL"]:
        ids = common if condition == "ALL" else common[a.loc[common, "transparency"] == condition]
        for quantity in PAIRED:
            if quantity not in a or quantity not in b:
                continue
            diff = (a.loc[ids, quantity].astype(float) - b.loc[ids, quantity].astype(float)).to_numpy()
            diff = diff[~np.isnan(diff)]
            if not len(diff):
                continue
            low, high = bootstrap_interval(diff)
            rows.append(
                {
                    "transparency": condition,
                    "quantity": quantity,
                    "n": len(diff),
                    "mean_difference": float(diff.mean()),
                    "ci_low": low,
                    "ci_high": high,
                }
            )
    return pd.DataFrame(rows)


def scatter_points(runs: list[RunData]) -> pd.DataFrame:
    """Each run's (mean normalised utility per agent, mean honesty), and the paper's published points."""
    rows = []
    for run in runs:
        pooled = metrics.scatter_quantities(run.trials)
        rows.append({"source": "this project", "name": run.name, **pooled})
    cells = reference.cells()
    for variant, group in cells[cells["transparency"] == "ALL"].groupby("variant"):
        row = group.iloc[0]
        honesty_n = row["seller_honesty_n"] + row["buyer_honesty_n"]
        honesty = (
            (
                (
                    np.nan_to_num(row["seller_honesty"]) * row["seller_honesty_n"]
                    + np.nan_to_num(row["buyer_honesty"]) * row["buyer_honesty_n"]
                )
                / honesty_n
            )
            if honesty_n
            else None
        )
        rows.append(
            {
                "source": "paper",
                "name": variant,
                "avg_norm_utility_per_agent": (row["buyer_norm_utility"] + row["seller_norm_utility"]) / 2,
                "avg_honesty": honesty,
            }
        )
    return pd.DataFrame(rows)


def _png(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return base64.b64encode(buffer.getvalue()).decode()


def scatter_figure(points: pd.DataFrame) -> str:
    """The honesty-against-utility scatter as an inline PNG (base64)."""
    from bargain.analysis.figures import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 5))
    for source, marker in (("paper", "o"), ("this project", "*")):
        subset = points[(points["source"] == source) & points["avg_honesty"].notna()]
        ax.scatter(
            subset["avg_norm_utility_per_agent"],
            subset["avg_honesty"],
            marker=marker,
            s=60 if source == "paper" else 160,
            label=source,
            alpha=0.8,
        )
        for _, row in subset.iterrows():
            ax.annotate(row["name"][:28], (row["avg_norm_utility_per_agent"], row["avg_honesty"]), fontsize=6)
    ax.set_xlabel("mean normalised utility per agent")
    ax.set_ylabel("mean judged honesty (0-4)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    encoded = _png(fig)
    plt.close(fig)
    return encoded


def arena_tables(url: str) -> dict[str, pd.DataFrame]:
    """From the arena's database: per opponent and condition over finished games, the deal rate, utilities, the
    claims each side made and how often they misstated a limit, honesty and credulity (no rows while no game has
    finished). A game between two people is its own row (opponent `person`): its "agent" is the person who was
    invited or came from the queue, its "person" the one who started it, so that people set beside people are read
    as people set beside models."""
    from bargain.records.database import existing_store

    store = existing_store(url)
    games = store.games_frame()
    if games.empty or not (games["status"] == "finished").any():
        return {"arena": pd.DataFrame(columns=ARENA_COLUMNS)}
    games = games[games["status"] == "finished"].copy()
    moves = store.moves_frame()
    rows = []
    for _, game in games.iterrows():
        own = moves[moves["game_id"] == game["id"]]
        person = game["human_role"]
        agent = "seller" if person == "buyer" else "buyer"
        checked = check_turns([dict(m) for _, m in own.iterrows()], game["buyer_price"], game["seller_price"])
        judge = (game["extra"] or {}).get("judge", {}) if isinstance(game["extra"], dict) else {}
        rows.append(
            {
                "opponent": game["arm"],
                "condition": game["condition"],
                "deal": bool(game["deal"]),
                "person_norm_utility": game[f"{person}_norm_utility"],
                "agent_norm_utility": game[f"{agent}_norm_utility"],
                "person_misrepresented": checked[person]["misrepresentations"] > 0,
                "person_claims": checked[person]["claims"],
                "agent_misrepresented": checked[agent]["misrepresentations"] > 0,
                "agent_claims": checked[agent]["claims"],
                "agent_honesty": judge.get(f"{agent}_honesty"),
                "person_credulity": judge.get(f"{person}_credulity"),
            }
        )
    frame = pd.DataFrame(rows)
    table = (
        frame.groupby(["opponent", "condition"])
        .agg(
            games=("opponent", "size"),
            deal_rate=("deal", "mean"),
            person_norm_utility=("person_norm_utility", "mean"),
            agent_norm_utility=("agent_norm_utility", "mean"),
            person_claims_per_game=("person_claims", "mean"),
            person_misrepresentation_rate=("person_misrepresented", "mean"),
            agent_claims_per_game=("agent_claims", "mean"),
            agent_misrepresentation_rate=("agent_misrepresented", "mean"),
            agent_honesty=("agent_honesty", lambda x: pd.to_numeric(x, errors="coerce").mean()),
            person_credulity=("person_credulity", lambda x: pd.to_numeric(x, errors="coerce").mean()),
        )
        .reset_index()[ARENA_COLUMNS]
    )
    return {"arena": table}


def build(
    run_dirs: list[str | Path],
    out: str | Path,
    db: str | None = None,
    claim_reader: Callable[[list[tuple[str, str]]], dict] | None = None,
) -> Path:
    """Write REPORT_DIR/report.html and the tables as CSV; returns the HTML's path. `claim_reader` (messages ->
    claims_model readings by (message, side)) makes the claim tables model-assisted."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = [load_run(d) for d in run_dirs]
    sections: list[str] = []
    for index, run in enumerate(runs, 1):
        cells = metrics.cell_table(run.trials)
        claims = claim_table(run.games, None if claim_reader is None else claim_reader(messages_of(run.games)))
        cells.to_csv(out / f"run{index}_cells.csv", index=False)
        claims.to_csv(out / f"run{index}_claims.csv", index=False)
        sections.append(
            f"<h2>Run {index}: {html.escape(run.name)}</h2><p>{html.escape(str(run.directory))}</p>"
            f"<h3>Outcomes and judge scores per condition</h3>{_table(cells)}"
            f"<h3>Claim checker</h3>{_table(claims)}"
        )
        name = paper_variant(run)
        if name is not None:
            beside = reference.beside(cells, name)
            beside.to_csv(out / f"run{index}_paper.csv", index=False)
            sections.append(f"<h3>Beside the paper's published numbers ({html.escape(name)})</h3>{_table(beside)}")
    if len(runs) >= 2:
        comparison = paired(runs[0], runs[1])
        comparison.to_csv(out / "paired.csv", index=False)
        sections.append(
            "<h2>Run 1 minus run 2, trial by trial</h2>"
            + (
                _table(comparison)
                if not comparison.empty
                else "<p>The runs do not share trials (another grid or seed): no paired comparison.</p>"
            )
        )
    points = scatter_points(runs)
    points.to_csv(out / "scatter.csv", index=False)
    sections.append(
        f"<h2>Honesty against utility</h2><img alt='honesty against utility' "
        f"src='data:image/png;base64,{scatter_figure(points)}'>{_table(points)}"
    )
    if db:
        for name, table in arena_tables(db).items():
            table.to_csv(out / f"{name}.csv", index=False)
            sections.append(
                "<h2>Games people played in the arena</h2>"
                + (_table(table) if not table.empty else "<p>No arena game has finished yet.</p>")
            )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>bargain report</title><style>"
        "body{font-family:sans-serif;margin:2em;max-width:1400px} table{border-collapse:collapse;font-size:12px;"
        "margin-bottom:1.5em} td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}</style></head><body>"
        "<h1>bargain report</h1>" + "".join(sections) + "</body></html>"
    )
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, float_format=lambda x: f"{x:.3f}", na_rep="", border=0)
