"""The package's layers: imports run one way, from the top (the command line and the app, then the web pages, then
arena, study, episodes, runs) down to the pure engine, so that the folder list is the architecture and stays so."""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "bargain"
# anything else (arena, study, episodes, runs...) is 4: under the web pages (5), which only the entry points load (6)
LAYERS = {
    "engine": 0,
    "agents": 1,
    "analysis": 2,
    "records": 3,
    "web": 5,
    "app": 6,
    "cli": 6,
    "__main__": 6,
}
HEAVY = ("torch", "transformers", "peft", "vllm", "gradio", "accelerate")


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], 4) if len(parts) > 1 and parts[1] != "data" else -1


def modules():
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        yield name, path.read_text(encoding="utf-8")


def test_no_module_imports_a_higher_layer():
    upward = [
        (name, imported)
        for name, text in modules()
        for imported in re.findall(r"(?m)^\s*(?:from|import) (bargain(?:\.\w+)*)", text)
        if layer(imported) > layer(name)
    ]
    assert upward == []


def test_the_engine_imports_nothing_but_itself_and_the_standard_library():
    for name, text in modules():
        if layer(name) == 0:
            imported = re.findall(r"(?m)^(?:from|import) (\w+)", text)
            assert all(i in ("bargain", "__future__") or i not in HEAVY + ("pandas", "numpy") for i in imported), name


def web(module: str) -> bool:
    return module == "bargain.web" or module.startswith("bargain.web.")


def test_heavy_libraries_load_only_inside_functions():
    """torch, transformers, vllm, gradio are imported where they are used, never at a module's top,
    except gradio in the web pages themselves (bargain.web), which only the app loads."""
    for name, text in modules():
        top = re.findall(r"(?m)^(?:from|import) (\w+)", text)
        allowed = ("gradio",) if web(name) and name != "bargain.web" else ()
        assert not [t for t in top if t in HEAVY and t not in allowed], name


def test_only_the_web_pages_import_gradio():
    """Everything under the pages (the controller, the views, the study's flow) is driven without Gradio: gradio is
    imported in bargain.web's modules only, anywhere in them, and nowhere else, not even inside a function."""
    outside = [
        name
        for name, text in modules()
        if re.search(r"(?m)^\s*(?:from|import) gradio(?:\.|\s|$)", text) and not web(name)
    ]
    assert outside == []


def test_the_layout_page_names_every_module():
    """docs/layout.md is where a newcomer finds their way: a module it does not name is one they cannot find."""
    text = (PACKAGE.parent / "docs" / "layout.md").read_text(encoding="utf-8")
    unnamed = [
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" and "versions" not in path.parts
        if not re.search(rf"\b{re.escape(path.stem)}(\.py)?\b", text)
    ]
    assert unnamed == []


def test_no_function_runs_over_80_lines_but_the_argument_parsers():
    """A function longer than a screen is several things at once; the argument parsers are lists of flags."""
    parsers = {"build_parser", "parse_args", "add_backend_flags"}
    long = [
        f"{path.relative_to(PACKAGE.parent)}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name not in parsers
        if node.end_lineno is not None and node.end_lineno - node.lineno + 1 > 80
    ]
    assert long == []
