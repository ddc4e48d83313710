"""Study mode through the app: `python app.py --study FILE`, simulated participants with gradio_client,
and one participant in headless Chromium with a screenshot of every page."""

from __future__ import annotations

import json
import time
import zipfile

import pytest
from arena_helpers import admin, browser_page, keep_screenshot, launch
from gradio_client import Client
from test_pages_offline import foreign
from test_study_flow import answers_for, make_study

from bargain import app as arena_app
from bargain.study import records


@pytest.fixture
def served(tmp_path):
    make_study(tmp_path)
    running = launch(tmp_path / "arena.db", "--study", str(tmp_path / "study.yaml"))
    yield running
    running.demo.close()


def walk_through(client: Client, query: dict) -> list[dict]:
    """One simulated participant, from the link to the completion code."""
    pages = [client.predict(query, api_name="/study_page")]

    def step(stage: str, data: dict) -> dict:
        pages.append(client.predict(query, stage, data, api_name="/study_step"))
        return pages[-1]

    step("consent", {"agree": True})
    step("instructions", {})
    page = step("comprehension", {"no_deal": "Nothing"})
    while page["stage"] != "completed":
        if page["stage"] == "game":
            game = page["view"]
            page = step(
                "game",
                {
                    "round": game["round"],
                    "action": "OFFER",
                    "price": f"{game['your_price'] * 0.5:.2f}",
                    "message": "hello",
                },
            )
        elif page["stage"] in ("game_survey", "final_survey"):
            page = step(page["stage"], answers_for(page["items"], attention="Rarely"))
        elif page["stage"] == "debrief":
            page = step("debrief", {})
        else:
            raise AssertionError(page)
    return pages


@pytest.mark.slow  # participants through the whole study, over HTTP (seconds)
def test_simulated_participants_complete_the_study_through_the_api(served):
    client = Client(served.url, verbose=False)
    info = client.view_api(print_info=False, return_format="dict")
    assert info["named_endpoints"] == {}  # nothing documented: no free play, and the study's own endpoints unlisted
    pages = walk_through(client, {"PROLIFIC_PID": "P1", "STUDY_ID": "S1"})
    assert pages[-1]["code"] == "DONE123"
    before_debrief = json.dumps([p for p in pages if p["stage"] != "debrief"])
    assert not any(word in before_debrief for word in ("tactic:", "hardliner", "linear", "arm:"))
    again = Client(served.url, verbose=False).predict({"PROLIFIC_PID": "P1"}, api_name="/study_page")
    assert again["stage"] == "completed"  # a finished participant cannot play again
    with pytest.raises(Exception, match="(?i)no participant id"):
        client.predict({}, api_name="/study_page")
    row = records.participant(served.arena.store, "flow-test", "P1")
    assert row["stage"] == "completed" and len(row["games"]) == 2
    # Every number a participant is sent before the debrief is a counter (NO_PRICE) or a figure they know: their own
    # price, an offer made in their game, their own utility. Any other (the other side's price, the gap or midpoint
    # of the two, the other side's utility, a normalised one) would tell them what the debrief is first to say. Known
    # figures are compared as values, not skipped by key, so a hidden figure under a known key is caught too; and no
    # hidden figure that happens to equal a known one (small prices of a low tier meet often) fails the test.
    known = {t["price"] for page in pages if page["stage"] == "game" for t in page["view"]["transcript"]}
    for game in (served.arena.store.game(g) for g in row["games"]):
        person = game["human_role"]
        known |= {game[f"{person}_price"], game[f"{person}_utility"]}  # stored as 0.0 without a deal
    sent = [n for page in pages if page["stage"] != "debrief" for n in numbers(page)]
    assert sent and not [x for x in sent if not any(abs(x - k) < 1e-9 for k in known)]


# Keys whose numbers hold no price: counters, timers, scales and lengths, and the ranges the condition discloses
# (which the disclosure tests check).
NO_PRICE = {
    "games",
    "game",
    "attempts_left",
    "round",
    "max_rounds",
    "rounds",
    "paper_rounds",
    "seconds_left",
    "scale",
    "max_length",
    "their_price_prior",
    "your_price_prior",
}


def numbers(payload) -> list[float]:
    """Every number in a JSON payload that could tell a price (NO_PRICE's keys aside)."""
    if isinstance(payload, dict):
        return [n for key, value in payload.items() if key not in NO_PRICE for n in numbers(value)]
    if isinstance(payload, list):
        return [n for value in payload for n in numbers(value)]
    return [float(payload)] if isinstance(payload, (int, float)) and not isinstance(payload, bool) else []


@pytest.mark.slow
def test_a_changed_study_file_under_the_same_version_is_refused(tmp_path):
    from cli_runner import run_main

    make_study(tmp_path)
    first = launch(tmp_path / "arena.db", "--study", str(tmp_path / "study.yaml"))
    first.demo.close()
    (tmp_path / "consent.md").write_text("A changed consent text.")
    result = run_main(arena_app.main, "--db", str(tmp_path / "arena.db"), "--study", str(tmp_path / "study.yaml"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "new version number" in result.stderr


@pytest.mark.slow
def test_a_participant_in_the_browser_sees_every_page(served, tmp_path):
    """From the link to the completion code, with a screenshot of each page; every request the pages make, their
    first load's too, goes to the app's own address (no font, script or tracker from another host: a participant is
    seen by the researcher's server alone)."""
    shots, requests = [], []
    with browser_page(served.url + "?PROLIFIC_PID=B1&STUDY_ID=S1") as page:

        def shot(name: str) -> None:
            path = tmp_path / f"study-{len(shots):02d}-{name}.png"
            page.screenshot(path=str(path), full_page=True)
            shots.append(path)

        page.on("request", lambda request: requests.append(request.url))
        page.reload()
        page.wait_for_selector("text=We record your moves.", timeout=20000)
        shot("consent")
        page.get_by_role("button", name="I agree to take part").click()
        page.wait_for_selector("text=Bargain well.", timeout=20000)
        shot("instructions")
        page.get_by_role("button", name="I have read the instructions").click()
        page.wait_for_selector("text=Before you start", timeout=20000)
        page.get_by_label("Everything").check()
        page.get_by_role("button", name="Check my answers").click()
        page.wait_for_selector("text=1 attempt left", timeout=20000)
        shot("comprehension-retry")
        page.get_by_label("Nothing").check()
        page.get_by_role("button", name="Check my answers").click()
        for game in (1, 2):
            page.wait_for_selector(f"text=Game {game} of 2, against the other party", timeout=20000)
            assert "left for this move" in page.inner_text("body")  # the countdown
            shot(f"game-{game}")
            over = f"Game {game} is over"
            for next_ in ("Round 2 of 2", over):  # or a deal in round 1
                page.get_by_role("textbox", name="Price").fill("0.50")
                page.get_by_role("button", name="Offer", exact=True).click()
                page.wait_for_function(
                    "texts => texts.some(t => document.body.innerText.includes(t))", arg=[next_, over], timeout=20000
                )
                if over in page.inner_text("body"):
                    break
            shot(f"survey-{game}")
            assert not page.get_by_label("A computer program").is_checked()  # each survey starts empty
            page.get_by_label("A computer program").check()
            page.get_by_label("3", exact=True).check()
            page.get_by_label("The other party outright lies about their price floor").check()
            if game == 2:
                page.get_by_label("Rarely").check()
            page.get_by_role("button", name="Submit").first.click()
        page.wait_for_selector("text=A few last questions", timeout=20000)
        shot("final-survey")
        page.get_by_role("button", name="Submit").last.click()
        page.wait_for_selector("text=The other party was a program.", timeout=20000)
        body = page.inner_text("body")
        assert "had a reservation price of" in body and "Game 2" in body
        shot("debrief")
        page.get_by_role("button", name="Finish and get my completion code").click()
        page.wait_for_selector("text=DONE123", timeout=20000)
        shot("completed")
        page.evaluate("() => document.fonts.ready.then(() => true)")  # every face the pages use fetched
    assert all(p.stat().st_size > 10_000 for p in shots)
    assert len(requests) > 20 and foreign(requests, served.url) == []
    for path in shots:
        keep_screenshot(path)


@pytest.mark.slow
def test_the_researchers_dashboard_behind_the_admin_password(served, tmp_path):
    from bargain.study import dashboard

    client = Client(served.url, verbose=False)
    walk_through(client, {"PROLIFIC_PID": "D1"})
    client.predict({"PROLIFIC_PID": "D2"}, "consent", {"agree": False}, api_name="/study_step")
    store = served.arena.store
    funnel = dict(zip(*dashboard.funnel(store, "flow-test", 1)[["step", "participants"]].T.values))
    assert funnel["arrived"] == 2 and funnel["consented"] == 1 and funnel["completed"] == 1 and funnel["declined"] == 1
    assert set(dashboard.cells(store, "flow-test", 1)["taken"]) == {1}
    assert {"consent", "game", "debrief"} <= set(dashboard.page_times(store, "flow-test", 1)["page"])
    games = dashboard.recent_games(store, "flow-test")
    shown = dashboard.transcript_markdown(store, games["id"].iloc[0])
    game = store.game(games["id"].iloc[0])
    assert f"{game['buyer_price']:.2f}" in shown and f"{game['seller_price']:.2f}" in shown  # both sides' prices
    with browser_page(served.url + "?admin") as page:
        page.wait_for_selector("text=the researcher's view", timeout=20000)
        assert "We record your moves." not in page.inner_text("body")  # no participant flow here
        admin(page, "Open / refresh")
        page.wait_for_function("document.body.innerText.includes('a/both_unaware/buyer')", timeout=20000)
        assert "finished their games" in page.inner_text("body")
        page.get_by_text("Export the study's data").click()
        page.get_by_role("button", name="Export", exact=True).click()
        page.wait_for_selector("text=Download flow-test-v1.zip", timeout=30000)
        page.screenshot(path=str(tmp_path / "dashboard-export.png"), full_page=True)
        with page.expect_download() as download:
            page.get_by_text("Download flow-test-v1.zip").click()
        download.value.save_as(tmp_path / "export.zip")
        assert "file=" not in page.content()  # no address serves it
        page.get_by_text("Analyse the data so far").click()
        page.get_by_role("button", name="Analyse", exact=True).click()
        page.wait_for_selector("text=Download flow-test-v1-analysis.zip", timeout=60000)
        report = page.frame_locator("iframe[title='The analysis']")
        report.get_by_text("Leaderboard").first.wait_for(timeout=20000)
        page.screenshot(path=str(tmp_path / "dashboard-analysis.png"), full_page=True)
        with page.expect_download() as download:
            page.get_by_text("Download flow-test-v1-analysis.zip").click()
        download.value.save_as(tmp_path / "analysis.zip")
    with zipfile.ZipFile(tmp_path / "analysis.zip") as archive:
        names = set(archive.namelist())
        assert {"report.html", "report.md", "analysis.json", "tables/contrasts.csv"} <= names
        assert not any(name.startswith(("payment/", "export/")) for name in names)  # the report only
    with zipfile.ZipFile(tmp_path / "export.zip") as archive:
        names = set(archive.namelist())
        assert {"codebook.md", "surveys_wide.parquet", "payment/bonuses.csv"} <= names
        assert "D1" in archive.read("payment/payments.csv").decode()  # the platform's ids, for paying


def test_refusals_and_database_errors_answer_in_the_projects_words_and_log_one_line(served, monkeypatch, caplog, capfd):
    """A refused request (no participant id) and a database that fails mid-step: the program is told in the
    project's own sentence (never `{"error": null}`), the log gets one line each and no traceback."""
    import logging

    import httpx

    from bargain.records.store import StoreError

    def post(*data) -> tuple[int, dict]:
        answer = httpx.post(f"{served.url}gradio_api/run/study_step", json={"data": list(data)}, timeout=30)
        return answer.status_code, answer.json()

    caplog.set_level(logging.INFO)
    capfd.readouterr()
    status, body = post({}, "consent", {"agree": True})
    assert status != 200 and "no participant id" in body["error"]

    def down(*args, **kwargs):
        raise StoreError("cannot update a participant in the database at postgresql://x: server closed the connection")

    monkeypatch.setattr(records, "move_to", down)
    status, body = post({"PROLIFIC_PID": "E1"}, "consent", {"agree": True})
    assert status != 200 and body["error"].startswith("The study's records cannot be saved right now")
    assert "postgresql" not in body["error"]
    logged = [r for r in caplog.records if r.name.startswith("bargain")]
    assert [r.levelname for r in logged] == ["INFO", "ERROR", "INFO"]  # refused; the failure; its refusal
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in logged)
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.slow
def test_a_model_that_hangs_is_told_in_the_browser_and_the_round_can_be_played_again(tmp_path):
    """The study page against a model server that takes requests and never answers: the move is kept and the page
    says, after the deadline, that the other side took too long; a reload shows the game at once, and once the
    server is back Try again plays the round with the move kept."""
    from bargain.agents.stub_server import StubServer

    make_study(tmp_path)
    yaml = tmp_path / "study.yaml"
    yaml.write_text(
        yaml.read_text().replace('"tactic:hardliner"', '"arm:base"').replace('"tactic:linear"', '"arm:base"')
    )
    with StubServer(["Qwen/Qwen3-8B"]) as model:
        running = launch(
            tmp_path / "arena.db",
            "--study",
            str(yaml),
            "--backend",
            "vllm",
            "--base-url",
            model.url,
            "--move-deadline",
            "2",
        )
        try:
            with browser_page(running.url + "?PROLIFIC_PID=H1", height=1000) as page:
                page.wait_for_selector("text=We record your moves.", timeout=20000)
                page.get_by_role("button", name="I agree to take part").click()
                page.get_by_role("button", name="I have read the instructions").click()
                page.get_by_label("Nothing").check()
                model.delay_s = 3600.0  # from the first game on, the model never answers
                page.get_by_role("button", name="Check my answers").click()
                page.wait_for_selector("text=Game 1 of 2", timeout=20000)
                page.get_by_role("textbox", name="Price").fill("1.00")
                page.get_by_role("button", name="Offer", exact=True).click()
                page.wait_for_selector("text=The other side took too long to answer", timeout=20000)
                page.screenshot(path=str(tmp_path / "hang.png"), full_page=True)
                began = time.monotonic()
                page.reload()
                page.wait_for_selector("text=Game 1 of 2", timeout=20000)
                assert time.monotonic() - began < 10
                page.wait_for_selector("text=Round 1 of 2", timeout=5000)
                page.wait_for_timeout(2500)  # the round retried by the reload runs out its deadline too
                model.delay_s = 0.0
                page.get_by_role("button", name="Try again").click()  # the move was kept: the model is asked again
                page.wait_for_selector("text=Round 2 of 2", timeout=20000)
                page.screenshot(path=str(tmp_path / "played.png"), full_page=True)
        finally:
            running.demo.close()
    for name in ("hang.png", "played.png"):
        keep_screenshot(tmp_path / name, f"study-{name}")


def test_the_study_page_links_to_no_api_and_takes_no_upload(served):
    import httpx

    config = httpx.get(f"{served.url}config", timeout=30).json()
    assert config["footer_links"] == []  # no "Use via API" under a participant's page
    answer = httpx.post(f"{served.url}gradio_api/upload", files={"files": ("big.bin", b"0" * 20_000_000)}, timeout=60)
    assert answer.status_code == 413


@pytest.mark.slow
def test_unanswered_questions_are_named_and_marked_and_a_timeout_is_explained(tmp_path):
    """A page sent with questions unanswered names each one and marks it; a move not made in time shows as such in
    the chat, and the page says what it means for the bonus under the study's payment rule."""
    make_study(tmp_path)
    yaml = tmp_path / "study.yaml"
    yaml.write_text(yaml.read_text().replace("move_seconds: 60", "move_seconds: 10"))
    running = launch(tmp_path / "arena.db", "--study", str(yaml))
    try:
        with browser_page(running.url + "?participant=T1", height=1000) as page:
            page.wait_for_selector("text=We record your moves.", timeout=20000)
            page.get_by_role("button", name="I agree to take part").click()
            page.get_by_role("button", name="I have read the instructions").click()
            page.get_by_role("button", name="Check my answers").click()  # nothing chosen
            page.wait_for_selector("text=Please check your answers", timeout=20000)
            assert "No deal pays?: Choose one of the options." in page.inner_text("body")
            assert page.locator(".needs-answer").count() == 1
            page.get_by_label("Nothing").check()
            page.get_by_role("button", name="Check my answers").click()
            page.wait_for_selector("text=Game 1 of 2", timeout=20000)
            assert page.locator(".needs-answer").count() == 0
            # Round 1 passes unplayed: the countdown asks for the page at zero.
            page.wait_for_selector("text=passes: time ran out", timeout=30000)
            body = page.inner_text("body")
            assert "Your time for a move ran out" in body and "earns no bonus" in body
            page.get_by_role("textbox", name="Price").fill("0.50")
            page.get_by_role("button", name="Offer", exact=True).click()
            page.wait_for_selector("text=Game 1 is over", timeout=20000)
            page.get_by_role("button", name="Submit").first.click()  # the survey sent empty
            page.wait_for_selector("text=Please check your answers", timeout=20000)
            body = page.inner_text("body")
            for question in ("The other party's honesty", "person or a computer program", "Satisfied?"):
                assert question in body.split("Please check your answers")[1].split("Game 1 is over")[0], question
            assert page.locator(".needs-answer").count() == 3
            page.screenshot(path=str(tmp_path / "unanswered.png"), full_page=True)
    finally:
        running.demo.close()
    keep_screenshot(tmp_path / "unanswered.png", "study-unanswered.png")


@pytest.mark.slow
def test_a_browser_back_under_another_id_is_flagged(served):
    from bargain.study import dashboard

    with browser_page(served.url + "?participant=BACK1") as page:
        page.wait_for_selector("text=We record your moves.", timeout=20000)
        page.goto(served.url + "?participant=BACK1b")  # the same browser, a made-up id
        page.wait_for_selector("text=We record your moves.", timeout=20000)
    with browser_page(served.url + "?participant=ELSEWHERE") as page:  # another browser
        page.wait_for_selector("text=We record your moves.", timeout=20000)
    flagged = dashboard.same_browser(served.arena.store, "flow-test", 1)
    assert sorted(flagged["participant"]) == ["BACK1", "BACK1b"]
