"""The README's links lead somewhere. `mkdocs build --strict` checks the links between the pages of docs/, but the
README is read on GitHub and on the Space, outside the site, so its relative links and their anchors are checked
here."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc gives a heading: lower case, word characters, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in re.findall(r"^#+ (.*)$", FENCE.sub("", page.read_text()), re.M)}


def test_every_relative_link_of_the_readme_names_a_file_and_an_anchor_that_exist():
    targets = [t for t in LINK.findall((ROOT / "README.md").read_text()) if "://" not in t]
    assert targets, "the README links into docs/"
    broken = []
    for target in targets:
        path, _, anchor = target.partition("#")
        page = ROOT / path
        if not page.exists() or (anchor and anchor not in anchors(page)):
            broken.append(target)
    assert broken == []


def test_the_readme_stays_short_and_the_detail_lives_in_docs():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
