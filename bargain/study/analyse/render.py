"""Rendering a report's blocks as Markdown and as one self-contained HTML page (figures inline as base64 PNG, no
script, readable on a phone: text wraps, wide tables scroll sideways inside their own box, images fit the
screen). One list of blocks makes both, so that report.md and report.html say the same.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

CSS = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:0 .8rem;line-height:1.45;color:#222}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}h3{font-size:1rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;margin:.5rem 0 1rem}
table{border-collapse:collapse;font-size:.8rem;white-space:nowrap}
th,td{border:1px solid #ddd;padding:.2rem .45rem;text-align:right}th{background:#f3f3f3}
td.text,th.text{text-align:left}img{max-width:100%;height:auto}code{word-break:break-all}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555}
"""


@dataclass(frozen=True)
class Block:
    """One piece of the report: a heading (`level` 1-3), a paragraph, a list, a table or a figure."""

    kind: str  # heading, text, items, table, figure
    text: str = ""
    level: int = 0
    items: tuple[str, ...] = ()
    table: pd.DataFrame | None = None


def markdown(blocks: Iterable[Block]) -> str:
    """The blocks as Markdown."""
    lines: list[str] = []
    for block in blocks:
        if block.kind == "heading":
            lines += ["#" * block.level + " " + block.text, ""]
        elif block.kind == "text":
            lines += [block.text, ""]
        elif block.kind == "items":
            lines += [*(f"- {item}" for item in block.items), ""]
        elif block.kind == "table" and block.table is not None:
            lines += _markdown_table(block.table)
        elif block.kind == "figure":
            lines += [f"![{block.items[0]}](figures/{block.text}.png)", ""]
    return "\n".join(lines)


def _markdown_table(table: pd.DataFrame) -> list[str]:
    """A pipe table (or a line saying it is empty)."""
    if table.empty:
        return ["(none)", ""]

    def cell(value: object) -> str:
        return str(value).replace("|", "/").replace("\n", " ")

    rows = [" | ".join(cell(c) for c in table.columns)]
    rows.append(" | ".join("---" for _ in table.columns))
    rows += [" | ".join(cell(v) for v in row) for row in table.itertuples(index=False)]
    return [f"| {row} |" for row in rows] + [""]


def page(blocks: Iterable[Block], name: str, figures: Path) -> str:
    """The blocks as one self-contained HTML page, figures inline."""
    body = []
    for block in blocks:
        if block.kind == "heading":
            body.append(f"<h{block.level}>{_inline(block.text)}</h{block.level}>")
        elif block.kind == "text":
            body.append(f"<p>{_inline(block.text)}</p>")
        elif block.kind == "items":
            body.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in block.items) + "</ul>")
        elif block.kind == "table" and block.table is not None:
            body.append(_html_table(block.table))
        elif block.kind == "figure":
            data = base64.b64encode((figures / f"{block.text}.png").read_bytes()).decode()
            caption = html.escape(block.items[0])
            image = f'<img src="data:image/png;base64,{data}" alt="{caption}">'
            body.append(f"<figure>{image}<figcaption>{caption}</figcaption></figure>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Analysis of {html.escape(name)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _html_table(table: pd.DataFrame) -> str:
    """A table that scrolls sideways on a narrow screen."""
    if table.empty:
        return "<p>(none)</p>"
    numeric = {c: all(not isinstance(v, str) or v[:1] in "-–[±0123456789" for v in table[c]) for c in table.columns}
    head = "".join(f'<th class="{"" if numeric[c] else "text"}">{html.escape(str(c))}</th>' for c in table.columns)
    rows = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"" if numeric[c] else "text"}">{html.escape(str(v))}</td>' for c, v in zip(table.columns, row)
        )
        + "</tr>"
        for row in table.itertuples(index=False)
    )
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def _inline(text: str) -> str:
    """Markdown's inline code as HTML, the rest escaped."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))
