"""The analysis plan, written from the study file alone before any data exists (pre-registration), and the
deviations of an analysis from it.

`plan_of` is the one description of what the analysis does, used both ways: `bargain analyse --plan-only
STUDY.yaml` writes it (analysis_plan.json, and analysis_plan.md for people) and every analysis records its own in
analysis.json, so that `deviations` compares like with like: the study (name, versions, hash), the design, arms
and reference, the sample's rules, every outcome with its models and formulas, the contrasts, alpha, the
correction, the bootstrap's B and seed. What only the data can tell is listed too: a planned model not fitted or
not converged, terms the data could not carry (dropped, as the plan's rule says, and named), contrasts not
estimable. The plan's SHA-256 (of the file's bytes) goes into the report's header.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from bargain.analysis.bootstrap import LEVEL
from bargain.analysis.marginal import MIN_CLUSTERS
from bargain.study.analyse.exported import AnalysisError
from bargain.study.analyse.leaderboard import QUANTITIES
from bargain.study.analyse.outcomes import FORMULAS, SCALES, planned_outcomes
from bargain.study.analyse.settings import StudySettings, settings_from_configs
from bargain.study.config import StudyError, load

ALPHA = 0.05
CORRECTION = "Holm within each outcome and model"
PLAN_FILES = ("analysis_plan.json", "analysis_plan.md")
COMPARED = ("study", "design", "arms", "reference", "conditions", "roles", "sample", "contrasts", "alpha",
            "interval_percent", "correction", "min_clusters", "leaderboard", "bootstrap", "seed")  # fmt: skip


def plan_of(settings: StudySettings, reference: str, bootstrap: int, seed: int) -> dict:
    """What the analysis of this study does, as JSON-ready data (see the module's docstring)."""
    rated = {item.outcome for item in settings.items}
    return {
        "study": {"name": settings.name, "versions": list(settings.versions), "hashes": list(settings.hashes)},
        "design": "within" if settings.within else "between",
        "arms": [arm.key for arm in settings.arms],
        "reference": reference,
        "conditions": list(settings.conditions),
        "roles": list(settings.roles),
        "sample": {
            "primary": "the finished games of participants not excluded",
            "exclusion_rules": list(settings.exclusions),
            "sensitivity": "with --all-participants, the same analysis with the excluded included, reported beside",
            "moves": "moves flagged duplicate are ignored (never part of a game as played)",
            "fallback": "a game played instead of a person arm counts as the arm played (pairing.otherwise), flagged",
            "unit": "the participant; where participants played each other, the group of participants linked by "
            "their games together",
            "game_level": "a game between two participants counts once for deal (the buyer's row)",
        },
        "outcomes": [
            {
                "name": o.name,
                "description": o.description,
                "binary": o.binary,
                "per_game": o.per_game,
                "present_only": o.present_only,
                "models": [{"model": m, "formula": FORMULAS[m], "scale": SCALES[m]} for m in o.models],
            }
            for o in planned_outcomes(settings)
        ],
        "contrasts": "each arm minus the reference arm in each condition and averaged over conditions with equal "
        "weights, from estimated marginal means with equal weights over human_role and game_index; M3: each arm's "
        "arena score minus the reference's",
        "alpha": ALPHA,
        "interval_percent": round(LEVEL * 100),
        "correction": CORRECTION,
        "min_clusters": MIN_CLUSTERS,
        "leaderboard": {
            "quantities": [q for q in QUANTITIES if not q.startswith("rated_") or q in rated],
            "interval": "cluster bootstrap, percentile; rank intervals 2.5-97.5% of bootstrap ranks; separated "
            "rank: 1 + arms whose interval lies wholly above",
        },
        "bootstrap": bootstrap,
        "seed": seed,
    }


def write_plan(study_file: Path, out: Path, *, reference: str | None, bootstrap: int, seed: int) -> list[Path]:
    """analysis_plan.json and analysis_plan.md in `out`, from the study file alone."""
    try:
        study = load(study_file)
    except StudyError as error:
        raise AnalysisError(
            f"{study_file}: {len(error.errors)} problem(s) in the study file, the first: {error.errors[0]}"
        ) from None
    settings = settings_from_configs(study.name, [study.to_dict()])
    keys = [arm.key for arm in settings.arms]
    if reference is not None and reference not in keys:
        raise AnalysisError(f"unknown --reference {reference!r}: the study's arms are {', '.join(keys)}")
    plan = plan_of(settings, reference or keys[0], bootstrap, seed)
    out.mkdir(parents=True, exist_ok=True)
    json_path, markdown_path = out / PLAN_FILES[0], out / PLAN_FILES[1]
    json_path.write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")
    markdown_path.write_text(plan_markdown(plan, sha256(json_path)), encoding="utf-8")
    return [json_path, markdown_path]


def sha256(path: Path) -> str:
    """A file's SHA-256, hexadecimal."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_plan(path: Path) -> dict:
    """A plan written by `write_plan`; an AnalysisError says why one cannot be used."""
    try:
        plan = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise AnalysisError(f"cannot read the plan {path}: {error}") from None
    if not isinstance(plan, dict) or not set(COMPARED) <= set(plan):
        raise AnalysisError(f"{path} is not an analysis plan (write one with `bargain analyse --plan-only STUDY.yaml`)")
    return plan


def deviations(plan: dict, numbers: dict) -> list[str]:
    """Every way the analysis in `numbers` departs from `plan`, in words, in the plan's order."""
    done = numbers["plan"]
    found = [f"{key}: planned {_said(plan[key])}; analysed {_said(done[key])}" for key in COMPARED
             if plan[key] != done[key]]  # fmt: skip
    planned = {(o["name"], m["model"]): m["formula"] for o in plan["outcomes"] for m in o["models"]}
    analysed = {(o["name"], m["model"]): m["formula"] for o in done["outcomes"] for m in o["models"]}
    found += [
        f"{name} {model}: planned, not in this analysis" for name, model in planned if (name, model) not in analysed
    ]
    found += [f"{name} {model}: analysed, not planned" for name, model in analysed if (name, model) not in planned]
    found += [
        f"{name} {model}: formula planned {planned[key]!r}, analysed {analysed[key]!r}"
        for key in planned
        if key in analysed and planned[key] != analysed[key]
        for name, model in [key]
    ]
    converged = set()
    for model in numbers["models"]:
        where = f"{model['outcome']} {model['model']}"
        if not model["converged"]:
            found.append(f"{where}: not estimated: {model['reason']}")
            continue
        converged.add((model["outcome"], model["model"]))
        if model["dropped"]:
            found.append(f"{where}: fitted without {'; '.join(model['dropped'])} (terms the data cannot carry)")
    found += [
        f"{row['outcome']} {row['model']} {row['arm']} - {row['reference']} ({row['condition']}): "
        f"not estimable ({reason})"
        for row, reason in zip(numbers["tables"]["contrasts"], numbers["contrast_reasons"])
        if reason and (row["outcome"], row["model"]) in converged
    ]
    return found


def plan_markdown(plan: dict, digest: str) -> str:
    """The plan for people: what will be analysed and how, in the order of the JSON."""
    lines = [
        f"# Analysis plan: study {plan['study']['name']}, version(s) {', '.join(map(str, plan['study']['versions']))}",
        "",
        f"SHA-256 of analysis_plan.json: `{digest}`. Study hash(es): {', '.join(plan['study']['hashes'])}.",
        "",
        f"- Design: {plan['design']} subjects; arms {', '.join(plan['arms'])} (reference: {plan['reference']}); "
        f"conditions {', '.join(plan['conditions'])}; roles {', '.join(plan['roles'])}.",
        *(
            f"- Sample, {key.replace('_', ' ')}: {value if isinstance(value, str) else ', '.join(value) or 'none'}."
            for key, value in plan["sample"].items()
        ),  # fmt: skip
        f"- Contrasts: {plan['contrasts']}.",
        f"- Alpha {plan['alpha']}, {plan['interval_percent']}% intervals; correction: {plan['correction']}; a cell "
        f"seen in fewer than {plan['min_clusters']} clusters is not estimable.",
        f"- Leaderboard: {', '.join(plan['leaderboard']['quantities'])}; {plan['leaderboard']['interval']}; "
        f"B = {plan['bootstrap']} resamples, seed {plan['seed']}.",
        "",
        "## Outcomes and models",
        "",
    ]
    for outcome in plan["outcomes"]:
        lines.append(f"- **{outcome['name']}**: {outcome['description']}.")
        lines += [f"  - {m['model']} ({m['scale']}): `{m['formula']}`" for m in outcome["models"]]
    return "\n".join(lines) + "\n"


def _said(value: object) -> str:
    """A planned or analysed value in a deviation's words."""
    return json.dumps(value) if not isinstance(value, str) else value
