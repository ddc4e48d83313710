"""Scenario sources, references, splits and the seeded trial grids of docs/PROTOCOL.md §1-2."""

import json
import random
from pathlib import Path

import pytest

from bargain.engine import scenarios
from bargain.engine.scenarios import GridSpec, ScenarioError
from bargain.engine.trial import Condition, Mode, Role

RAW = Path(__file__).resolve().parents[1] / "bargain" / "data" / "scenarios_by_reservation_ranges.jsonl"


def test_bundled_copy_has_every_tier(scenario_set):
    assert {t: len(s) for t, s in scenario_set.tiers.items()} == {
        "low": 1516,
        "very_high": 1290,
        "medium": 869,
        "high": 886,
    }
    rice = scenario_set.get("low:0")
    assert rice.product_name == "1 kg of white rice" and rice.ref == "low:0"
    assert rice.seller_range == (1.2, 2.1) and rice.buyer_range == (2.1, 3.0)
    assert scenario_set.get("very_high:0").buyer_range == (3750.0, 6000)
    assert type(scenario_set.get("very_high:0").buyer_range[1]) is int  # rendered as written


def test_every_scenario_has_a_non_negative_band(scenario_set):
    for tier in scenario_set.tiers.values():
        for s in tier:
            assert s.seller_range[1] == s.buyer_range[0]


def test_the_papers_splits(scenario_set):
    assert len(scenario_set.split("train")) == 1500
    assert [s.index for s in scenario_set.split("val")] == list(range(1500, 1508))
    test = scenario_set.split("test")
    assert test[0].product_name == "200g bag of white sugar" and len(test) == 8


@pytest.mark.parametrize("ref", ["low", "low:x", "1508", "low:-1"])
def test_bad_references_say_what_is_expected(scenario_set, ref):
    with pytest.raises(ScenarioError, match="TIER:INDEX"):
        scenario_set.get(ref)


def test_out_of_range_and_unknown_tier(scenario_set):
    with pytest.raises(ScenarioError, match="indices 0..1515"):
        scenario_set.get("low:1516")
    with pytest.raises(ScenarioError, match="unknown tier 'cheap'"):
        scenario_set.get("cheap:0")
    with pytest.raises(ScenarioError, match="selects no scenario"):
        scenario_set.slice("low", 2000, 2010)


def test_slices_parse():
    assert scenarios.parse_slice("1508:1516") == (1508, 1516)
    assert scenarios.parse_slice(":10") == (None, 10)
    assert scenarios.parse_slice("7") == (7, 8)
    with pytest.raises(ScenarioError):
        scenarios.parse_slice("a:b")


def test_search_finds_products_by_name(scenario_set):
    found = scenario_set.search("WHITE RICE")
    assert scenario_set.get("low:0") in found and all("white rice" in s.product_name.lower() for s in found)


def test_zeroshot_grid_reproduces_the_papers_prices(scenario_set):
    trials = scenarios.make_trials(scenarios.grid("paper-zeroshot"), scenario_set, seed=42)
    assert len(trials) == 320
    assert [(t.buyer_price, t.seller_price) for t in trials[:2]] == [(2.68, 1.22), (2.35, 1.4)]
    assert [t.trial_id for t in trials] == list(range(1, 321))
    # scenario-major, then condition in the paper's order, then trial
    assert [t.condition for t in trials[:32:8]] == list(Condition)
    assert trials[32].scenario.index == 1
    assert all(t.max_rounds == 6 and t.mode is Mode.SIMULTANEOUS for t in trials)
    # Independent re-derivation of every pair from the raw file.
    raw = json.loads(RAW.read_text())["low"][:10]
    rng, expected = random.Random(42), []
    for s in raw:
        for _ in range(4 * 8):
            expected.append(
                (
                    round(rng.uniform(*s["buyer_res_price_range"]), 2),
                    round(rng.uniform(*s["seller_res_price_range"]), 2),
                )
            )
    assert [(t.buyer_price, t.seller_price) for t in trials] == expected


def test_rl_grids(scenario_set):
    test = scenarios.make_trials(scenarios.grid("paper-rl-test"), scenario_set)
    val = scenarios.make_trials(scenarios.grid("paper-rl-val"), scenario_set)
    assert len(test) == 1280 and {t.max_rounds for t in test} == {4}
    assert {t.scenario.index for t in test} == set(range(1508, 1516))
    assert len(val) == 512 and {t.scenario.index for t in val} == set(range(1500, 1508))


def test_custom_grids_and_seeds(scenario_set):
    spec = GridSpec(
        tier="medium",
        start=5,
        stop=7,
        conditions=(Condition.BOTH_UNAWARE,),
        trials_per_cell=3,
        max_rounds=2,
        mode=Mode.SEQUENTIAL,
        first_actor=Role.SELLER,
    )
    a = scenarios.make_trials(spec, scenario_set, seed=1)
    assert len(a) == 6 and all(t.first_actor is Role.SELLER and t.scenario.tier == "medium" for t in a)
    assert a == scenarios.make_trials(spec, scenario_set, seed=1)
    assert a != scenarios.make_trials(spec, scenario_set, seed=2)
    assert GridSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ScenarioError, match="unknown grid"):
        scenarios.grid("paper-everything")
    with pytest.raises(ScenarioError, match="at least 1"):
        GridSpec(trials_per_cell=0)


def test_local_files_in_both_layouts(tmp_path, scenario_set):
    original = tmp_path / "scenarios.json"
    original.write_text(json.dumps({"low": [scenario_set.get("low:3").to_dict()]}))
    loaded = scenarios.load(original)
    assert loaded.get("low:0").product_name == scenario_set.get("low:3").product_name
    assert loaded.source == str(original)
    flat = tmp_path / "flat.jsonl"
    flat.write_text("\n".join(json.dumps({**s.to_dict(), "tier": "mine"}) for s in scenario_set.slice("high", 0, 3)))
    assert [s.product_name for s in scenarios.load(flat).tier("mine")] == [
        s.product_name for s in scenario_set.slice("high", 0, 3)
    ]


def test_bad_local_files(tmp_path):
    with pytest.raises(ScenarioError, match="cannot read"):
        scenarios.load(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ScenarioError, match="neither one JSON object nor JSON Lines"):
        scenarios.load(broken)
    incomplete = tmp_path / "incomplete.json"
    incomplete.write_text(json.dumps({"low": [{"product_name": "x"}]}))
    with pytest.raises(ScenarioError, match="lacks"):
        scenarios.load(incomplete)


def test_hub_layout_with_one_split_per_tier(tmp_path, scenario_set):
    """A dataset repository with one split per tier, read through `datasets` (offline, local path)."""
    for tier in ("low", "high"):
        rows = [s.to_dict() for s in scenario_set.slice(tier, 0, 4)]
        (tmp_path / f"{tier}.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (tmp_path / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        "  - split: low\n    path: low.jsonl\n  - split: high\n    path: high.jsonl\n---\n"
    )
    loaded = scenarios.from_hub(str(tmp_path))
    assert set(loaded.tiers) == {"low", "high"}
    assert loaded.get("low:2") == scenario_set.get("low:2")
    assert loaded.source == f"hub:{tmp_path}"


def test_hub_failure_points_to_the_alternatives():
    with pytest.raises(ScenarioError, match="bundled copy"):
        scenarios.load("hub:nobody/no-such-dataset-here")
