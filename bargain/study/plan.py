"""`bargain plan`: the power of a study's own design to find given effects, by simulation.

For each sample size, `sims` studies are simulated (bargain.study.simulate: the study's cells, games per participant,
assignment, distinct arms and quotas; participants' own levels and the games' noise as assumed, or as a pilot
export shows them) and each is analysed as `bargain analyse` would test it, with one simplification: the fits are
the cluster-robust ones of `bargain.analysis.robust` (least squares for the utility, a logit for the deal, CR1
errors, t on participants - 1 degrees of freedom), ~50x faster than M1 and M2 and a little conservative beside M1
in a within design (robust.py says why). Every contrast `analyse` reports (each arm minus the reference, per
condition and averaged over conditions) is tested, Holm's correction within each outcome, alpha 0.05. Power is
the share of simulated studies where a contrast is significant, with its Monte Carlo error sqrt(p (1 - p) / sims).

The utility's effect is a difference in the participant's normalised utility, the deal's a difference in the deal
rate (both as `analyse` estimates them). `pilot_parameters` reads the assumptions off a pilot export's games.csv
directly (until `bargain analyse`'s reading of exports is here to share).
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from bargain.analysis import latent
from bargain.analysis.marginal import contrasts, marginal_means
from bargain.analysis.models import GeeFit, MixedFit, fit_gee, fit_mixed
from bargain.analysis.robust import Link, fit_robust
from bargain.study.assumptions import Assumptions
from bargain.study.config import Study, StudyError, load
from bargain.study.simulate import Binary, Continuous, Effects, Outcome, Scale, seat, simulate

ALPHA = 0.05
TARGETS = (0.8, 0.9)  # the power whose smallest sample size is reported
OUTCOMES = {"utility": ("person_norm_utility", Link.IDENTITY), "deal": ("deal", Link.LOGIT)}  # name: column, link


class PlanError(ValueError):
    """A plan that cannot be made as asked; the message says what to change, in one line."""


@dataclass(frozen=True)
class Power:
    """The share of `sims` simulated studies of `participants` where a contrast (arm minus reference, in
    `condition` or averaged over conditions when None) was significant after Holm; `unfitted` counts the studies
    where it could not be estimated (counted as not significant)."""

    outcome: str
    arm: str
    condition: str | None
    participants: int
    power: float
    mc_error: float
    unfitted: int


def make_plan(
    study_path: str | Path,
    *,
    pilot: str | Path | None,
    assume: Sequence[str],
    effects: Sequence[str],
    participants: str,
    sims: int,
    seed: int,
    reference: str | None = None,
    progress: bool = False,
) -> str:
    """What `bargain plan` prints: the arguments checked (every problem before any simulation), then the power of
    every contrast at every size."""
    study = read_study(study_path)
    arm = reference_arm(study, reference)
    sizes = parse_sizes(participants)
    assumed = pilot_parameters(pilot, arm) if pilot else parse_assumptions(assume)
    wanted = parse_effects(effects, study, arm)
    outcomes = outcomes_for(assumed, wanted)
    seat(study, sizes[-1], random.Random(seed))  # the quotas seat the largest size, or SimulationError says so
    for outcome in outcomes.values():
        for cell in study.cells:
            outcome.cell_mean(cell.arm, cell.condition.value)  # every cell's rate is a probability
    results = power(study, outcomes, sizes, sims, seed, arm, progress)
    source = f"from the pilot export {pilot}" if pilot else "assumed" + ("" if assume else " (the defaults)")
    design = study.design
    header = [
        f"Study {study.name} v{study.version}: {design.assignment.value} subjects, {study.games_per_participant} "
        f"game(s) per participant, {len(study.cells)} cells; contrasts against arm {arm}.",
        f"Outcomes {source}: {assumed}.",
        "Effects: " + "; ".join(f"{name} {_effects_text(effect)}" for name, effect in wanted.items()) + ".",
        f"{sims} simulated studies per size (seed {seed}), each fitted by cluster-robust least squares (utility) or "
        f"logit (deal), CR1 errors, t on participants - 1 df; Holm within each outcome, alpha {ALPHA}.",
    ]
    return report(results, header)


def _effects_text(effects: Effects) -> str:
    """`+0.05 (b, c)`: each size and the arms it is given to."""
    arms: dict[float, list[str]] = {}
    for arm, size in effects.by_arm.items():
        arms.setdefault(size, []).append(arm)
    return ", ".join(f"{size:+g} ({', '.join(names)})" for size, names in arms.items())


def read_study(path: str | Path) -> Study:
    """The study file, or a PlanError listing its problems on one line."""
    try:
        return load(path)
    except StudyError as exc:
        raise PlanError("; ".join(exc.errors)) from exc


def parse_sizes(text: str) -> tuple[int, ...]:
    """`START:STOP:STEP` (STOP included) or one number: the numbers of participants to simulate."""
    try:
        parts = [int(part) for part in text.split(":")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        parts = [parts[0], parts[0], 1]
    if len(parts) != 3 or parts[0] < 2 or parts[1] < parts[0] or parts[2] < 1:
        raise PlanError(f"--participants {text}: write START:STOP:STEP (e.g. 40:400:40) or one number, at least 2")
    return tuple(range(parts[0], parts[1] + 1, parts[2]))


def parse_assumptions(pairs: Sequence[str]) -> Assumptions:
    """`NAME=VALUE` pairs over the defaults."""
    names = {f.name for f in dataclasses.fields(Assumptions)}
    given = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in names:
            raise PlanError(f"--assume {pair}: the names are {', '.join(sorted(names))}")
        given[name] = _number(f"--assume {pair}", value)
    return Assumptions(**given)


def parse_effects(pairs: Sequence[str], study: Study, reference: str) -> dict[str, Effects]:
    """`OUTCOME=VALUE` (every arm but the reference) or `OUTCOME:ARM=VALUE` (one arm) into each outcome's effects."""
    arms = [arm for arm in dict.fromkeys(cell.arm for cell in study.cells) if arm != reference]
    found: dict[str, dict[str, float]] = {}
    for pair in pairs:
        target, _, value = pair.partition("=")
        outcome, _, arm = target.partition(":")
        if outcome not in OUTCOMES:
            raise PlanError(f"--effect {pair}: the outcomes are {', '.join(OUTCOMES)}")
        if arm and arm not in arms:
            raise PlanError(f"--effect {pair}: {arm} is not one of the study's arms other than {reference}")
        size = _number(f"--effect {pair}", value)
        found.setdefault(outcome, {}).update(dict.fromkeys([arm] if arm else arms, size))
    if not found:
        raise PlanError("give the effects to find, e.g. --effect utility=0.05 --effect deal=0.10")
    return {outcome: Effects(by_arm) for outcome, by_arm in found.items()}


def reference_arm(study: Study, given: str | None) -> str:
    """The arm contrasts are taken against: `given`, or the study's first arm."""
    arms = list(dict.fromkeys(cell.arm for cell in study.cells))
    if given is not None and given not in arms:
        raise PlanError(f"--reference {given} is not an arm of the study; its arms: {', '.join(arms)}")
    return given or arms[0]


def outcomes_for(assumed: Assumptions, effects: Mapping[str, Effects]) -> dict[str, Outcome]:
    """The simulated outcomes, by name, of those with effects."""
    every: dict[str, Outcome] = {
        "utility": Continuous(
            assumed.utility_mean, effects.get("utility", Effects()), assumed.participant_sd, assumed.utility_sd
        ),
        "deal": Binary(
            assumed.deal_rate, effects.get("deal", Effects()), Scale.PROBABILITY, assumed.deal_participant_sd
        ),
    }
    return {name: outcome for name, outcome in every.items() if name in effects}


def _number(where: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise PlanError(f"{where}: {value!r} is not a number")
    return number


def power(
    study: Study,
    outcomes: Mapping[str, Outcome],
    sizes: Sequence[int],
    sims: int,
    seed: int,
    reference: str,
    progress: bool = False,
) -> tuple[Power, ...]:
    """Every contrast's power at every size; each size's studies drawn from its own stream of `seed`, so that a
    size gives the same numbers whatever other sizes are asked."""
    links = {OUTCOMES[name][0]: OUTCOMES[name][1] for name in outcomes}
    named = {OUTCOMES[name][0]: outcome for name, outcome in outcomes.items()}
    short = {OUTCOMES[name][0]: name for name in outcomes}
    keys = _contrasts_of(study, outcomes, reference)
    results = []
    with tqdm(total=len(sizes) * sims, desc="simulating", unit="study", disable=not progress) as bar:
        for n in sizes:
            rng = np.random.default_rng([seed, n])
            significant, estimated = dict.fromkeys(keys, 0), dict.fromkeys(keys, 0)
            for _ in range(sims):
                games = simulate(study, named, n, rng)
                fits = fit_robust(games, links, reference) if reference in set(games["arm"]) else ()
                for fit in fits:
                    for c in contrasts(fit):  # Holm's within the fit: within the outcome
                        key = (short[fit.outcome], c.arm, c.condition)
                        significant[key] += int(c.p_holm < ALPHA)
                        estimated[key] += int(not math.isnan(c.p_holm))
                bar.update()
            for key in keys:
                share = significant[key] / sims
                error = math.sqrt(share * (1 - share) / sims)
                results.append(Power(*key, n, share, error, sims - estimated[key]))
    return tuple(results)


def _contrasts_of(study: Study, outcomes: Mapping[str, Outcome], reference: str) -> list[tuple[str, str, str | None]]:
    """(outcome, arm, condition) of every contrast the analysis reports, in its order (arms and conditions as
    `bargain.analysis.design` orders levels; None: averaged over conditions, when there are several)."""
    arms = sorted({cell.arm for cell in study.cells} - {reference})
    named = sorted({cell.condition.value for cell in study.cells})
    conditions: list[str | None] = [*named, None] if len(named) > 1 else [*named]
    return [(name, arm, condition) for name in outcomes for arm in arms for condition in conditions]


def smallest(results: Sequence[Power], target: float) -> dict[tuple[str, str, str | None], int | None]:
    """Per contrast, the smallest size whose power reaches `target` (None: none of them)."""
    found: dict[tuple[str, str, str | None], int | None] = {}
    for r in sorted(results, key=lambda r: r.participants):
        key = (r.outcome, r.arm, r.condition)
        if found.get(key) is None:
            found[key] = r.participants if r.power >= target else None
    return found


def report(results: Sequence[Power], header: Sequence[str]) -> str:
    """The header lines, then a Markdown table: a row per contrast, power ± its Monte Carlo error per size, and
    the smallest size reaching each of TARGETS."""
    sizes = sorted({r.participants for r in results})
    reached = [smallest(results, target) for target in TARGETS]
    cells = {(r.outcome, r.arm, r.condition, r.participants): r for r in results}
    lines = [*header, ""]
    lines.append(
        "| outcome | arm | condition | "
        + " | ".join(map(str, sizes))
        + " | "
        + " | ".join(f"{target:.0%} at" for target in TARGETS)
        + " |"
    )
    lines.append("|---" * (3 + len(sizes) + len(TARGETS)) + "|")
    for key in dict.fromkeys((r.outcome, r.arm, r.condition) for r in results):
        shown = [f"{cells[(*key, n)].power:.2f} ± {cells[(*key, n)].mc_error:.2f}" for n in sizes]
        smallest_sizes = [str(found[key]) if found[key] is not None else f"> {sizes[-1]}" for found in reached]
        outcome, arm, condition = key
        lines.append(
            f"| {outcome} | {arm} | {condition or 'average'} | " + " | ".join([*shown, *smallest_sizes]) + " |"
        )
    missing = sum(r.unfitted for r in results)
    if missing:
        lines += ["", f"{missing} contrasts of simulated studies could not be estimated (counted as not significant)."]
    return "\n".join(lines)


def pilot_parameters(path: str | Path, reference: str) -> Assumptions:
    """The assumptions a pilot export shows: M1's variance components and reference mean for the utility, M2's
    reference deal rate and, from its working correlation, the participants' SD on the log odds
    (bargain.analysis.latent). The sample is `bargain analyse`'s own (bargain.study.analyse.sample): finished games
    of participants not excluded, the participant (or group of participants who played each other) the cluster."""
    from bargain.study.analyse import AnalysisError, read_export
    from bargain.study.analyse.sample import sample_of

    try:
        sample = sample_of(read_export(Path(path)))
    except AnalysisError as exc:
        raise PlanError(f"--pilot {path}: {exc}") from None
    if reference not in set(sample.rows["arm"]):
        raise PlanError(f"--pilot {path}: no finished game against the reference arm {reference}")
    utility = fit_mixed(sample.model_rows("person_norm_utility", per_game=False), "person_norm_utility", reference)
    deal = fit_gee(sample.model_rows("deal", per_game=True), "deal", reference)
    for fit in (utility, deal):
        if not fit.converged:
            raise PlanError(f"--pilot {path}: {fit.outcome}'s model could not be fitted ({'; '.join(fit.warnings)})")
    rate = _reference_mean(deal)
    return Assumptions(
        utility_mean=_reference_mean(utility),
        utility_sd=math.sqrt(utility.residual_variance),
        participant_sd=math.sqrt(utility.cluster_variance),
        deal_rate=rate,
        deal_participant_sd=latent.participant_sd(rate, deal.working_correlation),
    )


def _reference_mean(fit: MixedFit | GeeFit) -> float:
    """The reference arm's marginal mean, averaged over conditions."""
    means = [m.estimate for m in marginal_means(fit) if m.arm == fit.design.reference_arm]
    if not means or not all(math.isfinite(m) for m in means):
        raise PlanError(f"the pilot's reference arm has no estimable mean of {fit.outcome}")
    return float(np.mean(means))
