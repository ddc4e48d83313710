"""bargain/analysis is read beside its patterns and examples: short lines and short functions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ANALYSIS = Path(__file__).resolve().parents[1] / "bargain" / "analysis"
MODULES = sorted(ANALYSIS.glob("*.py"))
MAX_LINE, MAX_FUNCTION = 100, 80


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_no_line_is_over_100_characters(path):
    long = [i for i, line in enumerate(path.read_text().splitlines(), 1) if len(line) > MAX_LINE]
    assert not long, f"{path.name}: lines over {MAX_LINE} characters: {long}"


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_no_function_is_over_80_lines(path):
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION
    ]
    assert not long, f"{path.name}: functions over {MAX_FUNCTION} lines: {long}"
