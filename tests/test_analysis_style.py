"""bargain/analysis is read beside its patterns and examples: short lines (its functions are held to 80 lines with
the rest of bargain/, tests/test_layout.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

ANALYSIS = Path(__file__).resolve().parents[1] / "bargain" / "analysis"
MODULES = sorted(ANALYSIS.glob("*.py"))
MAX_LINE = 100


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_no_line_is_over_100_characters(path):
    long = [i for i, line in enumerate(path.read_text().splitlines(), 1) if len(line) > MAX_LINE]
    assert not long, f"{path.name}: lines over {MAX_LINE} characters: {long}"
