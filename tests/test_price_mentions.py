"""Price mentions in free text (bargain.analysis.price_mentions): every form of a price read the same way, non-prices
set aside."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bargain.analysis.price_mentions import CHEAP_ITEMS, DEAR_ITEMS, find_prices


@pytest.mark.parametrize(
    "text, written, value",
    [
        ("It's $2 now", "$2", 2.0),
        ("2 dollars and no more", "2 dollars", 2.0),
        ("I can do 2.50", "2.50", 2.5),
        ("I can do 2,50", "2,50", 2.5),
        ("for 12,50 a bag", "12,50", 12.5),
        ("the sofa is 1,250", "1,250", 1250.0),
        ("Wir sagen 1.250,00", "1.250,00", 1250.0),
        ("that's £3, fine", "£3", 3.0),
        ("max is 3k", "3k", 3000.0),
        ("it's 2.5k", "2.5k", 2500.0),
        ("3 bucks a plant", "3 bucks", 3.0),
        ("only two fifty for the lot", "two fifty", 2.5),
        ("Two-sixty is where I stop", "Two-sixty", 260.0),
        ("Twenty-six fifty is the most", "Twenty-six fifty", 2650.0),
        ("twelve hundred is the top", "twelve hundred", 1200.0),
        ("about a hundred and fifty", "a hundred and fifty", 150.0),
        ("seventy-five is my final", "seventy-five", 75.0),
        ("Three euros twenty for the box", "Three euros twenty", 3.2),
        ("a couple of bucks for the cup", "a couple of bucks", 2.0),
        ("i only brought a tenner", "a tenner", 10.0),
        ("50 cents each", "50 cents", 0.5),
        ("80p a pack", "80p", 0.8),
        ("My max is .75 for the bar", ".75", 0.75),
        ("I can pay USD 3.", "USD 3", 3.0),
        ("I have 3 kids and a budget of 2.20", "2.20", 2.2),
        ("I'm into this car for twelve-five", "twelve-five", 12500.0),
        ("you got it for a couple hundred bucks", "a couple hundred bucks", 200.0),
        ("fifty pee each", "fifty pee", 0.5),
        ("half a dollar per postcard", "half a dollar", 0.5),
        ("a quarter for the postcard", "a quarter", 0.25),
        ("a buck each for the mugs", "a buck", 1.0),
        ("two fifty set aside for it", "two fifty", 2.5),
    ],
)
def test_one_price_in_any_form(text, written, value):
    prices = find_prices(text)
    assert [(text[p.start : p.end], p.low, p.high) for p in prices] == [(written, value, value)]


@pytest.mark.parametrize(
    "text, low, high",
    [
        ("my budget is 2 to 2.50", 2.0, 2.5),
        ("somewhere between 1.8 and 2.0", 1.8, 2.0),
        ("2-2.5 is fine", 2.0, 2.5),
        ("forty or forty-five", 40.0, 45.0),
    ],
)
def test_a_range_is_one_mention_with_both_ends(text, low, high):
    [price] = find_prices(text)
    assert (price.low, price.high, price.is_range) == (low, high, True)


@pytest.mark.parametrize(
    "text",
    [
        "I need 3 bags",
        "a 5kg sack",
        "10% off please",
        "we're in round 3",
        "it's a 2019 model",
        "since 2022",
        "in 2 days",
        "at 5pm",
        "it's 5:30",
        "my 2nd offer",
        "I have three kids",
        "the model T-800",
        "a 3-year warranty",
        "the one I saw",
        "we close at 6",
        "a couple hundred people",
        "half a pound of cheese",
        "half an hour",
        "not a dollar more",
        "a quarter of the price",
        "I have two left in stock",
        "your letter of 3 March",
        "on March 3rd",
        "by 14 Feb",
    ],
)
def test_numbers_that_are_not_prices(text):
    assert find_prices(text) == []


@pytest.mark.parametrize(
    "text, values",
    [
        ("Two hundred is my budget; one seventy-five would be fair", [200.0, 175.0]),
        ("I paid 240, so two fifty is fair", [240.0, 250.0]),
        ("two fifty, not 3", [2.5, 3.0]),
        ("two fifty for the coffee", [2.5]),
        ("Twelve-fifty is the ceiling, and you'd be fine at twelve hundred", [1250.0, 1200.0]),
        ("one-fifty a punnet", [1.5]),  # a price per item
        ("six-fifty a month", [650.0]),
        ("Any room on the 8,500? I bet you'd let it go for eight.", [8500.0, 8000.0]),
        ("I paid 1,200 and want 15 for the case", [1200.0, 15.0]),  # too far from 1,200 to be 15,000
        ("I got it for 0 and want 1,200", [0.0, 1200.0]),
        ("I max out at nine fifty for the piano", [950.0]),  # the item gives the scale
        ("Seven-fifty is my bottom for the honey", [7.5]),
    ],
)
def test_a_spoken_price_takes_the_scale_of_the_messages_other_prices(text, values):
    assert [p.low for p in find_prices(text)] == values


def test_a_price_with_a_currency_is_a_price_before_a_noun():
    assert [p.low for p in find_prices("$3 bags of rice")] == [3.0]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "$",
                    "2",
                    "0",
                    ",",
                    ".",
                    "50",
                    " ",
                    "k",
                    "two",
                    "zero",
                    "-",
                    "fifty",
                    "hundred",
                    "and",
                    "a",
                    "bucks",
                    "to",
                    "%",
                    "€",
                    "1,250",
                    "between",
                ]
            ),
            st.text(max_size=4),
        ),
        max_size=30,
    ).map("".join)
)
def test_prices_are_finite_in_order_and_inside_the_message(text):
    prices = find_prices(text)
    assert prices == find_prices(text)  # deterministic
    ends = [0]
    for price in prices:
        assert 0 <= price.start < price.end <= len(text) and price.start >= ends[-1]
        assert math.isfinite(price.low) and math.isfinite(price.high) and 0 <= price.low <= price.high
        ends.append(price.end)


@pytest.mark.parametrize("items", [DEAR_ITEMS, CHEAP_ITEMS], ids=["dear", "cheap"])
def test_the_item_lexicons_hold_no_word_twice_and_no_word_of_the_other(items):
    assert len(set(items)) == len(items)
    assert not set(DEAR_ITEMS) & set(CHEAP_ITEMS)
