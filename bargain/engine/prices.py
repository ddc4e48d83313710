"""Reading a price written as text: what a person types in the arena, what a model writes as a string.

One reader for both, strict about anything it could misread. It accepts digits with an optional
decimal point ("7", "0.5", ".75", "2.50"), thousands in comma-separated groups of three ("1,250",
"12,345,678.9"), a decimal comma before exactly two digits ("2,50" is 2.5, while "1,250" is one
thousand two hundred and fifty), and at most one currency, a symbol or a code, before or after the
number ("$2.50", "2.50 €", "USD 3", "US$3"). Everything else is refused with a `PriceError` whose
message, a sentence for the person who typed it, quotes what was typed and says what went wrong.

The European full form "1.250,00" is refused: a dot before three digits is read as a decimal
point ("1.250" is 1.25), so reading "1.250,00" as 1250 would give the same digits two meanings.
"1250,00" and "1,250.00" say it unambiguously.

`float()` is never given unchecked text: it also reads "1_000", "1e3", "nan", "inf", signs and the
digits of every script ("٣", "３"). Text longer than 40 characters, surrounding spaces included, is
refused before the anchored pattern, which has no nested quantifiers, is matched, so any input is
read at once; 40 characters also keep every value finite. Bounds on the value itself (positive,
not absurd) are the callers'.
"""

from __future__ import annotations

import re

MAX_CHARS = 40
CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "CNY", "CAD", "AUD", "CHF")
_CURRENCY = r"US\$|[$€£¥]|" + "|".join(CURRENCY_CODES)
_SPACE = r"[ \u00a0\u202f]*"  # spaces, no-break spaces
_NUMBER = r"""(?P<number>
      [0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?   # 1,250 or 12,345,678.9
    | (?P<comma>[0-9]+,[0-9]{2})               # 2,50: a decimal comma
    | [0-9]+(?:\.[0-9]+)? | \.[0-9]+          # 7, 0.5, .75
)"""
_FLAGS = re.VERBOSE | re.IGNORECASE | re.ASCII  # ASCII: no "ſ" for s, no Kelvin sign for K
_PRICE = re.compile(f"(?:(?P<before>{_CURRENCY}){_SPACE})?{_NUMBER}(?:{_SPACE}(?P<after>{_CURRENCY}))?", _FLAGS)
_CURRENCIES = re.compile(_CURRENCY, _FLAGS)
_EXAMPLES = "such as 2.50, 2,50, 1,250.00 or $2.50"


class PriceError(ValueError):
    """Text that is not a price; the message says why, for the person who typed it."""


def read_price(text: str) -> float:
    """The price written in `text`, or a PriceError saying why it is not one."""
    match = _PRICE.fullmatch(text.strip()) if len(text) <= MAX_CHARS else None
    if match is None or (match["before"] and match["after"]):
        raise PriceError(_why_not(text))
    number = match["number"]
    return float(number.replace(",", ".") if match["comma"] else number.replace(",", ""))


def _why_not(text: str) -> str:
    """The sentence that says why `text` is not a price."""
    typed = text.strip()
    if not typed:
        return f"Nothing was typed: a price is a number {_EXAMPLES}."
    shown = repr(typed if len(typed) <= MAX_CHARS else typed[: MAX_CHARS - 1] + "…")
    if len(text) > MAX_CHARS:
        reason = f"it is longer than {MAX_CHARS} characters"
    elif any(c.isnumeric() and not c.isascii() for c in typed):
        reason = "write it with the digits 0 to 9"
    elif "-" in typed or "+" in typed:
        reason = "a price cannot be negative or carry a sign; type the amount alone, such as 3"
    elif "_" in typed:
        reason = "underscores do not separate thousands; type 1000 or 1,000"
    elif len(_CURRENCIES.findall(typed)) > 1:
        reason = "it names a currency more than once; keep one, such as $3 or 3 EUR"
    elif "." in typed and "," in typed[typed.index(".") :]:
        reason = (
            "a comma after the decimal point is ambiguous (1.250,00 could be 1250 or 1.25); type 1,250.00 or 1250,00"
        )
    elif "," in typed:
        reason = "commas must separate groups of three digits (1,250.00) or come before exactly two decimals (2,50)"
    elif typed.count(".") > 1:
        reason = "it has more than one decimal point"
    else:
        reason = f"type a number {_EXAMPLES}, with at most one currency sign or code ($, €, £, ¥, USD, EUR, ...)"
    return f"{shown} is not a price: {reason}."
