"""The app's settings, from a flag or the environment alike, are checked for type and range before anything
starts: a bad value is one line naming the flag, never a traceback from deep inside."""

from __future__ import annotations

import pytest

import app

NUMBERS = {"--port": "BARGAIN_PORT", "--max-in-flight": "BARGAIN_MAX_IN_FLIGHT",
           "--max-reply-tokens": "BARGAIN_MAX_REPLY_TOKENS", "--move-deadline": "BARGAIN_MOVE_DEADLINE",
           "--concurrency": "BARGAIN_CONCURRENCY", "--idle-minutes": "BARGAIN_IDLE_MINUTES",
           "--games-per-hour": "BARGAIN_GAMES_PER_HOUR",
           "--games-per-hour-per-address": "BARGAIN_GAMES_PER_HOUR_PER_ADDRESS",
           "--sync-minutes": "BARGAIN_SYNC_MINUTES", "--trusted-proxies": "BARGAIN_TRUSTED_PROXIES"}


def refused(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        app.parse_args(argv)
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Traceback" not in said
    return said


BOUNDED = ("--port", "--move-deadline", "--trusted-proxies")  # the others have no upper bound: more is a choice
CASES = [(flag, variable, bad) for flag, variable in NUMBERS.items()
         for bad in ("abc", "-5", "nan", "1e400", *(("99999999",) if flag in BOUNDED else ()))]


@pytest.mark.parametrize("flag, variable, bad", CASES)
def test_a_bad_number_from_the_environment_or_a_flag_is_one_line_naming_the_flag(flag, variable, bad, monkeypatch,
                                                                                 capsys):
    monkeypatch.setenv(variable, bad)
    assert f"argument {flag}" in refused(capsys, [])
    monkeypatch.delenv(variable)
    assert f"argument {flag}" in refused(capsys, [flag, bad])


def test_good_values_arrive_typed(monkeypatch):
    monkeypatch.setenv("BARGAIN_PORT", "8123")
    monkeypatch.setenv("BARGAIN_MOVE_DEADLINE", "12.5")
    args = app.parse_args(["--games-per-hour", "3"])
    assert (args.port, args.move_deadline, args.games_per_hour) == (8123, 12.5, 3)
    assert isinstance(args.idle_minutes, float) and args.max_reply_tokens == 1024
