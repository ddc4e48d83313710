"""The arena's page loads nothing from another host (no font, script or tracker), and its bold text is set in one
face (Gradio's default theme asks for a weight whose file holds a handful of letters, so "Bargaining" and "BUYER" were
set in two). A study's pages, from the link to the completion code, are held to the same in tests/test_study_app.py
(a participant is seen by the researcher's server alone)."""

from __future__ import annotations

import pytest
from arena_helpers import browser_page, launch


def faces(page, selector: str) -> list[str]:
    """The fonts Chromium drew the first element matching `selector` with (its DevTools' platform fonts)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    return [font["postScriptName"] for font in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]]


def foreign(requests: list[str], url: str) -> list[str]:
    return [r for r in requests if not r.startswith(url) and not r.startswith("data:")]


@pytest.mark.slow
def test_the_arena_loads_nothing_from_another_host_and_sets_its_title_in_one_face(tmp_path):
    app = launch(tmp_path / "arena.db")
    try:
        with browser_page(app.url) as page:
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.reload()
            page.wait_for_selector("text=Bargaining arena", timeout=30000)
            page.get_by_role("button", name="Start game").click()
            page.wait_for_selector("text=Round 1 of 4", timeout=20000)
            page.evaluate("() => document.fonts.ready.then(() => true)")  # every face the page uses fetched
            assert len(requests) > 20 and foreign(requests, app.url) == []
            assert len(faces(page, "h1")) == 1  # "Bargaining arena", in bold
            bold = page.locator("strong", has_text="You are the BUYER").first
            bold.evaluate("node => node.setAttribute('data-probe', '1')")
            assert len(faces(page, "[data-probe]")) == 1
            page.screenshot(path=str(tmp_path / "arena.png"))
    finally:
        app.demo.close()
