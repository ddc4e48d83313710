"""The app's settings, from a flag or the environment alike, are checked for type and range before anything
starts: a bad value is one line naming the flag, never a traceback from deep inside."""

from __future__ import annotations

import pytest

from bargain import app

NUMBERS = {
    "--port": "BARGAIN_PORT",
    "--max-in-flight": "BARGAIN_MAX_IN_FLIGHT",
    "--max-reply-tokens": "BARGAIN_MAX_REPLY_TOKENS",
    "--move-deadline": "BARGAIN_MOVE_DEADLINE",
    "--concurrency": "BARGAIN_CONCURRENCY",
    "--idle-minutes": "BARGAIN_IDLE_MINUTES",
    "--games-per-hour": "BARGAIN_GAMES_PER_HOUR",
    "--games-per-hour-per-address": "BARGAIN_GAMES_PER_HOUR_PER_ADDRESS",
    "--sync-minutes": "BARGAIN_SYNC_MINUTES",
    "--trusted-proxies": "BARGAIN_TRUSTED_PROXIES",
}


def refused(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        app.parse_args(argv)
    assert exited.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Traceback" not in said
    return said


BOUNDED = ("--port", "--move-deadline", "--trusted-proxies")  # the others have no upper bound: more is a choice
CASES = [
    (flag, variable, bad)
    for flag, variable in NUMBERS.items()
    for bad in ("abc", "-5", "nan", "1e400", *(("99999999",) if flag in BOUNDED else ()))
]


@pytest.mark.parametrize("flag, variable, bad", CASES)
def test_a_bad_number_from_the_environment_or_a_flag_is_one_line_naming_the_flag(
    flag, variable, bad, monkeypatch, capsys
):
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


def test_the_training_config_checks_every_fields_type_from_a_file(tmp_path):
    """YAML reads `1e-6` as a string: a float field takes it as the number it is; a wrong type anywhere is one
    sentence per field, naming the file."""
    from train import config

    preset = tmp_path / "run.yaml"
    preset.write_text("learning_rate: 1e-6\nsteps: 3\n")
    assert config.load(preset).learning_rate == 1e-6
    preset.write_text(
        "learning_rate: fast\nbatch_size: 96.5\nroles: buyer\nbf16: 'yes'\nsteps: '300'\nbase_url: null\n"
    )
    with pytest.raises(ValueError) as refusal:
        config.load(preset)
    assert str(refusal.value) == (
        f"{preset}: bad training configuration: roles must be a list of names, got 'buyer'; learning_rate must be a "
        "number, got 'fast'; batch_size must be a whole number, got 96.5; steps must be a whole number, got '300'; "
        "bf16 must be true or false, got 'yes'"
    )


@pytest.mark.parametrize(
    "override, said",
    [
        ({"epochs": True}, "epochs must be a whole number, got True"),
        ({"clip": float("inf")}, "clip must be a number, got inf"),
        ({"model": 8}, "model must be a text, got 8"),
    ],
)
def test_the_training_config_checks_types_from_code_and_flags_too(override, said):
    from train import config

    with pytest.raises(ValueError, match=said):
        config.load(None, override)
