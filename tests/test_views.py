"""The JSON a program is sent for a view stays what it was: each scenario of tests/view_payloads.py, serialised by
`to_json`, is the payload recorded in tests/data/views before views were typed, byte for byte (keys sorted)."""

import pytest
from view_payloads import RECORDED, payloads

NAMES = ["free_play", "finished", "people_waiting", "people_active", "study_move"]


@pytest.fixture(scope="module")
def serialised() -> dict[str, str]:
    return payloads()


@pytest.mark.parametrize("name", NAMES)
def test_a_views_json_is_the_recorded_payload(serialised, name):
    assert serialised[name] == (RECORDED / f"{name}.json").read_text(encoding="utf-8")


def test_every_recorded_payload_is_compared():
    assert sorted(NAMES) == sorted(path.stem for path in RECORDED.glob("*.json"))
