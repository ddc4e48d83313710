"""Reading typed prices (bargain.engine.prices): what is read, what is refused, and what the refusal says."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bargain.engine.prices import MAX_CHARS, PriceError, read_price


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2.50", 2.5),
        ("2,50", 2.5),
        ("1,250", 1250.0),
        ("$2.50", 2.5),
        ("€2", 2.0),
        ("£0.99", 0.99),
        ("¥3", 3.0),
        ("2.50 €", 2.5),
        ("2.50 EUR", 2.5),
        ("USD 3", 3.0),
        ("US$3", 3.0),
        ("usd 3", 3.0),
        ("  4.25 ", 4.25),
        ("1,250.00", 1250.0),
        ("12,345,678.9", 12345678.9),
        ("7", 7.0),
        (".75", 0.75),
        ("0.5", 0.5),
        ("0", 0.0),
        ("2,50\u00a0€", 2.5),
        ("$1,200.50", 1200.5),
        ("1234,56", 1234.56),
        ("0.123456789", 0.123456789),
    ],
)
def test_read(text, expected):
    value = read_price(text)
    assert value == expected and type(value) is float


@pytest.mark.parametrize(
    "text",
    [
        "1_000",
        "1.250,00",
        "1e3",
        "1E3",
        "nan",
        "NaN",
        "inf",
        "Infinity",
        "-3",
        "+3",
        "$-3",
        "0x10",
        "٣",
        "３",
        "1٣",
        "",
        "   ",
        "1" * (MAX_CHARS + 1),
        "abc",
        "two dollars",
        "$€3",
        "$3 USD",
        "USD $3",
        "1,2,3",
        "12,34,567",
        "1,2345",
        "0,5",
        ",50",
        "1234,567",
        "1.2.3",
        "7.",
        "$",
        "EUR",
        "3 4",
        "3.5 4",
        "KRW 3",
        "u\u017fd 3",
        "\u212aRW 3",
        "3\n4",
        "1,250,00",
        "١٢٣",
        "½",
        "2²",
    ],
)
def test_refused(text):
    with pytest.raises(PriceError):
        read_price(text)


@pytest.mark.parametrize(
    "text, says",
    [
        (
            "1,2,3",
            "'1,2,3' is not a price: commas must separate groups of three digits (1,250.00) "
            "or come before exactly two decimals (2,50).",
        ),
        ("1_000", "'1_000' is not a price: underscores do not separate thousands; type 1000 or 1,000."),
        ("-3", "'-3' is not a price: a price cannot be negative or carry a sign; type the amount alone, such as 3."),
        ("٣", "'٣' is not a price: write it with the digits 0 to 9."),
        ("$3 USD", "'$3 USD' is not a price: it names a currency more than once; keep one, such as $3 or 3 EUR."),
        ("1.250,00", "'1.250,00' is not a price: a comma after the decimal point is ambiguous"),
        ("1.2.3", "'1.2.3' is not a price: it has more than one decimal point."),
        ("1e3", "'1e3' is not a price: type a number such as 2.50"),
        ("  ", "Nothing was typed: a price is a number such as 2.50"),
    ],
)
def test_refusals_say_why_in_a_sentence(text, says):
    with pytest.raises(PriceError) as refused:
        read_price(text)
    assert str(refused.value).startswith(says)


def test_a_long_entry_is_shown_cut_short():
    with pytest.raises(PriceError) as refused:
        read_price("9" * 10_000)
    message = str(refused.value)
    assert message == f"'{'9' * (MAX_CHARS - 1)}…' is not a price: it is longer than {MAX_CHARS} characters."


def test_price_error_is_a_value_error():
    assert issubclass(PriceError, ValueError)


cents = st.floats(min_value=0.01, max_value=1e9)
CURRENCIES = ["{}", "${}", "€{}", "£{}", "¥{}", "US${}", "USD {}", "EUR{}", "{} €", "{}$", "{} EUR", "{}GBP", "$ {}"]


@settings(max_examples=300, deadline=None)
@given(
    value=cents,
    layout=st.sampled_from(["%.2f", "grouped", "comma"]),
    currency=st.sampled_from(CURRENCIES),
    spaces=st.sampled_from(["", " ", "  \t"]),
)
def test_formatted_cents_read_back_exactly(value, layout, currency, spaces):
    number = {"%.2f": f"{value:.2f}", "grouped": f"{value:,.2f}", "comma": f"{value:.2f}".replace(".", ",")}[layout]
    assert read_price(spaces + currency.format(number) + spaces) == round(value, 2)


GARBAGE = [
    "1",
    "0",
    "9",
    ".",
    ",",
    "_",
    "-",
    "+",
    "e",
    "E",
    "x",
    "$",
    "€",
    "USD",
    "US",
    " ",
    "\u00a0",
    "٣",
    "３",
    "nan",
    "inf",
    "\n",
    "'",
    "\u017f",
]


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=60) | st.lists(st.sampled_from(GARBAGE), max_size=30).map("".join))
def test_anything_else_is_a_price_or_a_price_error_at_once(text):
    start = time.perf_counter()
    try:
        value = read_price(text)
    except PriceError as refused:
        assert str(refused).endswith(".")
    else:
        assert type(value) is float and math.isfinite(value) and value >= 0
    assert time.perf_counter() - start < 0.25  # no backtracking blow-up (seconds); a loaded machine adds milliseconds


@pytest.mark.parametrize(
    "text", ["1" * 1_000_000, " " * 1_000_000 + "3", " " * 30 + "3" + " " * 30, "1," * 500_000, "$" * 1_000_000]
)
def test_huge_entries_are_refused_at_once(text):
    start = time.perf_counter()
    with pytest.raises(PriceError):
        read_price(text)
    assert time.perf_counter() - start < 0.05
