"""Claim checker: precision and recall per kind on every labelled set, and milliseconds per message.

    python -m benchmarks.claims [--repeats 5] [--model openai:MODEL@URL | --oracle | --cues]

Reads each set in tests/data (development sets, tuned on; test sets, never tuned on), scores
`bargain.analysis.claims.extract_claims` with the speaker's side as the callers give it (a claim
counts when a gold claim of the same kind and value, within 0.005, is in the same message), and
prints a table, with how many messages that carry no claim got one reported. Then times every
message of all sets after start-up (the patterns compiled, the first call made): the median of
`--repeats` passes, in milliseconds per message. Goal: under 5 ms.

`--model SPEC` scores the model-assisted reading instead (bargain.analysis.claims_model: each claim
the model lists is kept only if the rules confirm it) and prints what the model added and what was
refused. `--oracle` does the same with a model that lists exactly the labelled claims: the most a
model can add through the confirmation, with no model needed; then offers the confirmation every
written price as each kind of limit it is not, and counts the false claims it lets through.

`--cues` measures the lexicon one rule at a time instead: over every labelled set, how often each cue
of `claim_cues` fires (finds a price its clause asserts) and how often a labelled claim of its kind
and price is in that message, and how often each canceller of `claim_cancellers` cancels a cue and
how often rightly (no such labelled claim, or another cue found it); then names the cues that never
fire, and the top-level alternatives of a cue's pattern that never fire (marked when not even the
cue's own examples fire them: those are the ones to remove).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import Counter
from pathlib import Path

from bargain.analysis.claim_cancellers import FINAL_CANCELLERS, LIMIT_CANCELLERS, LIMIT_EXCEPTIONS
from bargain.analysis.claim_cues import CUES
from bargain.analysis.claims import KINDS, Reading, confirm, extract_claims, parse, readings, same_value
from bargain.analysis.claims_model import Assisted, combine, read_all, reader
from bargain.analysis.price_mentions import find_prices
from bargain.engine.trial import Role

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SETS = {
    "development": [
        "claims_labelled.jsonl",
        "claims_retired_test.jsonl",
        "claims_heldout.jsonl",
        "claims_dev.jsonl",
        *(f"claims_dev{n}.jsonl" for n in range(2, 48)),
    ],
    "test": ["claims_fresh.jsonl", *(f"claims_fresh{n}.jsonl" for n in range(2, 11))],
}
GOAL_MS = 5.0


def load(name: str) -> list[dict]:
    """One labelled set."""
    with open(DATA / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def score(rows: list[dict], read=extract_claims) -> dict[str, dict[str, int]]:
    """True positives, false positives and misses per kind of the claims `read(message, role)` gives: a claim is
    a true positive when an unused labelled claim of the same kind and value (`same_value`) is in its message."""
    counts = {kind: {"tp": 0, "fp": 0, "fn": 0} for kind in KINDS}
    for row in rows:
        gold = [(g["kind"], g["value"]) for g in row["claims"]]
        for claim in read(row["message"], row["role"]):
            match = next((g for g in gold if g[0] == claim.kind and same_value(g[1], claim.value)), None)
            if match is None:
                counts[claim.kind]["fp"] += 1
            else:
                gold.remove(match)
                counts[claim.kind]["tp"] += 1
        for kind, _ in gold:
            counts[kind]["fn"] += 1
    return counts


def false_alarms(rows: list[dict], read=extract_claims) -> tuple[int, int]:
    """How many messages without a labelled claim `read` reports a claim on, and how many such messages there are:
    the false claims a study would count as lies where nothing was claimed."""
    empty = [row for row in rows if not row["claims"]]
    return sum(bool(read(row["message"], row["role"])) for row in empty), len(empty)


def adversarial(rows: list[dict]) -> tuple[int, int]:
    """How many false limit claims the confirmation lets through, of how many tried: every written price of every
    message offered as each kind of limit it is not (and the rules do not read it as), as a model that invents
    claims would; the confirmation must refuse them."""
    tried = passed = 0
    for row in rows:
        known = [(g["kind"], g["value"]) for g in row["claims"]] + [
            (c.kind, c.value) for c in extract_claims(row["message"], row["role"])
        ]
        for price in find_prices(row["message"]):
            for kind in ("own_limit", "other_limit"):
                if not any(k == kind and same_value(v, price.low) for k, v in known):
                    tried += 1
                    passed += confirm(row["message"], row["role"], kind, price.low) is not None
    return passed, tried


def assisted_readings(rows: list[dict], spec: str | None) -> dict[tuple[str, str], Assisted]:
    """Every message read with the model `spec` (openai:MODEL@URL), or with the labelled claims as the model's
    answer when `spec` is None (the oracle), each claim confirmed by the rules."""
    if spec is None:
        return {(r["message"], r["role"]): combine(r["message"], r["role"], r["claims"]) for r in rows}
    from bargain.agents.arms import resolve
    from bargain.agents.backends import Backends

    arm = resolve(spec)
    backend = Backends(None, remote=[arm.base_url]).for_arm(arm)
    return read_all([(r["message"], r["role"]) for r in rows], backend, backend.model_name(arm))


def _labelled(reading: Reading, gold: list[tuple[str, float | None]]) -> bool:
    """Whether a labelled claim of the reading's kind and price (either end of a range) is in its message."""
    values = [None] if reading.price is None else [reading.price.low, reading.price.high]
    return any(kind == reading.kind and any(same_value(value, v) for v in values) for kind, value in gold)


def rule_counts(rows: list[dict]) -> dict[str, Counter]:
    """Per cue, how often it fires ("fired") and how often rightly ("right": a labelled claim of its kind and price
    is in the message); per canceller, how often it cancels a cue ("cancelled") and how often rightly ("kept_out":
    no such labelled claim, or another cue found it)."""
    counts = {key: Counter() for key in ("fired", "right", "cancelled", "kept_out", "alternative")}
    for row in rows:
        gold = [(g["kind"], g["value"]) for g in row["claims"]]
        found = None
        masked, clauses = parse(row["message"], Role(row["role"]))
        for reading in readings(row["message"], row["role"]):
            labelled = _labelled(reading, gold)
            if reading.asserted:
                counts["fired"][reading.cue] += 1
                counts["right"][reading.cue] += labelled
                counts["alternative"][(reading.cue, _alternative(masked, clauses, reading))] += 1
                continue
            rule = ("final:" if reading.cue in _FINAL_CUES else "") + reading.cancelled_by
            if labelled and found is None:
                found = extract_claims(row["message"], row["role"])
            counts["cancelled"][rule] += 1  # right when nothing labelled was lost: no such claim, or another cue's
            counts["kept_out"][rule] += not labelled or any(
                c.kind == reading.kind and _labelled(reading, [(c.kind, c.value)]) for c in found
            )
    return counts


_FINAL_CUES = frozenset(cue.name for cue in CUES if cue.side == "sentence")  # cancelled by FINAL_CANCELLERS
_ALTERNATIVES = {cue.name: [re.compile(a, re.IGNORECASE) for a in cue.alternatives] for cue in CUES}


def _alternative(masked: str, clauses: list, reading: Reading) -> int:
    """Which top-level alternative of its cue's pattern found a reading: the first that matches its span, in its
    clause, as the cue ran."""
    clause = next(c for c in clauses if c.start <= reading.start < c.end)
    text, start, end = masked[clause.start : clause.end], reading.start - clause.start, reading.end - clause.start
    return next(
        i
        for i, alt in enumerate(_ALTERNATIVES[reading.cue])
        if (match := alt.match(text, start)) and match.end() == end
    )


def print_rule_counts(rows: list[dict]) -> None:
    """The table of `rule_counts` over `rows`: every cue, then every canceller, then the cues that never fire."""
    counts = rule_counts(rows)
    print(f"{'cue':28s} {'kind':12s} {'fires':>6s} {'right':>6s} {'share':>6s}")
    for cue in CUES:
        fired, right = counts["fired"][cue.name], counts["right"][cue.name]
        print(f"{cue.name:28s} {cue.kind:12s} {fired:6d} {right:6d} {_ratio(right, fired):>6s}")
    print(f"\n{'canceller':28s} {'':12s} {'cancels':>6s} {'right':>6s} {'share':>6s}")
    for prefix, rules in (("", LIMIT_EXCEPTIONS + LIMIT_CANCELLERS), ("final:", FINAL_CANCELLERS)):
        for rule in rules:
            name = prefix + rule.name
            cancelled, kept_out = counts["cancelled"][name], counts["kept_out"][name]
            print(f"{name:28s} {'':12s} {cancelled:6d} {kept_out:6d} {_ratio(kept_out, cancelled):>6s}")
    silent = [cue.name for cue in CUES if not counts["fired"][cue.name]]
    print(f"\ncues that never fire on {len(rows)} labelled messages: {', '.join(silent) or 'none'}")
    print("alternatives that never fire on them, of the cues with more than one (* nor on the cue's own examples):")
    for cue in CUES:
        alts = cue.alternatives
        unused = [i for i in range(len(alts)) if not counts["alternative"][(cue.name, i)]]
        if len(alts) > 1 and unused and counts["fired"][cue.name]:
            shown = example_alternatives(cue.name, cue.fires)
            print(
                f"  {cue.name} ({len(unused)} of {len(alts)}): "
                + "  ".join(alts[i] + ("" if i in shown else " *") for i in unused)
            )


def example_alternatives(name: str, examples: tuple[str, ...]) -> set[int]:
    """Which top-level alternatives of the cue `name` its examples fire, read without a speaker's side."""
    shown = set()
    for message in examples:
        masked, clauses = parse(message, None)
        shown |= {_alternative(masked, clauses, r) for r in readings(message, None) if r.asserted and r.cue == name}
    return shown


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "-"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.claims", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--model", help="score the model-assisted reading with this model (openai:MODEL@URL)")
    mode.add_argument(
        "--oracle",
        action="store_true",
        help="score the model-assisted reading with the labelled "
        "claims as the model's answer (the most confirmation lets a model add)",
    )
    mode.add_argument(
        "--cues",
        action="store_true",
        help="count how often each cue and each canceller fires on all labelled sets, and how often rightly",
    )
    args = parser.parse_args()
    if args.cues:
        print_rule_counts([row for names in SETS.values() for name in names for row in load(name)])
        return
    added = refused = 0
    print(
        f"{'set':24s} {'kind':12s} {'msgs':>5s} {'precision':>9s} {'recall':>7s}  (tp/fp/fn; claim-free messages "
        f"with a claim reported)"
    )
    messages = []
    for group, names in SETS.items():
        for name in names:
            rows = load(name)
            messages += [(row["message"], row["role"]) for row in rows]
            read = extract_claims
            if args.model or args.oracle:
                readings = assisted_readings(rows, args.model)
                added += sum(a.model_added for a in readings.values())
                refused += sum(len(a.model_refused) for a in readings.values())
                read = reader(readings)
            counts = score(rows, read)
            total = {key: sum(c[key] for c in counts.values()) for key in ("tp", "fp", "fn")}
            flagged, empty = false_alarms(rows, read)
            for kind, c in [("all", total), *counts.items()]:
                print(
                    f"{name + ' (' + group[:4] + ')' if kind == 'all' else '':24s} {kind:12s} "
                    f"{len(rows) if kind == 'all' else '':>5} {_ratio(c['tp'], c['tp'] + c['fp']):>9s} "
                    f"{_ratio(c['tp'], c['tp'] + c['fn']):>7s}  ({c['tp']}/{c['fp']}/{c['fn']}"
                    f"{f'; {flagged} of {empty}' if kind == 'all' else ''})"
                )
    if args.model or args.oracle:
        print(f"\nthe model added {added} claims the rules had not found; {refused} of its claims were refused")
    if args.oracle:
        passed, tried = map(sum, zip(*(adversarial(load(name)) for names in SETS.values() for name in names)))
        print(
            f"an inventing model (every written price as each limit it is not): {passed} of {tried} false claims "
            f"confirmed ({100 * passed / tried:.1f}%)"
        )
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        for message, role in messages:
            extract_claims(message, role)
        times.append((time.perf_counter() - start) * 1000 / len(messages))
    median = statistics.median(times)
    print(
        f"\n{len(messages)} messages: {median:.2f} ms per message (median of {args.repeats}; "
        f"best {min(times):.2f}); goal under {GOAL_MS:.0f} ms: {'met' if median < GOAL_MS else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
