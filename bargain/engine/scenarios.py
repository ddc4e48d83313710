"""Scenarios, the paper's splits, trial grids and seeded reservation prices (docs/PROTOCOL.md §1-2).

The dataset is one JSON object keyed by price tier (`low`, `very_high`, `medium`, `high`).
A copy ships inside the package so a fresh install works offline; a local file or the Hub
dataset can replace it. A grid enumerates scenarios x conditions x trials, scenario-major, and
draws each trial's reservation prices from one `random.Random(seed)`: with seed 42 this
reproduces the paper's trials one for one. Nothing here reads global randomness.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from bargain.engine.trial import Condition, Mode, Role, Scenario, Trial, TrialError

HUB_DATASET = "AnvaMiba/llm-bargaining-scenarios"
BUNDLED_FILE = "scenarios_by_reservation_ranges.jsonl"
TIERS = ("low", "very_high", "medium", "high")

# The paper's splits of the `low` tier (docs/PROTOCOL.md §1), as (tier, start, stop).
SPLITS: dict[str, tuple[str, int, int]] = {
    "train": ("low", 0, 1500),
    "val": ("low", 1500, 1508),
    "test": ("low", 1508, 1516),
    "zeroshot": ("low", 0, 10),
}


class ScenarioError(TrialError):
    """A scenario source, reference or slice that cannot be used (the message says why)."""


@dataclass(frozen=True)
class ScenarioSet:
    """All scenarios of a source, by tier, with where they came from."""

    tiers: dict[str, tuple[Scenario, ...]]
    source: str

    def tier(self, name: str) -> tuple[Scenario, ...]:
        """The scenarios of one tier, in dataset order."""
        if name not in self.tiers:
            raise ScenarioError(f"unknown tier {name!r}; this source has {', '.join(self.tiers)}")
        return self.tiers[name]

    def get(self, ref: str) -> Scenario:
        """The scenario named by a reference such as `low:1508`."""
        tier, index = parse_ref(ref)
        scenarios = self.tier(tier)
        if not 0 <= index < len(scenarios):
            raise ScenarioError(f"{ref}: tier {tier!r} has indices 0..{len(scenarios) - 1}")
        return scenarios[index]

    def slice(self, tier: str, start: int | None = None, stop: int | None = None) -> tuple[Scenario, ...]:
        """Scenarios `tier[start:stop]` (Python slice rules); an empty result is an error."""
        chosen = self.tier(tier)[start:stop]
        if not chosen:
            raise ScenarioError(f"{tier}[{start}:{stop}] selects no scenario")
        return chosen

    def split(self, name: str) -> tuple[Scenario, ...]:
        """One of the paper's splits: `train`, `val`, `test` (of `low`) or `zeroshot`."""
        if name not in SPLITS:
            raise ScenarioError(f"unknown split {name!r}; choose from {', '.join(SPLITS)}")
        tier, start, stop = SPLITS[name]
        return self.slice(tier, start, stop)

    def search(self, text: str) -> list[Scenario]:
        """Scenarios whose product name contains `text` (case-insensitive), all tiers."""
        needle = text.lower()
        return [s for scenarios in self.tiers.values() for s in scenarios if needle in s.product_name.lower()]


def selection(text: str) -> tuple[str, int | None, int | None]:
    """(tier, start, stop) of a split name (`train`), a tier (`low`) or `TIER:START:STOP` (`low:0:100`)."""
    if text in SPLITS:
        return SPLITS[text]
    tier, _, rest = text.partition(":")
    if not rest:
        return tier, None, None
    start, stop = parse_slice(rest)
    return tier, start, stop


def parse_ref(ref: str) -> tuple[str, int]:
    """Split `tier:index` into its parts, with a clear error for anything else."""
    match = re.fullmatch(r"\s*([a-z_]+)\s*:\s*(\d+)\s*", ref)
    if not match:
        raise ScenarioError(f"bad scenario reference {ref!r}: expected TIER:INDEX such as low:1508")
    return match.group(1), int(match.group(2))


def parse_slice(text: str) -> tuple[int | None, int | None]:
    """Parse `START:STOP` (either side may be empty) or a single index `I` (meaning I:I+1)."""
    match = re.fullmatch(r"\s*(-?\d*)\s*:\s*(-?\d*)\s*", text)
    if match:
        start, stop = (int(g) if g else None for g in match.groups())
        return start, stop
    if re.fullmatch(r"\s*\d+\s*", text):
        index = int(text)
        return index, index + 1
    raise ScenarioError(f"bad scenario slice {text!r}: expected START:STOP such as 1508:1516")


def from_mapping(data: Mapping[str, Sequence[Mapping]], source: str) -> ScenarioSet:
    """Build a scenario set from the dataset's own layout: `{tier: [scenario, ...]}`."""
    if not isinstance(data, Mapping) or not data:
        raise ScenarioError(f"{source}: expected one JSON object keyed by tier ({', '.join(TIERS)})")
    try:
        tiers = {
            tier: tuple(Scenario.from_dict(tier, i, s) for i, s in enumerate(records)) for tier, records in data.items()
        }
    except (TrialError, TypeError, ValueError) as exc:
        raise ScenarioError(f"{source}: {exc}") from exc
    return ScenarioSet(tiers=tiers, source=source)


@lru_cache(maxsize=1)
def bundled() -> ScenarioSet:
    """The copy of the dataset shipped inside the package (MIT; see bargain/data/LICENSE.scenarios)."""
    text = resources.files("bargain.data").joinpath(BUNDLED_FILE).read_text(encoding="utf-8")
    return from_mapping(json.loads(text), source=f"bundled:{BUNDLED_FILE}")


def from_file(path: str | Path) -> ScenarioSet:
    """Load a local copy: the paper's one-object JSON file, or JSON Lines with a `tier` field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"cannot read scenarios from {path}: {exc.strerror}") from exc
    try:
        return from_mapping(json.loads(text), source=str(path))
    except json.JSONDecodeError:
        pass
    try:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{path} is neither one JSON object nor JSON Lines: {exc}") from exc
    return from_mapping(_group_rows(rows, str(path)), source=str(path))


def _group_rows(rows: Iterable[Mapping], source: str) -> dict[str, list[Mapping]]:
    """Group flat records carrying a `tier` (or `price_tier`) field by tier, keeping order."""
    grouped: dict[str, list[Mapping]] = {}
    for row in rows:
        tier = row.get("tier", row.get("price_tier"))
        if tier is None:
            raise ScenarioError(f"{source}: a flat record needs a `tier` field to say which tier it belongs to")
        grouped.setdefault(tier, []).append(row)
    return grouped


def from_hub(repo_id: str = HUB_DATASET, revision: str | None = None) -> ScenarioSet:
    """Load the Hub dataset through `datasets` (honours HF_HOME, HF_HUB_OFFLINE and a token).

    Accepts the layouts a dataset of this file can take on the Hub: one split per tier, one
    table with a `tier` column, or the original single object (one row, one column per tier).
    """
    import datasets  # heavy; only when the Hub is asked for

    try:
        loaded = datasets.load_dataset(repo_id, revision=revision)
    except Exception as exc:  # datasets raises many types for a missing repo or no network
        raise ScenarioError(
            f"could not load the Hub dataset {repo_id!r} ({type(exc).__name__}: {exc}); "
            "use the bundled copy (the default) or --scenarios PATH instead"
        ) from exc
    source = f"hub:{repo_id}" + (f"@{revision}" if revision else "")
    splits = {name: split.to_list() for name, split in loaded.items()}
    if set(splits) & set(TIERS):
        return from_mapping({name: rows for name, rows in splits.items() if name in TIERS}, source)
    rows = [row for split_rows in splits.values() for row in split_rows]
    if len(rows) == 1 and set(rows[0]) & set(TIERS):
        return from_mapping({k: v for k, v in rows[0].items() if k in TIERS}, source)
    return from_mapping(_group_rows(rows, source), source)


def load(source: str | Path | None = None) -> ScenarioSet:
    """Load scenarios from `None` (bundled), `hub` / `hub:REPO[@REV]`, or a local path."""
    if source is None or str(source) == "bundled":
        return bundled()
    text = str(source)
    if text == "hub" or text.startswith("hub:"):
        spec = text[4:] or HUB_DATASET
        repo_id, _, revision = spec.partition("@")
        return from_hub(repo_id, revision or None)
    return from_file(text)


@dataclass(frozen=True)
class GridSpec:
    """A trial grid: which scenarios, which conditions, how many trials, which rules."""

    tier: str = "low"
    start: int | None = 0
    stop: int | None = 10
    conditions: tuple[Condition, ...] = tuple(Condition)
    trials_per_cell: int = 8
    max_rounds: int = 6
    mode: Mode = Mode.SIMULTANEOUS
    first_actor: Role = Role.BUYER
    name: str = "custom"

    def __post_init__(self) -> None:
        if self.trials_per_cell < 1:
            raise ScenarioError("trials per cell must be at least 1")
        if self.max_rounds < 1:
            raise ScenarioError("a game needs at least one round")
        if not self.conditions:
            raise ScenarioError("choose at least one condition")

    def to_dict(self) -> dict:
        """A JSON-ready description (for a run's config.json)."""
        return {
            "name": self.name,
            "tier": self.tier,
            "start": self.start,
            "stop": self.stop,
            "conditions": [c.value for c in self.conditions],
            "trials_per_cell": self.trials_per_cell,
            "max_rounds": self.max_rounds,
            "mode": self.mode.value,
            "first_actor": self.first_actor.value,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> GridSpec:
        """Inverse of `to_dict`."""
        return cls(
            name=data.get("name", "custom"),
            tier=data["tier"],
            start=data["start"],
            stop=data["stop"],
            conditions=tuple(Condition(c) for c in data["conditions"]),
            trials_per_cell=data["trials_per_cell"],
            max_rounds=data["max_rounds"],
            mode=Mode(data["mode"]),
            first_actor=Role(data["first_actor"]),
        )


GRIDS: dict[str, GridSpec] = {
    "paper-zeroshot": GridSpec(tier="low", start=0, stop=10, trials_per_cell=8, max_rounds=6, name="paper-zeroshot"),
    "paper-rl-test": GridSpec(
        tier="low", start=1508, stop=1516, trials_per_cell=40, max_rounds=4, name="paper-rl-test"
    ),
    "paper-rl-val": GridSpec(tier="low", start=1500, stop=1508, trials_per_cell=16, max_rounds=4, name="paper-rl-val"),
}


def grid(name: str) -> GridSpec:
    """A named grid, with the list of names in the error."""
    if name not in GRIDS:
        raise ScenarioError(f"unknown grid {name!r}; choose from {', '.join(GRIDS)}")
    return GRIDS[name]


def draw_prices(rng: random.Random, scenario: Scenario) -> tuple[float, float]:
    """Draw (v_B, v_S) exactly as the paper: buyer first, each rounded to cents."""
    buyer = round(rng.uniform(*scenario.buyer_range), 2)
    seller = round(rng.uniform(*scenario.seller_range), 2)
    return buyer, seller


def make_trials(spec: GridSpec, scenarios: ScenarioSet, seed: int = 42) -> list[Trial]:
    """Enumerate a grid scenario-major, then condition, then trial; `trial_id` counts from 1."""
    rng = random.Random(seed)
    trials: list[Trial] = []
    for scenario in scenarios.slice(spec.tier, spec.start, spec.stop):
        for condition in spec.conditions:
            for _ in range(spec.trials_per_cell):
                buyer_price, seller_price = draw_prices(rng, scenario)
                trials.append(
                    Trial(
                        trial_id=len(trials) + 1,
                        scenario=scenario,
                        condition=condition,
                        buyer_price=buyer_price,
                        seller_price=seller_price,
                        max_rounds=spec.max_rounds,
                        mode=spec.mode,
                        first_actor=spec.first_actor,
                    )
                )
    return trials
