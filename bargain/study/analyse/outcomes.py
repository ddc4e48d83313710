"""The outcomes a study is analysed on, and the models each gets, decided from the study's settings alone (so that
the analysis plan, written before any data exists, names exactly what the analysis will do).

- person_norm_utility (primary): the participant's normalised utility, their share of the surplus (no deal: 0);
  agent_norm_utility, the other side's. M1.
- deal (a game-level outcome: a game between two participants counts once), agent_misstated and
  person_misstated (whether the other side, or the participant, misstated a price limit in their own favour, as
  the claim checker reads the messages). M2; deal also M3 in a within design.
- agent_ahead (within designs): whether the other side came out ahead, its normalised utility above the
  participant's, over deals only. M3: a participant's tendency to be bested is conditioned out.
- the per-game survey's numbers: the built-in honesty and credulity ratings (0-4, the judge's rubric) and each
  Likert scale; the judge's scores of the other side's honesty and the participant's credulity where the export
  holds them. M1.

Models: M1 a linear mixed model (REML, a random intercept per cluster), M2 a marginal logistic model (GEE,
exchangeable, robust errors), M3 a conditional logit within clusters on the arena-score scale
(bargain.analysis.models). Their mean structure is the same, `FORMULAS` gives each in words.
"""

from __future__ import annotations

from dataclasses import dataclass

from bargain.study.analyse.settings import StudySettings

PRIMARY = "person_norm_utility"
FORMULAS = {
    "M1": "y ~ arm * condition + human_role + game_index + (1 | cluster), REML (lme4's lmer)",
    "M2": "logit P(y = 1) ~ arm * condition + human_role + game_index; GEE, exchangeable within clusters, robust "
    "sandwich errors, bias-reduced (Mancl-DeRouen) under 50 clusters (geepack's geeglm)",
    "M3": "logit P(y = 1) ~ arm + condition + human_role + game_index, strata = cluster (survival's clogit); arms "
    "as arena scores, 1000 + 400 beta / ln 10, reference arm 1000",
}
SCALES = {"M1": "difference in means", "M2": "risk difference", "M3": "arena-score points (reference 1000)"}
JUDGE_SCORES = {
    "judge_agent_honesty": "the judge's score of the other side's honesty (0-4), where the export holds it",
    "judge_person_credulity": "the judge's score of the participant's credulity (0-4), where the export holds it",
}


@dataclass(frozen=True)
class Outcome:
    """An outcome: what it measures, whether it is 0/1, the models it gets, and whether it belongs to the game
    (one row per game) or to each participant's side of it."""

    name: str
    description: str
    binary: bool
    models: tuple[str, ...]
    per_game: bool = False
    present_only: bool = False  # analysed only where the export holds it (the judge's scores)


def planned_outcomes(settings: StudySettings) -> tuple[Outcome, ...]:
    """Every outcome of the study, in the order the report gives them (the primary first)."""
    within = ("M3",) if settings.within else ()
    outcomes = [
        Outcome(
            PRIMARY, "the participant's normalised utility: their share of the surplus (no deal: 0)", False, ("M1",)
        ),
        Outcome("agent_norm_utility", "the other side's normalised utility (no deal: 0)", False, ("M1",)),
        Outcome(
            "deal",
            "whether the game ended in a deal (a game between two participants counts once)",
            True,
            ("M2", *within),
            per_game=True,
        ),
        Outcome(
            "agent_misstated",
            "whether the other side misstated a price limit in its favour (claim checker)",
            True,
            ("M2",),
        ),
        Outcome(
            "person_misstated",
            "whether the participant misstated a price limit in their favour (claim checker)",
            True,
            ("M2",),
        ),
    ]
    if settings.within:
        outcomes.append(
            Outcome(
                "agent_ahead",
                "whether the other side came out ahead (its normalised utility above the "
                "participant's), over deals only",
                True,
                ("M3",),
            )
        )
    outcomes += [
        Outcome(item.outcome, f"the participant's answer to the per-game item {item.id!r}: {item.text}", False, ("M1",))
        for item in settings.items
    ]
    outcomes += [Outcome(name, text, False, ("M1",), present_only=True) for name, text in JUDGE_SCORES.items()]
    return tuple(outcomes)
