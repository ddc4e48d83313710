"""The pages people meet load nothing from another host (no font, script or tracker: a study's participant is seen
by the researcher's server alone), and their bold text is set in one face (Gradio's default theme asks for a weight
whose file holds a handful of letters, so "Bargaining" and "BUYER" were set in two)."""

from __future__ import annotations

import pytest
from arena_helpers import browser_page, launch
from test_study_flow import make_study


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


@pytest.mark.slow
def test_a_study_page_loads_nothing_from_another_host(tmp_path):
    make_study(tmp_path)
    app = launch(tmp_path / "arena.db", "--study", str(tmp_path / "study.yaml"))
    try:
        with browser_page(f"{app.url}?PROLIFIC_PID=P1&STUDY_ID=S1") as page:
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.reload()
            page.get_by_role("button", name="I agree to take part").click()
            page.get_by_role("button", name="I have read the instructions").click()
            page.get_by_label("Nothing").check()
            page.get_by_role("button", name="Check my answers").click()
            page.wait_for_selector("text=Game 1 of 2, against the other party", timeout=20000)
            page.evaluate("() => document.fonts.ready.then(() => true)")  # every face the page uses fetched
            assert len(requests) > 20 and foreign(requests, app.url) == []
            page.screenshot(path=str(tmp_path / "study.png"))
    finally:
        app.demo.close()
