"""The fixed-effects design of a study's game rows: treatment-coded columns named in words, the
terms the data cannot carry dropped and named, and what the data can estimate.

The mean structure is R's `arm * condition + human_role + factor(game_index)` (lme4, geepack and
emmeans all read it so): an intercept, each factor's levels but its reference (the chosen reference
arm; the first condition, role and game in sorted order, as R's `factor()` orders them), then the
arm x condition interaction, in R's `model.matrix` column order, so that coefficients line up one
for one with R's. A conditional logit (`within_clusters`) has no intercept and no interaction, and
only what varies inside a cluster.

What R does silently we name: a factor with one level in the data is left out ("human_role: only
buyer"); a column the data cannot tell from earlier ones (an arm x condition cell with no games, or
a level aliased with other terms) is left out with its reason, keeping the first of the aliased
columns as R's pivoted QR does. Whether a combination of coefficients (an estimated marginal mean)
is estimable is checked as emmeans does: it must be orthogonal to the null space of the full design
matrix.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

FACTORS = ("arm", "condition", "human_role", "game_index")
# relative size below which a column or singular value counts as zero (emmeans' 1e-8)
NULL_TOLERANCE = 1e-8


@dataclass(frozen=True)
class Column:
    """One column of the design: the product of indicators of (factor, level) pairs; none for the
    intercept."""

    name: str
    indicators: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Cell:
    """An (arm, condition) cell of the data: its games and its clusters, the units of
    independence."""

    arm: str
    condition: str
    n_games: int
    n_clusters: int


@dataclass(frozen=True)
class Design:
    """The columns a model was fitted with, and what is needed to build and check rows of a
    reference grid.

    `levels` lists each factor's levels present in the data, reference first; `candidates` every
    column the mean structure asks for, `columns` those kept (the fitted coefficients, in order),
    `dropped` the others and the factors left out, each with its reason; `null_space` spans the
    combinations of candidate columns the data cannot estimate.
    """

    reference_arm: str
    levels: tuple[tuple[str, tuple[str, ...]], ...]
    candidates: tuple[Column, ...]
    columns: tuple[Column, ...]
    dropped: tuple[str, ...]
    null_space: tuple[tuple[float, ...], ...]
    cells: tuple[Cell, ...]

    def factor_levels(self, factor: str) -> tuple[str, ...]:
        """The levels of `factor` present in the data, reference first."""
        return dict(self.levels)[factor]

    def cell(self, arm: str, condition: str) -> Cell:
        """The data's (arm, condition) cell; an empty one when no game fell in it."""
        for cell in self.cells:
            if (cell.arm, cell.condition) == (arm, condition):
                return cell
        return Cell(arm, condition, 0, 0)

    def row(self, values: dict[str, str]) -> np.ndarray:
        """The candidate columns' values at one point of the reference grid (a level for every
        factor)."""
        return np.array(
            [float(all(values[f] == level for f, level in c.indicators)) for c in self.candidates]
        )

    def kept(self, row: np.ndarray) -> np.ndarray:
        """A candidate row restricted to the fitted columns (the dropped coefficients are 0, as in
        R)."""
        return row[self._kept_at]

    @cached_property
    def _kept_at(self) -> list[int]:
        """The fitted columns' places among the candidates (found once: `bargain plan` asks for
        every grid point of every simulated study)."""
        return [self.candidates.index(c) for c in self.columns]

    def estimable(self, row: np.ndarray) -> bool:
        """Whether the data determine `row`'s value whatever the dropped columns' coefficients
        (emmeans' test)."""
        if not self.null_space:
            return True
        projection = np.asarray(self.null_space) @ row
        return bool(
            np.max(np.abs(projection)) <= NULL_TOLERANCE * max(1.0, float(np.max(np.abs(row))))
        )


def game_rows(games: pd.DataFrame, *outcomes: str) -> pd.DataFrame:
    """The rows with every one of the outcomes, factors as text, in one canonical order (the same
    input in any row order gives the same fit, to the last digit); several outcomes share the rows
    and so one design.

    The order is by cluster (as text), game, arm, condition, role, then the outcomes: one stable
    sort of numpy arrays (`bargain plan` calls this for every simulated study, and pandas' own sort
    of text columns took longer than the fit)."""
    missing = [c for c in ("cluster", *FACTORS, *outcomes) if c not in games.columns]
    if missing:
        raise ValueError(f"game rows lack the column(s) {', '.join(missing)}")
    present = np.logical_and.reduce([games[o].notna().to_numpy() for o in outcomes])
    if not present.any():
        raise ValueError(f"no game has an outcome {' and '.join(map(repr, outcomes))}")

    def picked(column: str) -> np.ndarray:  # a column's values in the games with every outcome
        return games[column].to_numpy()[present]

    game = picked("game_index").astype(int)
    text = {c: picked(c).astype(str) for c in ("cluster", "arm", "condition", "human_role")}
    values = {outcome: picked(outcome).astype(float) for outcome in outcomes}
    keys = (
        text["cluster"],
        game,
        text["arm"],
        text["condition"],
        text["human_role"],
        *values.values(),
    )
    order = np.lexsort(keys[::-1])  # the last key given sorts first
    columns = {**text, "game_index": game.astype(str), **values}
    return pd.DataFrame({c: columns[c][order] for c in ("cluster", *FACTORS, *outcomes)})


def factor_levels(rows: pd.DataFrame, factor: str, reference: str | None = None) -> tuple[str, ...]:
    """A factor's levels in the data, reference first: the given one, else the first in sorted order
    (games numerically)."""
    present = sorted(set(rows[factor].to_numpy()), key=int if factor == "game_index" else str)
    if reference is None:
        return tuple(present)
    return (reference, *[level for level in present if level != reference])


def _independent_columns(
    full: np.ndarray,
    candidates: list[Column],
    constant: set[str],
    games_in: list[bool],
    dropped: list[str],
) -> list[int]:
    """The candidate columns kept, in order: each that varies and is not aliased with those kept
    before it; why each other one is dropped is added to `dropped`."""
    kept: list[int] = []
    basis = np.zeros((full.shape[0], 0))
    for i, column in enumerate(candidates):
        if column.indicators and column.indicators[0][0] in constant:
            continue
        x = full[:, i]
        norm = float(np.linalg.norm(x))
        if norm <= NULL_TOLERANCE:
            dropped.append(
                f"{column.name}: {'does not vary within clusters' if games_in[i] else 'no games'}"
            )
            continue
        residual = x - basis @ (basis.T @ x)
        residual -= basis @ (basis.T @ residual)  # Gram-Schmidt twice, for accuracy
        if np.linalg.norm(residual) <= NULL_TOLERANCE * norm:
            dropped.append(f"{column.name}: aliased with earlier terms")
            continue
        kept.append(i)
        basis = np.column_stack([basis, residual / np.linalg.norm(residual)])
    return kept


def build_design(
    rows: pd.DataFrame, reference_arm: str, *, within_clusters: bool = False
) -> tuple[Design, np.ndarray]:
    """The design of `rows` (from `game_rows`) and its fitted columns' matrix, (n_games, n_columns).

    `within_clusters` builds a conditional logit's: no intercept or interaction, and a column is
    judged on its variation inside clusters (a factor that never varies there is dropped as a
    whole)."""
    if reference_arm not in set(rows["arm"]):
        raise ValueError(
            f"the reference arm {reference_arm!r} has no games; arms present: "
            f"{sorted(set(rows['arm']))}"
        )
    levels = {f: factor_levels(rows, f, reference_arm if f == "arm" else None) for f in FACTORS}
    dropped = [f"{f}: only {levels[f][0]}" for f in FACTORS if len(levels[f]) == 1]
    varying = [f for f in FACTORS if len(levels[f]) > 1]

    candidates = [] if within_clusters else [Column("intercept", ())]
    for f in varying:
        candidates += [Column(f"{f}[{level}]", ((f, level),)) for level in levels[f][1:]]
    if not within_clusters and "arm" in varying and "condition" in varying:
        candidates += [
            Column(f"arm[{a}] x condition[{c}]", (("arm", a), ("condition", c)))
            for c in levels["condition"][1:]
            for a in levels["arm"][1:]
        ]

    def indicator(column: Column) -> np.ndarray:
        values = np.ones(len(rows))
        for f, level in column.indicators:
            values = values * (rows[f].to_numpy() == level)
        return values

    full = (
        np.column_stack([indicator(c) for c in candidates])
        if candidates
        else np.zeros((len(rows), 0))
    )
    games_in = [bool(np.any(full[:, i] != 0)) for i in range(full.shape[1])]
    constant: set[str] = set()
    if within_clusters:
        full = (
            full
            - pd.DataFrame(full).groupby(rows["cluster"].to_numpy()).transform("mean").to_numpy()
        )
        for f in varying:
            of_f = [i for i, c in enumerate(candidates) if c.indicators[0][0] == f]
            if np.all(np.abs(full[:, of_f]) <= NULL_TOLERANCE):
                constant.add(f)
                dropped.append(f"{f}: does not vary within clusters")

    kept = _independent_columns(full, candidates, constant, games_in, dropped)
    null_space: np.ndarray = np.zeros((0, len(candidates)))
    if candidates and len(kept) < len(candidates):
        _, singular, vt = np.linalg.svd(full, full_matrices=True)
        rank = int(np.sum(singular > NULL_TOLERANCE * singular[0])) if singular.size else 0
        null_space = vt[rank:]
    cells = _cells(rows)
    design = Design(
        reference_arm=reference_arm,
        levels=tuple((f, levels[f]) for f in FACTORS),
        candidates=tuple(candidates),
        columns=tuple(candidates[i] for i in kept),
        dropped=tuple(dropped),
        null_space=tuple(tuple(float(v) for v in vector) for vector in null_space),
        cells=cells,
    )
    return design, full[:, kept]


def _cells(rows: pd.DataFrame) -> tuple[Cell, ...]:
    """The (arm, condition) cells of the rows, sorted, with their games and clusters (counted from
    numpy arrays: a pandas group-by of text columns took as long as a simulated study's fit)."""
    arm, condition, cluster = (rows[c].to_numpy() for c in ("arm", "condition", "cluster"))
    games = Counter(zip(arm, condition))
    clusters = Counter((a, c) for a, c, _ in set(zip(arm, condition, cluster)))
    return tuple(Cell(str(a), str(c), games[a, c], clusters[a, c]) for a, c in sorted(games))
