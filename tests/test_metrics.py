"""Outcomes of single trials and per-cell metrics tables (docs/PROTOCOL.md §8).

Every expected number here is worked out by hand or recomputed independently with plain
pandas/scipy from the paper's own per-trial columns, never taken from the package.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_runner import run_main
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from bargain.analysis import metrics
from bargain.analysis.metrics import MetricsError, cell_table, prepare, read_trials
from bargain.cli import main
from bargain.engine.outcome import PAPER_COLUMNS, settle
from bargain.engine.trial import Condition, Scenario, Trial

ROOT = Path(__file__).resolve().parents[1]
CONDITION_ORDER = ["full", "buyer_unaware", "seller_unaware", "both_unaware"]
RICE_RANGES = ((2.1, 3.0), (1.2, 2.1))  # low:0, white rice: buyer [BL, BH], seller [SL, SH]


def approx(value, rel=1e-9, abs=1e-12):
    return pytest.approx(value, rel=rel, abs=abs)


def scenario(buyer_range=RICE_RANGES[0], seller_range=RICE_RANGES[1]) -> Scenario:
    return Scenario(
        tier="low",
        index=0,
        product_name="thing",
        product_description="a thing",
        buyer_persona="You buy.",
        seller_persona="You sell.",
        buyer_range=buyer_range,
        seller_range=seller_range,
    )


def trial(v_b, v_s, condition=Condition.FULL, **ranges) -> Trial:
    return Trial(
        trial_id=1, scenario=scenario(**ranges), condition=condition, buyer_price=v_b, seller_price=v_s, max_rounds=6
    )


# --- settle: one trial by hand ------------------------------------------------------------


def test_settle_deal_hand_worked():
    out = settle(trial(2.68, 1.22), 2.0, 3)
    assert out.deal is True
    assert out.deal_price == 2.0
    assert out.rounds == 3
    assert out.surplus == approx(1.46)
    assert out.buyer_utility == approx(0.68)
    assert out.seller_utility == approx(0.78)
    assert out.buyer_norm_utility == approx(0.68 / 1.46)
    assert out.seller_norm_utility == approx(0.78 / 1.46)
    assert out.buyer_norm_utility + out.seller_norm_utility == approx(1.0)
    assert out.true_nbs_price == approx(1.95)
    assert out.expected_nbs_price == approx(1.95)  # full: the true NBS
    assert out.nbs_deviation == approx(0.05)
    assert out.nbs_deviation_share == approx(0.05 / 1.46)
    assert out.welfare == approx(1.46)
    assert out.seller_advantage == approx(0.10)


def test_settle_no_deal_is_zero_with_nan_deviations():
    out = settle(trial(2.5, 1.5, Condition.BOTH_UNAWARE), None, 6)
    assert out.deal is False
    assert out.deal_price is None
    assert out.rounds == 6
    assert (out.buyer_utility, out.seller_utility) == (0.0, 0.0)
    assert (out.buyer_norm_utility, out.seller_norm_utility) == (0.0, 0.0)
    assert out.welfare == 0.0 and out.seller_advantage == 0.0
    assert math.isnan(out.nbs_deviation)
    assert math.isnan(out.nbs_deviation_share)
    assert out.true_nbs_price == approx(2.0)
    assert out.expected_nbs_price == approx((2.1 + 3.0 + 1.2 + 2.1) / 4)


def test_settle_zero_surplus_never_divides_by_zero():
    out = settle(trial(2.1, 2.1), 2.1, 1)
    assert out.deal and out.surplus == 0.0
    assert (out.buyer_utility, out.seller_utility) == (0.0, 0.0)
    assert (out.buyer_norm_utility, out.seller_norm_utility) == (0.0, 0.0)
    assert out.nbs_deviation == 0.0
    assert math.isnan(out.nbs_deviation_share)
    # A deal away from the single point still keeps raw utilities, normalised ones stay 0.
    off = settle(trial(2.1, 2.1), 2.5, 2)
    assert off.buyer_utility == approx(-0.4) and off.seller_utility == approx(0.4)
    assert (off.buyer_norm_utility, off.seller_norm_utility) == (0.0, 0.0)
    assert off.nbs_deviation == approx(0.4) and math.isnan(off.nbs_deviation_share)


@pytest.mark.parametrize("condition", [Condition.BUYER_UNAWARE, Condition.SELLER_UNAWARE, Condition.BOTH_UNAWARE])
def test_settle_expected_nbs_uses_the_priors_unless_full(condition):
    ranges = dict(buyer_range=(3000, 4000), seller_range=(2500, 3000))
    out = settle(trial(3500.0, 2600.0, condition, **ranges), 3100.0, 2)
    assert out.true_nbs_price == approx(3050.0)
    assert out.expected_nbs_price == approx((3000 + 4000 + 2500 + 3000) / 4)  # 3125
    full = settle(trial(3500.0, 2600.0, Condition.FULL, **ranges), 3100.0, 2)
    assert full.expected_nbs_price == approx(3050.0)


def test_settle_keeps_negative_utilities_outside_the_zone():
    above = settle(trial(2.0, 1.0), 2.5, 2)  # buyer overpays
    assert above.buyer_utility == approx(-0.5) and above.seller_utility == approx(1.5)
    assert above.buyer_norm_utility == approx(-0.5) and above.seller_norm_utility == approx(1.5)
    assert above.buyer_norm_utility + above.seller_norm_utility == approx(1.0)
    below = settle(trial(2.0, 1.0), 0.8, 2)  # seller undersells
    assert below.buyer_utility == approx(1.2) and below.seller_utility == approx(-0.2)
    assert below.seller_norm_utility == approx(-0.2)
    assert below.nbs_deviation == approx(-0.7) and below.nbs_deviation_share == approx(-0.7)


@settings(max_examples=200, deadline=None)
@given(
    v_s=st.floats(0.01, 1000, allow_nan=False, allow_infinity=False),
    # no surplus, or at least half a cent (prices are in cents): a surplus of 1e-16 beside a price of 3 is lost
    # to rounding in u_B + u_S, and the normalised utilities' sum with it
    gap=st.one_of(st.just(0.0), st.floats(0.005, 1000, allow_nan=False, allow_infinity=False)),
    p=st.floats(0.001, 3000, allow_nan=False, allow_infinity=False),
    deal=st.booleans(),
    condition=st.sampled_from(list(Condition)),
)
def test_settle_properties(v_s, gap, p, deal, condition):
    v_b = v_s + gap
    out = settle(trial(v_b, v_s, condition), p if deal else None, 3)
    s = v_b - v_s
    if not deal:
        assert out.buyer_utility == out.seller_utility == 0.0
        assert out.buyer_norm_utility == out.seller_norm_utility == 0.0
        assert math.isnan(out.nbs_deviation)
        return
    assert out.buyer_utility == v_b - p and out.seller_utility == p - v_s
    assert out.nbs_deviation == approx(p - (v_b + v_s) / 2, rel=1e-9, abs=1e-9)
    if s > 0:
        assert out.buyer_norm_utility == approx((v_b - p) / s)
        assert out.buyer_norm_utility + out.seller_norm_utility == approx(1.0, rel=1e-6, abs=1e-6)
    else:
        assert out.buyer_norm_utility == out.seller_norm_utility == 0.0
        assert math.isnan(out.nbs_deviation_share)


# --- a hand-made trials table in the paper's layout ---------------------------------------

NAN = math.nan
# trial_id, transparency, max_rounds, v_B, v_S, deal, p, rounds, u_B, u_S,
# seller_honesty, buyer_honesty, buyer_credulity, seller_credulity
HAND_ROWS = [
    (7, "both_unaware", 6, 2.9, 1.3, "deal", 3.1, 5, -0.2, 1.8, 0, 3, 1, 4),  # outside the zone
    (1, "full", 6, 2.68, 1.22, "deal", 2.0, 3, 0.68, 0.78, NAN, NAN, NAN, NAN),
    (5, "seller_unaware", 6, 2.0, 2.0, "deal", 2.0, 1, 0.0, 0.0, NAN, 4, NAN, 0),  # zero surplus
    (3, "buyer_unaware", 6, 3.0, 1.0, "deal", 1.5, 2, 1.5, 0.5, 1, NAN, 2, NAN),
    (2, "full", 6, 2.5, 1.5, "no_deal", NAN, 6, 0.0, 0.0, NAN, NAN, NAN, NAN),
    (8, "both_unaware", 4, 2.6, 1.6, "deal", 2.1, 3, 0.5, 0.5, NAN, NAN, NAN, NAN),
    (6, "seller_unaware", 6, 2.4, 1.4, "no_deal", NAN, 6, 0.0, 0.0, NAN, 2, NAN, NAN),
    (4, "buyer_unaware", 4, 2.2, 1.2, "deal", 2.0, 4, 0.2, 0.8, NAN, NAN, 3, NAN),
]


def paper_frame() -> pd.DataFrame:
    """The trials above as the paper's released tables have them (ranges as strings)."""
    rows = []
    for tid, cond, max_r, v_b, v_s, deal, p, rounds, u_b, u_s, sh, bh, bc, sc in HAND_ROWS:
        rows.append(
            {
                "trial_id": tid,
                "mode": "simultaneous",
                "transparency": cond,
                "max_rounds": max_r,
                "first_actor": "buyer",
                "item_name": "1 kg of white rice",
                "buyer_res_price": v_b,
                "seller_res_price": v_s,
                "buyer_res_price_range": "(2.1, 3.0)",
                "seller_res_price_range": "(1.2, 2.1)",
                "deal": deal,
                "deal_price": p,
                "rounds": rounds,
                "buyer_utility": u_b,
                "seller_utility": u_s,
                "true_nbs_price": (v_b + v_s) / 2,
                "expected_nbs_price": (v_b + v_s) / 2 if cond == "full" else (2.1 + 3.0 + 1.2 + 2.1) / 4,
                "seller_honesty": sh,
                "buyer_honesty": bh,
                "buyer_credulity": bc,
                "seller_credulity": sc,
            }
        )
    return pd.DataFrame(rows)


def by_cell(table: pd.DataFrame) -> dict[str, pd.Series]:
    return {row["transparency"]: row for _, row in table.iterrows()}


# Worked by hand from HAND_ROWS (S = v_B - v_S; NBS = (v_B + v_S) / 2).
EXPECTED = {
    "full": dict(
        n=2,
        deal_rate=0.5,
        buyer_utility=0.34,
        seller_utility=0.39,
        buyer_norm_utility=(0.68 / 1.46) / 2,
        seller_norm_utility=(0.78 / 1.46) / 2,
        welfare=0.73,
        seller_advantage=0.05,
        nbs_deviation=0.05,
        nbs_deviation_share=0.05 / 1.46,
        rounds=4.5,
    ),
    "buyer_unaware": dict(
        n=2,
        deal_rate=1.0,
        buyer_utility=0.85,
        seller_utility=0.65,
        buyer_norm_utility=(0.75 + 0.2) / 2,
        seller_norm_utility=(0.25 + 0.8) / 2,
        welfare=1.5,
        seller_advantage=-0.2,
        nbs_deviation=(-0.5 + 0.3) / 2,
        nbs_deviation_share=(-0.25 + 0.3) / 2,
        rounds=3.0,
    ),
    "seller_unaware": dict(
        n=2,
        deal_rate=0.5,
        buyer_utility=0.0,
        seller_utility=0.0,
        buyer_norm_utility=0.0,
        seller_norm_utility=0.0,
        welfare=0.0,
        seller_advantage=0.0,
        nbs_deviation=0.0,
        nbs_deviation_share=NAN,
        rounds=3.5,
    ),
    "both_unaware": dict(
        n=2,
        deal_rate=1.0,
        buyer_utility=0.15,
        seller_utility=1.15,
        buyer_norm_utility=(-0.2 / 1.6 + 0.5) / 2,
        seller_norm_utility=(1.8 / 1.6 + 0.5) / 2,
        welfare=1.3,
        seller_advantage=1.0,
        nbs_deviation=0.5,
        nbs_deviation_share=(1.0 / 1.6) / 2,
        rounds=4.0,
    ),
    "ALL": dict(
        n=8,
        deal_rate=0.75,
        buyer_utility=2.68 / 8,
        seller_utility=4.38 / 8,
        buyer_norm_utility=(0.68 / 1.46 + 0.75 + 0.2 + 0.0 - 0.125 + 0.5) / 8,
        seller_norm_utility=(0.78 / 1.46 + 0.25 + 0.8 + 0.0 + 1.125 + 0.5) / 8,
        welfare=(1.46 + 2.0 + 1.0 + 1.6 + 1.0) / 8,
        seller_advantage=(0.1 - 1.0 + 0.6 + 2.0) / 8,
        nbs_deviation=(0.05 - 0.5 + 0.3 + 0.0 + 1.0 + 0.0) / 6,
        nbs_deviation_share=(0.05 / 1.46 - 0.25 + 0.3 + 0.625 + 0.0) / 5,
        rounds=30 / 8,
    ),
}

# Judge scores by hand: (mean, count) per cell; NaN means no score in that cell.
EXPECTED_JUDGE = {
    "full": dict(seller_honesty=(NAN, 0), buyer_honesty=(NAN, 0), buyer_credulity=(NAN, 0), seller_credulity=(NAN, 0)),
    "buyer_unaware": dict(
        seller_honesty=(1.0, 1), buyer_honesty=(NAN, 0), buyer_credulity=(2.5, 2), seller_credulity=(NAN, 0)
    ),
    "seller_unaware": dict(
        seller_honesty=(NAN, 0), buyer_honesty=(3.0, 2), buyer_credulity=(NAN, 0), seller_credulity=(0.0, 1)
    ),
    "both_unaware": dict(
        seller_honesty=(0.0, 1), buyer_honesty=(3.0, 1), buyer_credulity=(1.0, 1), seller_credulity=(4.0, 1)
    ),
    "ALL": dict(seller_honesty=(0.5, 2), buyer_honesty=(3.0, 3), buyer_credulity=(2.0, 3), seller_credulity=(2.0, 2)),
}


def check_equal(actual, expected, label=""):
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual), label
    else:
        assert actual == approx(expected), label


def test_hand_table_row_order():
    table = cell_table(prepare(paper_frame()))
    assert list(table["transparency"]) == CONDITION_ORDER + ["ALL"]


@pytest.mark.parametrize("cell_name", CONDITION_ORDER + ["ALL"])
def test_hand_table_numbers(cell_name):
    row = by_cell(cell_table(prepare(paper_frame())))[cell_name]
    for column, expected in EXPECTED[cell_name].items():
        actual = row[column]
        if column == "n":
            assert actual == expected
        else:
            check_equal(actual, expected, (cell_name, column))


@pytest.mark.parametrize("cell_name", CONDITION_ORDER + ["ALL"])
def test_hand_table_judge_means_and_counts(cell_name):
    row = by_cell(cell_table(prepare(paper_frame())))[cell_name]
    for column, (mean, count) in EXPECTED_JUDGE[cell_name].items():
        check_equal(row[column], mean, (cell_name, column))
        assert row[f"{column}_n"] == count


def test_hand_table_t_statistics_match_scipy():
    cells = by_cell(cell_table(prepare(paper_frame())))
    # seller advantage u_S - u_B over every trial (no deal counts 0), NBS deviations over deals.
    samples = {
        "full": ([0.10, 0.0], [0.05], [0.05 / 1.46]),
        "buyer_unaware": ([-1.0, 0.6], [-0.5, 0.3], [-0.25, 0.3]),
        "seller_unaware": ([0.0, 0.0], [0.0], []),
        "both_unaware": ([2.0, 0.0], [1.0, 0.0], [1.0 / 1.6, 0.0]),
        "ALL": (
            [2.0, 0.10, 0.0, -1.0, 0.0, 0.0, 0.0, 0.6],
            [1.0, 0.05, 0.0, -0.5, 0.0, 0.3],
            [0.625, 0.05 / 1.46, -0.25, 0.0, 0.3],
        ),
    }
    for name, values in samples.items():
        for column, sample in zip(("seller_advantage", "nbs_deviation", "nbs_deviation_share"), values):
            actual = cells[name][f"{column}_t"]
            if len(sample) < 2 or np.std(sample) == 0:
                assert math.isnan(actual), (name, column)  # undefined: fewer than two values or no spread
            else:
                assert actual == approx(stats.ttest_1samp(sample, 0.0).statistic, rel=1e-6), (name, column)


def test_hand_table_scatter_quantities_on_the_all_row_only():
    table = cell_table(prepare(paper_frame()))
    pooled = table.iloc[-1]
    assert pooled["transparency"] == "ALL"
    # 2N = 16 normalised utilities: every deal with a surplus sums to 1, the rest are 0.
    assert pooled["avg_norm_utility_per_agent"] == approx(5 / 16)
    # seller_honesty {1, 0} and buyer_honesty {4, 2, 3}, pooled.
    assert pooled["avg_honesty"] == approx((1 + 0 + 4 + 2 + 3) / 5)
    assert table.iloc[:-1]["avg_norm_utility_per_agent"].isna().all()


def test_avg_honesty_none_without_judge_columns():
    frame = paper_frame().drop(columns=list(metrics.JUDGE_COLUMNS))
    table = cell_table(prepare(frame))
    assert not any(c in table for c in metrics.JUDGE_COLUMNS)
    assert pd.isna(table.iloc[-1]["avg_honesty"])
    assert table.iloc[-1]["avg_norm_utility_per_agent"] == approx(5 / 16)
    assert metrics.scatter_quantities(prepare(frame))["avg_honesty"] is None
    assert metrics.records(table)[-1]["avg_honesty"] is None


def test_judge_columns_empty_strings_and_all_empty():
    frame = paper_frame()
    for column in metrics.JUDGE_COLUMNS:
        frame[column] = frame[column].map(lambda v: "" if pd.isna(v) else str(int(v))).astype(object)
    table = by_cell(cell_table(prepare(frame)))
    assert table["ALL"]["buyer_honesty"] == approx(3.0) and table["ALL"]["buyer_honesty_n"] == 3
    assert table["ALL"]["avg_honesty"] == approx(2.0)
    frame = paper_frame()
    frame["seller_honesty"] = NAN
    frame["buyer_honesty"] = NAN
    pooled = cell_table(prepare(frame)).iloc[-1]
    assert pooled["seller_honesty_n"] == 0 and math.isnan(pooled["seller_honesty"])
    assert pd.isna(pooled["avg_honesty"])


def test_no_deal_counts_zero_even_when_the_file_has_nan_utilities():
    frame = paper_frame()
    no_deal = frame["deal"] == "no_deal"
    frame.loc[no_deal, ["buyer_utility", "seller_utility"]] = NAN
    cells = by_cell(cell_table(prepare(frame)))
    for name in ("full", "ALL"):
        for column in ("buyer_utility", "seller_utility", "welfare", "seller_advantage"):
            check_equal(cells[name][column], EXPECTED[name][column], (name, column))


def test_deal_as_booleans_and_as_result_column():
    reference = cell_table(prepare(paper_frame()))
    as_bool = paper_frame()
    as_bool["deal"] = as_bool["deal"] == "deal"
    assert as_bool["deal"].dtype == bool
    pd.testing.assert_frame_equal(cell_table(prepare(as_bool)), reference)
    as_result = paper_frame().rename(columns={"deal": "result"})
    pd.testing.assert_frame_equal(cell_table(prepare(as_result)), reference)
    as_text = paper_frame()
    as_text["deal"] = as_text["deal"].map({"deal": "True", "no_deal": "False"})
    pd.testing.assert_frame_equal(cell_table(prepare(as_text)), reference)


@pytest.mark.parametrize(
    "column", ["transparency", "buyer_res_price", "seller_res_price", "buyer_utility", "seller_utility", "rounds"]
)
def test_missing_required_column_is_named(column):
    with pytest.raises(MetricsError, match=column):
        prepare(paper_frame().drop(columns=[column]))


def test_missing_deal_column_and_bad_values():
    with pytest.raises(MetricsError, match="deal"):
        prepare(paper_frame().drop(columns=["deal"]))
    frame = paper_frame()
    frame.loc[0, "deal"] = "maybe"
    with pytest.raises(MetricsError, match="maybe"):
        prepare(frame)
    with pytest.raises(MetricsError, match="nope"):
        cell_table(prepare(paper_frame()), ["transparency", "nope"])


def test_group_by_transparency_and_max_rounds():
    table = cell_table(prepare(paper_frame()), ["transparency", "max_rounds"])
    keys = list(zip(table["transparency"], table["max_rounds"]))
    assert keys[-1] == ("ALL", "ALL")
    assert sorted(keys[:-1], key=str) == sorted(
        [
            ("full", 6),
            ("buyer_unaware", 6),
            ("buyer_unaware", 4),
            ("seller_unaware", 6),
            ("both_unaware", 6),
            ("both_unaware", 4),
        ],
        key=str,
    )
    # cells stay in the paper's condition order
    ranks = [CONDITION_ORDER.index(t) for t, _ in keys[:-1]]
    assert ranks == sorted(ranks)
    rows = {k: row for k, (_, row) in zip(keys, table.iterrows())}
    assert rows[("full", 6)]["n"] == 2
    assert rows[("buyer_unaware", 4)]["n"] == 1
    assert rows[("buyer_unaware", 4)]["buyer_norm_utility"] == approx(0.2)
    assert rows[("buyer_unaware", 6)]["seller_norm_utility"] == approx(0.25)
    assert rows[("both_unaware", 4)]["nbs_deviation"] == approx(0.0)
    assert rows[("both_unaware", 6)]["seller_honesty"] == approx(0.0)
    assert rows[("ALL", "ALL")]["n"] == 8
    assert rows[("ALL", "ALL")]["avg_norm_utility_per_agent"] == approx(5 / 16)


def test_numeric_cells_sort_numerically():
    frame = paper_frame()
    frame["max_rounds"] = [10, 4, 10, 4, 10, 4, 10, 4]
    table = cell_table(prepare(frame), ["max_rounds"])
    assert list(table["max_rounds"]) == [4, 10, "ALL"]


def test_grouping_needs_a_column():
    with pytest.raises(MetricsError, match="at least one column"):
        cell_table(prepare(paper_frame()), [])


# --- reading files ------------------------------------------------------------------------


def test_csv_and_parquet_round_trip(tmp_path):
    frame = paper_frame()
    frame.to_csv(tmp_path / "trials.csv", index=False)
    frame.to_parquet(tmp_path / "trials.parquet", index=False)
    reference = cell_table(prepare(frame))
    from_csv = cell_table(read_trials(tmp_path / "trials.csv"))
    from_parquet = cell_table(read_trials(tmp_path / "trials.parquet"))
    pd.testing.assert_frame_equal(from_csv, reference, check_dtype=False)
    pd.testing.assert_frame_equal(from_parquet, reference, check_dtype=False)
    # and the numbers are the hand-worked ones
    pooled = from_csv.iloc[-1]
    assert pooled["deal_rate"] == approx(0.75)
    assert pooled["avg_honesty"] == approx(2.0)


def test_read_trials_rejects_unknown_extension_and_missing_file(tmp_path):
    path = tmp_path / "trials.txt"
    paper_frame().to_csv(path, index=False)
    with pytest.raises(MetricsError, match="csv"):
        read_trials(path)
    with pytest.raises(MetricsError):
        read_trials(tmp_path / "absent.csv")


# --- reproducing the paper's aggregation from its per-trial columns ------------------------


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """A simulated RL-test grid (2 trials per cell), and the same trials cut to the paper's columns."""
    out = tmp_path_factory.mktemp("rl-test")
    run = run_main(
        main,
        "simulate",
        "--grid",
        "paper-rl-test",
        "--trials",
        "2",
        "--buyer",
        "tactic:linear",
        "--seller",
        "tactic:random",
        "--out",
        str(out),
        "--quiet",
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert run.returncode == 0, run.stderr
    ours = pd.read_csv(out / "trials.csv")
    paper = ours[list(PAPER_COLUMNS)]
    paper_csv = out / "paper_layout.csv"
    paper.to_csv(paper_csv, index=False)
    return ours, pd.read_csv(paper_csv), paper_csv


def paper_style_cell(g: pd.DataFrame) -> dict:
    """The paper's aggregation written out with plain pandas."""
    deal = g["deal"] == "deal"
    v_b, v_s = g["buyer_res_price"], g["seller_res_price"]
    s = v_b - v_s
    ok = deal & (s > 0)
    u_b = g["buyer_utility"].where(deal, 0.0)
    u_s = g["seller_utility"].where(deal, 0.0)
    nu_b = (u_b / s).where(ok, 0.0)
    nu_s = (u_s / s).where(ok, 0.0)
    dev = (g["deal_price"] - (v_b + v_s) / 2)[deal]
    share = ((g["deal_price"] - (v_b + v_s) / 2) / s)[ok]
    return {
        "n": len(g),
        "deal_rate": deal.mean(),
        "buyer_utility": u_b.mean(),
        "seller_utility": u_s.mean(),
        "buyer_norm_utility": nu_b.mean(),
        "seller_norm_utility": nu_s.mean(),
        "welfare": (u_b + u_s).mean(),
        "seller_advantage": (u_s - u_b).mean(),
        "nbs_deviation": dev.mean(),
        "nbs_deviation_share": share.mean(),
        "rounds": g["rounds"].mean(),
        "seller_advantage_t": stats.ttest_1samp(u_s - u_b, 0.0).statistic,
        "nbs_deviation_t": stats.ttest_1samp(dev, 0.0).statistic,
        "nbs_deviation_share_t": stats.ttest_1samp(share, 0.0).statistic,
        "_nu": pd.concat([nu_b, nu_s]),
    }


def test_simulated_grid_is_what_the_paper_layout_needs(simulated):
    ours, paper, _ = simulated
    assert list(paper.columns) == list(PAPER_COLUMNS)
    assert len(paper) == 8 * 4 * 2
    assert set(paper["max_rounds"]) == {4}
    # The random seller makes both outcomes happen, so both branches of the aggregation are used.
    assert 0 < (paper["deal"] == "deal").sum() < len(paper)
    assert paper.loc[paper["deal"] == "no_deal", "deal_price"].isna().all()


def test_metrics_reproduce_paper_aggregation_per_condition(simulated):
    _, paper, paper_csv = simulated
    table = cell_table(read_trials(paper_csv))
    assert list(table["transparency"]) == CONDITION_ORDER + ["ALL"]
    cells = by_cell(table)
    groups = {name: g for name, g in paper.groupby("transparency")}
    groups["ALL"] = paper
    for name, g in groups.items():
        expected = paper_style_cell(g)
        nu = expected.pop("_nu")
        row = cells[name]
        assert row["n"] == expected.pop("n")
        for column, value in expected.items():
            assert row[column] == approx(value, rel=1e-9, abs=1e-12), (name, column)
        if name == "ALL":
            assert len(nu) == 2 * len(paper)
            assert row["avg_norm_utility_per_agent"] == approx(nu.mean())
            assert row["avg_honesty"] is None or pd.isna(row["avg_honesty"])


def test_paper_layout_and_full_table_agree(simulated):
    """Metrics derived from the paper's columns equal those from our richer table."""
    ours, _, paper_csv = simulated
    from_paper = cell_table(read_trials(paper_csv))
    from_ours = cell_table(prepare(ours))
    shared = [c for c in from_paper.columns if c in from_ours.columns]
    pd.testing.assert_frame_equal(from_paper[shared], from_ours[shared], check_dtype=False, rtol=1e-9)
    # the simulator's own normalised utilities are the ones the paper's rule gives
    deal = ours["deal"] == "deal"
    s = ours["buyer_res_price"] - ours["seller_res_price"]
    expected_nu_b = (ours["buyer_utility"] / s).where(deal & (s > 0), 0.0)
    np.testing.assert_allclose(ours["buyer_norm_utility"], expected_nu_b, rtol=1e-12)
    assert ((ours["buyer_norm_utility"] + ours["seller_norm_utility"])[deal & (s > 0)] - 1).abs().max() < 1e-9


def test_cell_table_has_the_reference_columns():
    """The paper's reference cells can be set beside ours column for column."""
    reference = pd.read_csv(ROOT / "bargain" / "data" / "paper_reference_cells.csv")
    metric_columns = [
        c
        for c in reference.columns
        if c not in ("group", "variant", "buyer_agent", "seller_agent", "transparency", "max_rounds")
    ]
    table = cell_table(prepare(paper_frame()))
    assert [c for c in metric_columns if c not in table.columns] == []
    assert set(reference["transparency"]) == set(CONDITION_ORDER + ["ALL"])
