"""Every price mentioned in a message, read the same way whatever its form: the claim checker's
first step.

`bargain.engine.prices` reads the one price a person types into a price field (strictly, refusing
anything doubtful); this module finds the prices mentioned anywhere in free text, and so has to
decide which numbers are prices at all.

`find_prices` returns each price mention with its value(s) and span: "$2", "2 dollars", "2.50",
"2,50" and "1,250" (price-parser decides which comma is decimal), "£3", "3k", "3 bucks",
"50 cents", number words ("twelve hundred", "seventy-five", read by text2num), the spoken
price idioms "two fifty" (2.50) and "three euros twenty" (3.20), "a couple of dollars", and
ranges ("2 to 2.50", "between 1.8 and 2.0", "2-2.5"), which keep both ends. Where the words leave
the scale open, the item or the message's other prices decide it: "one seventy-five" is 1.75, or
175 beside "two hundred"; "nine fifty for the piano" is 950; "one-fifty a punnet" is 1.50; a bare
"eight" is 8, or 8,000 beside "8,500".

A number is not a price when its context says it is something else: a quantity or unit ("3
bags", "5kg", "three kids": a bare number followed directly by a noun), a percentage, an
ordinal, a time ("5pm", "5:30"), a year ("since 2019"), or an index or model ("round 3", "model
T-800", "a 2019 model"). A number with a currency is a price unless a percent sign follows. The
reading is deterministic and keeps character offsets into the message as written.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from price_parser import Price as _ParsedPrice
from text_to_num import text2num

_CUR_PRE = r"(?:US\$|USD|EUR|GBP|CAD|AUD|[$€£])"
_CUR_POST_WORDS = (
    r"(?:usd|eur|gbp|inr|dollars?|euros?|bucks?|quid|pounds?(?!\s+of\b)|rupees?|rs|yen|yuan|"
    r"francs?|"
    r"pesos?|cents?|pence|pee|p(?=\b))"
)
# A number written in digits: thousands with commas, a decimal comma with one or two digits, a
# point.
_DIGITS = (
    r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d{1,2}|\d+,\d{1,2}(?!\d|,\d)|"
    r"\d+(?:\.\d+)?|\.\d+)"
)
_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORD = r"(?:" + "|".join(_TENS + _UNITS[::-1]) + r")"
_SCALE = r"(?:hundred|thousand|grand)"
# A run of number words ("a hundred and fifty", "twelve hundred", "seventy-five", "two fifty").
_WORDS = (
    rf"(?:(?:a|one)\s+{_SCALE}|hundred(?=\s+and\s+{_NUMBER_WORD})|a(?=\s+(?:dollar|euro|pound|buck|"
    rf"quid)\s+{_NUMBER_WORD})|{_NUMBER_WORD}(?:[\s-]+{_NUMBER_WORD})?(?:\s+{_SCALE})?)"
    rf"(?:(?:\s+and\s+|\s+|-){_NUMBER_WORD}(?:[\s-]+{_NUMBER_WORD})?(?:\s+{_SCALE})?)*"
    rf"(?:\s+and\s+a\s+half\s+{_SCALE})?"
)
_NUMBER = "|".join(
    (  # digits (with k, grand, hundred), number words, notes, "a" before a coin, couples, halves
        rf"(?P<digits>{_DIGITS})(?:\s?(?P<k>[kK])\b|\s(?P<grand>grand|thousand)\b|"
        r"\s(?P<hundred>hundred)\b)?",
        rf"(?P<words>\b{_WORDS}\b)",
        r"(?P<note>\b(?:a\s+)?(?:tenner|fiver|grand)\b|\ba\s+ton\b(?!\s+of)|"
        r"\ba\s+quarter\b(?=\s+(?:for|each|per|apiece|a\s+piece)\b))",
        r"(?P<one>(?<!\d\s)\ba)(?=\s+(?:dollar|buck|euro|quid|pound)\s+(?:for|each|per|apiece|"
        r"a\s+piece)\b)",
        rf"(?P<couple>\ba\s+couple\s+of)(?=\s+{_CUR_POST_WORDS}\b)",
        r"(?P<couple_scale>\ba\s+couple(?:\s+of)?\s+(?:hundred|thousand|grand)\b)",
        r"(?P<half>\bhalf\s+an?)(?=\s+(?:dollar|euro|buck|quid|pound(?!\s+of\b))\b)",
        r"(?P<half_grand>\bhalf\s+a\s+(?:grand|k)\b)",
    )
)
_AMOUNT = re.compile(
    rf"(?<![\w.,/:#])(?<![A-Za-z]-)(?P<pre>{_CUR_PRE}\s?)?(?:{_NUMBER})"
    rf"(?P<post>\s?-?(?:{_CUR_POST_WORDS}\b|€))?"
    rf"(?:\s+(?P<cents>{_NUMBER_WORD}(?:[\s-]+{_NUMBER_WORD})?|\d{{2}})\b(?<=[a-z\d])"
    rf"|\s+and\s+(?P<and_cents>{_NUMBER_WORD}(?:[\s-]+{_NUMBER_WORD})?|\d{{1,2}})\s+cents?\b)?",
    re.IGNORECASE,
)
# "a tenner", "a quarter each"
_NOTES = {"tenner": 10.0, "fiver": 5.0, "grand": 1000.0, "ton": 100.0, "quarter": 0.25}
_RANGE_JOIN = re.compile(r"\s?[-–]\s?|\s+(?:to|or)\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"\b(?:between|from)\s+$", re.IGNORECASE)

# What may follow a bare price: words that are not nouns (a bare number followed by a noun is a
# count).
_AFTER_PRICE = frozenset(
    """
a an each per apiece a-piece is was 's are were be would will 'd 'll and or but so then than to for
on at in with
from by of as into onto off up down out over under above below now today tonight max maximum tops
top flat firm final
total even exactly only including incl plus net cash upfront ok okay please already minimum min
either neither nor
i you we he she it that this they there here these those is isn't wasn't won't can't cannot could
should might must
do does did not no never ish or-so at-most tops is-my sounds works seems feels gets got get give
make makes made
pay paid spend spent take taking accept offer offered sounds fine fair deal done tho though although
because since
if unless when while which who what where why how just really honestly actually literally tbh imo
lol haha yeah yes
right hard absolute absolutely all altogether anyway anyhow either way sharp straight shipped
delivered its plus
thus this yes less unless tops minus bucks
including excluding inclusive inc vat tax taxes after before plus minus ea each thats its whats lets
dats
then tho pls plz sry ngl fr rn lol lmao represents reflects remains stands seems sounds looks works
makes means gets
covers includes it's that's there's here's he's she's what's let's who's
set saved put budgeted earmarked allocated aside
easy easily
""".split()
)
# Singular nouns that count things after a bare number ("1 bag", "a 5 star review"); plurals are
# caught by their -s.
_COUNT_NOUNS = frozenset(
    """
kg kilo kilogram g gram lb oz ml l litre liter cm mm m km mile inch foot ft bag box pack item piece
unit day week
month year hour minute second time star person people kid child bedroom room seat door speed gear
owner page
hrs mins secs wks yrs pcs lbs kgs ozs
""".split()
)
# Nouns an amount of money qualifies ("a 400 allowance", "a 50 deposit"): the number before them is
# a price.
_MONEY_NOUNS = frozenset(
    "budget allowance limit cap ceiling deposit fee discount credit voucher bill note offer bid "
    "payment price tip markup margin profit loss".split()
)
_LABEL_BEFORE = re.compile(
    r"(?:\b(?:round|rounds|day|days|size|model|version|v|number|nr|step|page|item|lot|room|year|"
    r"years|age|aged|"
    r"gen|generation|series|mark|mk|chapter|level|floor|row|seat|table|gate|platform|route|bus|"
    r"flight|"
    r"iphone|galaxy|pixel|ps|xbox|windows|rtx|gtx|top|the|a|an)|#)\s*$|[A-Za-z]-?$",
    re.IGNORECASE,
)
_YEAR_BEFORE = re.compile(
    r"\b(?:in|since|from|until|till|til|by|of|back|year|around|circa|early|late|mid|summer|"
    r"winter|spring|autumn|fall|january|february|march|april|may|june|july|august|september|"
    r"october|november|december)\s+$",
    re.IGNORECASE,
)
_PER_ITEM = re.compile(
    r"\s+(?:a|an|per|each)\b(?!\s+(?:month|week|year|night|day|hour|visit|session|head|person)\b)",
    re.IGNORECASE,
)  # a price per item, not per month
# Goods whose price names the scale a spoken price leaves open ("nine fifty for the piano" is 950).
DEAR_ITEMS = (
    "piano",
    "car",
    "van",
    "truck",
    "motorbike",
    "motorcycle",
    "scooter",
    "boat",
    "caravan",
    "camper",
    "sofa",
    "couch",
    "wardrobe",
    "fridge",
    "freezer",
    "washer",
    "dishwasher",
    "laptop",
    "computer",
    "macbook",
    "tv",
    "television",
    "camera",
    "lens",
    "drone",
    "bike",
    "bicycle",
    "e-bike",
    "guitar",
    "amp",
    r"drum\s+kit",
    "watch",
    "ring",
    "rent",
    "flat",
    "apartment",
    "room",
    "deposit",
    "roof",
    "kitchen",
    "bathroom",
    "furniture",
    "mattress",
    "bed",
    "desk",
    "table",
    "wedding",
    "venue",
    "saddle",
    "horse",
    "tractor",
    "trailer",
    "jacket",
    "coat",
    "suit",
    "boots",
    "phone",
    "tablet",
    "console",
    "armchair",
    "carpet",
    "rug",
    "stroller",
    "pram",
    "buggy",
    "crib",
    "cot",
)
# Goods whose price is small ("seven-fifty for the jar" is 7.50).
CHEAP_ITEMS = (
    "coffee",
    "tea",
    "egg",
    "eggs",
    "bread",
    "loaf",
    "bun",
    "croissant",
    "bagel",
    "jar",
    "punnet",
    "kilo",
    "kg",
    "lb",
    "bunch",
    "apple",
    "banana",
    "tomato",
    "tomatoes",
    "lemon",
    "lemonade",
    "milk",
    "pint",
    "cup",
    "candle",
    "card",
    "stamp",
    "sticker",
    "pen",
    "pencil",
    "soap",
    "seed",
    "seeds",
    "plant",
    "cutting",
    "cupcake",
    "cookie",
    "muffin",
    "juice",
    "honey",
    "cherries",
    "berries",
    "radish",
    "radishes",
    "herbs",
    "basil",
)
_DEAR = re.compile(rf"\b(?:{'|'.join(DEAR_ITEMS)})s?\b", re.IGNORECASE)
_CHEAP = re.compile(rf"\b(?:{'|'.join(CHEAP_ITEMS)})s?\b", re.IGNORECASE)
_TIME_BEFORE = re.compile(
    r"\b(?:close|closes|closing|open|opens|opening|shut|shuts|leave|leaves|arrive|arrives|"
    r"(?:be|get|I['’]m|I\s+am)\s+(?:back|home|there|free|off))\s+(?:at|by|until|till|around|"
    r"before|after)\s+$",
    re.IGNORECASE,
)
_NOT_AFTER = re.compile(
    r"\s?(?:%|percent\b|per\s?cent\b|x\b|st\b|nd\b|rd\b|th\b|am\b|pm\b|a\.m\.|p\.m\.|:\d|"
    r"o['’]clock\b|mins?\b(?=\s+(?:left|ago|later|away|walk|drive|wait|late|from))|"
    r"-(?!(?:dollars?|euros?|bucks?|quid|ish)\b)[a-z]|"  # "a 20-page contract", "a 3-bedroom flat"
    r"ish\b(?=\s*(?:years|kids|people)))",
    re.IGNORECASE,
)
_WORD_AFTER = re.compile(r"\s+([A-Za-z][A-Za-z'’-]*)")
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|"
    r"oct(?:ober)?|"
    r"nov(?:ember)?|dec(?:ember)?)"
)
# "3 March"; "50 may be too much" is a price
_MONTH_AFTER = re.compile(rf"\s+(?!may\b){_MONTH}\b", re.IGNORECASE)
_MONTH_BEFORE = re.compile(rf"\b{_MONTH}\.?\s+$", re.IGNORECASE)  # "on March 3"


@dataclass(frozen=True)
class Price:
    """One price mention: its value, or both ends of a range (`low` <= `high`), and its span."""

    low: float
    high: float
    start: int
    end: int
    currency: bool

    @property
    def is_range(self) -> bool:
        """Whether the mention names two different prices ("2 to 2.50")."""
        return self.low != self.high


@lru_cache(maxsize=4096)
def _words_value(text: str) -> float | None:
    """The value of a run of number words, or None: text2num reads it; a price spoken in two parts
    takes the reading `_spoken` puts first."""
    spoken = _spoken(text)
    if spoken is not None:
        return spoken[0]
    words = re.sub(r"[\s-]+", " ", text.lower().replace(" and ", " ")).strip()
    words = re.sub(r"^(?:(?:a|one) )?(hundred|thousand|grand)", r"one \1", words).replace(
        "grand", "thousand"
    )
    if words == "a":
        return 1.0  # "a dollar fifty"
    half = re.fullmatch(r"(.+) and a half (hundred|thousand|grand)", text.strip().lower())
    if half:  # "nine and a half thousand", "eight and a half grand"
        try:
            return (text2num(half.group(1), "en") + 0.5) * (
                100 if half.group(2) == "hundred" else 1000
            )
        except ValueError:
            return None
    try:
        return float(text2num(words, "en"))
    except ValueError:
        pass
    dealer = re.fullmatch(r"([a-z]+)[\s-]+([a-z]+)", text.strip().lower())
    if dealer:  # "twelve-five" and "twelve five" are 12,500, as cars are priced
        try:
            thousands, hundreds = text2num(dealer.group(1), "en"), text2num(dealer.group(2), "en")
        except ValueError:
            return None
        if 10 <= thousands < 100 and 0 < hundreds < 10:
            return float(thousands * 1000 + hundreds * 100)
    return None


@lru_cache(maxsize=4096)
def _spoken(text: str) -> tuple[float, float] | None:
    """A price spoken in two parts, units then cents, and its two readings, the likelier first: "two
    fifty" is 2.50 (or 250), "two-sixty" 260 (or 2.60), "twenty-six fifty" 2,650, "forty-four
    ninety-nine" 44.99. None for any other run of words ("seventy-five", "twelve hundred")."""
    words = re.sub(r"[\s-]+", " ", text.lower()).strip()
    try:
        text2num(words, "en")
        return None  # one number
    except ValueError:
        pass
    parts = words.split(" ")
    for cut in range(1, len(parts)):
        try:
            units, cents = (
                text2num(" ".join(parts[:cut]), "en"),
                text2num(" ".join(parts[cut:]), "en"),
            )
        except ValueError:
            continue
        if not (10 <= cents < 100 and 0 < units < 100):
            continue
        small, large = units + cents / 100, float(units * 100 + cents)
        hyphenated = re.match(r"[a-z]+-[a-z]+", text.strip().lower()) is not None
        if (units < 10 and hyphenated) or (units >= 20 and cents % 10 != 9):
            return large, small
        return small, large
    return None


def _digits_value(text: str) -> float | None:
    """The value of a number in digits; price-parser decides whether a comma is decimal ("2,50") or
    not ("1,250")."""
    if re.fullmatch(r"0\.\d+", text):
        return float(text)  # "0.105": a leading zero separates no thousands
    amount = _ParsedPrice.fromstring(text, decimal_separator=None).amount_float
    if text.startswith(".") and amount is not None and amount >= 1:  # ".75" read as 75
        return float("0" + text)
    return amount


def _amount(match: re.Match) -> float | None:
    """The value of one amount match, or None."""
    if match.group("digits"):
        value = _digits_value(match.group("digits"))
        if value is not None and (match.group("k") or match.group("grand")):
            value *= 1000  # "3k", "6 grand", "12 thousand"
        if value is not None and match.group("hundred"):
            value *= 100
    elif match.group("words"):
        value = _words_value(match.group("words"))
    elif match.group("note"):
        value = _NOTES[match.group("note").lower().split()[-1]]
    elif match.group("half_grand"):
        value = 500.0  # "half a grand"
    elif match.group("half"):
        value = 0.5  # "half a dollar"
    elif match.group("one"):
        value = 1.0  # "a dollar for the mug"
    elif match.group("couple_scale"):
        # "a couple hundred"
        value = 200.0 if match.group("couple_scale").lower().endswith("hundred") else 2000.0
    else:
        value = 2.0  # "a couple of dollars"
    if value is None:
        return None
    post = (match.group("post") or "").strip(" -").lower()
    cents = None
    if post in ("cent", "cents", "pence", "pee", "p"):
        value /= 100
    elif match.group("and_cents") and post:  # "5 dollars and 40 cents"
        cents = match.group("and_cents")
    elif match.group("cents") and (
        post or (match.group("digits") and value < 20 and not match.group("cents").isdigit())
    ):
        cents = match.group("cents")  # "three euros twenty", "5 dollars 50", "2 fifty"
    if cents is not None:
        extra = float(cents) if cents.isdigit() else _words_value(cents)
        if extra is None or not 0 <= extra < 100:
            return None
        value += extra / 100
    return value


def _is_price(message: str, match: re.Match, value: float) -> bool:
    """Whether the context lets this amount be a price (see the module docstring)."""
    start, end = match.start(), match.end()
    if _NOT_AFTER.match(message, end) or re.match(r"(?!ish\b)[A-Za-z]", message[end : end + 3]):
        return False  # "10%", "5pm", "5kg"
    if match.group("pre") or match.group("post") or match.group("note"):
        return True
    before = message[max(0, start - 24) : start]
    return not (
        _a_label_or_time(match, value, before)
        or _a_date(message, match, value, before)
        or _counts_what_follows(message, match, value, before)
        or _counts_items(message, match, value, before)
        or (match.group("words") and value == 1)  # "one" is mostly a pronoun
    )


def _a_label_or_time(match: re.Match, value: float, before: str) -> bool:
    """A number a label names ("round 3", "floor 3"; but "floor 5.50" is a price), or an hour ("I
    close at 6")."""
    if (
        _LABEL_BEFORE.search(before)
        and not re.search(r"\b(?:the|a|an|top)\s*$", before, re.IGNORECASE)
        and not (
            re.search(r"\bfloor\s*$", before, re.IGNORECASE)
            and re.search(r"\d[.,]\d", match.group(0))
        )
    ):
        return True
    return bool(_TIME_BEFORE.search(before)) and value <= 24


def _a_date(message: str, match: re.Match, value: float, before: str) -> bool:
    """A day of a month ("your letter of 3 March", "on March 3") or a year ("a 2019 model"), not a
    range of them."""
    end = match.end()
    if (
        value <= 31
        and value == int(value)
        and match.group("digits")
        and (_MONTH_AFTER.match(message, end) or _MONTH_BEFORE.search(before))
    ):
        return True
    return bool(
        match.group("digits")
        and re.fullmatch(r"(?:19|20)\d\d", match.group("digits"))
        and not match.group("k")
        and _YEAR_BEFORE.search(before)
        and not re.match(r"\s*(?:-|–|to)\s*\d", message[end:])
    )


def _counts_what_follows(message: str, match: re.Match, value: float, before: str) -> bool:
    """A count of the things the word after names: "3 bags", "two kids", "a 2019 model", "two floor
    seats"; but "two fifty the jar" is a price."""
    end = match.end()
    word = _WORD_AFTER.match(message, end)
    if word is None or re.match(r"\s*[,;:.!?]", message[end:]):
        return False
    after = word.group(1).lower().replace("’", "'")
    return bool(
        not re.fullmatch(_CUR_POST_WORDS, after, re.IGNORECASE)
        and after not in _MONEY_NOUNS
        and (
            after in _COUNT_NOUNS
            or (
                after.endswith("s")
                and len(after) > 3
                and after not in _AFTER_PRICE
                and not re.search(r"\d[.,]\d", match.group(0))  # "5,800 blows the budget"
                and not after.endswith(("ss", "us", "is"))
            )
            or (
                after not in _AFTER_PRICE
                and re.search(r"\b(?:a|an|the)\s*$", before, re.IGNORECASE)
            )
            or (
                after not in _AFTER_PRICE
                and match.group("words")
                and value < 20
                and not (
                    after in ("the", "my", "your", "our") and " " in match.group("words").strip()
                )
            )
        )
    )


_ITEMS_BEFORE = re.compile(
    r"\b(?:the|a|an|all|these|those)(?:\s+(?:last|first|other|next|remaining))?\s*$|\b(?:pack|box|"
    r"set|block|"
    r"bag|lot|bundle|batch|pair|group|dozen|bunch)\s+of\s+$",
    re.IGNORECASE,
)
_PRICE_FOR_BEFORE = re.compile(
    rf"(?:{_CUR_PRE}\s?\d[\d.,]*|\d[\d.,]*\s?{_CUR_POST_WORDS})\s+(?:for|"
    rf"per)\s+$",
    re.IGNORECASE,
)
_FOR_A_PRICE_AFTER = re.compile(
    rf"\s+for\s+(?:{_CUR_PRE}\s?)?(?:\d|"
    rf"{_NUMBER_WORD})",
    re.IGNORECASE,
)


def _counts_items(message: str, match: re.Match, value: float, before: str) -> bool:
    """A small number of items, not a price: "a one", "the two", "for all six", "the block of four",
    "16 quid for three", "2 for 150"."""
    if (
        match.group("words")
        and value < 20
        and (
            _ITEMS_BEFORE.search(before) or value == int(value) and _PRICE_FOR_BEFORE.search(before)
        )
    ):
        return True
    return (
        value < 20
        and value == int(value)
        and _FOR_A_PRICE_AFTER.match(message, match.end()) is not None
    )


def _settle_scales(
    message: str, amounts: list[tuple[float, int, int, bool]], others: dict[int, float]
) -> None:
    """Give each amount whose words leave its scale open (`others`: its other reading, "one
    seventy-five" 1.75 or 175, a bare "eight" 8 or 8,000) the reading its item or the message's
    other prices point to, in place."""
    for i, other in others.items():  # "I max out at nine fifty for the piano"
        value = amounts[i][0]
        item = _DEAR.search(message) if other > value else _CHEAP.search(message)
        if item is not None and math.isclose(max(other, value), 100 * min(other, value)):
            amounts[i], others[i] = (other, *amounts[i][1:]), value
    written = [a[0] for i, a in enumerate(amounts) if i not in others and a[0] > 0]
    for i, other in others.items() if written else ():
        # "Two hundred is all I have; you'd do it for one seventy-five": within a factor of 3 of
        # another price
        value, start, end, flag = amounts[i]
        nearest = min(abs(math.log(other / w)) for w in written)
        if nearest < math.log(3) and nearest < min(abs(math.log(value / w)) for w in written):
            amounts[i] = (other, start, end, flag)


def find_prices(message: str) -> list[Price]:
    """Every price in `message`, in order; the two ends of a range form one mention."""
    amounts, others = _amounts(message)
    _settle_scales(message, amounts, others)
    return _join_ranges(message, amounts)


def _amounts(message: str) -> tuple[list[tuple[float, int, int, bool]], dict[int, float]]:
    """Every amount of `message` that may be a price, as (value, start, end, has a currency), and
    the other reading of each whose words leave its scale open, by its index."""
    amounts: list[tuple[float, int, int, bool]] = []
    others: dict[int, float] = {}  # another reading of an amount whose words leave its scale open
    pos = 0
    while (match := _AMOUNT.search(message, pos)) is not None:
        pos = match.end()
        value = _amount(match)
        # "300 two years ago": the words after are not cents
        if value is not None and match.group("cents"):
            shorter = _AMOUNT.match(message[: match.start("cents")].rstrip(), match.start())
            if shorter is not None and _amount(shorter) == value:
                match = shorter
                pos = match.end()
        if (
            value is not None
            and not _is_price(message, match, value)
            and match.group("words")
            and " " in match.group("words").strip()
        ):
            # "eight thousand two years ago": the last word counts the years; the words before it
            # are the price
            head = match.group("words").rsplit(None, 1)[0]
            shorter = _AMOUNT.match(message[: match.start("words") + len(head)], match.start())
            if shorter is not None and shorter.end() < match.end():
                match, value = shorter, _amount(shorter)
                pos = match.end()
        if value is None or not _is_price(message, match, value):
            continue
        words = match.group("words")
        readings = _spoken(words) if words and value == _words_value(words) else None
        if (
            readings is not None
            and readings[0] > readings[1]
            and _PER_ITEM.match(message, match.end())
        ):
            value, readings = readings[1], readings[::-1]  # "one-fifty a punnet" is 1.50
        if readings is not None:
            others[len(amounts)] = readings[1]
        elif (
            0 < value < 100
            and value == int(value)
            and not any(
                match.group(g) for g in ("pre", "post", "k", "grand", "hundred", "note", "cents")
            )
        ):
            # "the 8,500 one? you'd let it go for eight": eight thousand
            others[len(amounts)] = value * 1000
        amounts.append(
            (value, match.start(), match.end(), bool(match.group("pre") or match.group("post")))
        )
    return amounts, others


def _join_ranges(message: str, amounts: list[tuple[float, int, int, bool]]) -> list[Price]:
    """The prices of the amounts, two joined as a range ("2 to 2.5", "between 11 and 12 thousand")
    where their words join them and neither is over three times the other."""

    def scale(start: int, end: int) -> float:
        """The scale word closing a range's second end, for the first: "11 to 12 thousand" is 11,000
        to 12,000."""
        word = re.search(r"(thousand|grand|k|hundred)\s*$", message[start:end], re.IGNORECASE)
        return 1.0 if word is None else (100.0 if word.group(1).lower() == "hundred" else 1000.0)

    prices: list[Price] = []
    i = 0
    while i < len(amounts):
        value, start, end, currency = amounts[i]
        if i + 1 < len(amounts):
            nxt_value, nxt_start, nxt_end, nxt_currency = amounts[i + 1]
            join = message[end:nxt_start]
            between = _BETWEEN.search(message, max(0, start - 12), start)
            first = value
            if scale(start, end) == 1.0 and value * scale(nxt_start, nxt_end) <= 3 * nxt_value:
                first = value * scale(nxt_start, nxt_end)
            if (
                _RANGE_JOIN.fullmatch(join)
                or (between and re.fullmatch(r"\s+and\s+", join, re.IGNORECASE))
            ) and max(first, nxt_value) <= 3 * min(first, nxt_value):
                prices.append(
                    Price(
                        min(first, nxt_value),
                        max(first, nxt_value),
                        start,
                        nxt_end,
                        currency or nxt_currency,
                    )
                )
                i += 2
                continue
        prices.append(Price(value, value, start, end, currency))
        i += 1
    return prices
