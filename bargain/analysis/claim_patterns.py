"""The claim checker's phrase lexicon: how prices are read, and the phrase templates of each kind of claim.

`bargain.analysis.claims` applies these; here are only the regular expressions and the reading of a
price token in its context (a number followed by a unit, or preceded by a label such as
"round", is not a price). Every template is an explicit phrase shape, case-insensitive, with
either kind of apostrophe: precision over recall (see bargain.analysis.claims).
"""

from __future__ import annotations

import math
import re

# --- prices -------------------------------------------------------------------------------

_NUM = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:k\b)?"  # "2k" is 2000
_CUR_PRE = r"(?:(?:US\$|USD|EUR|GBP)\s?|[$€£]\s?)"
_CUR_POST = r"(?:\s?(?:USD|EUR|GBP|dollars?|euros?|bucks|quid)\b|\s?€)"
# A price: an optional currency, a number that is not part of a longer number, an optional currency.
_PRICE = rf"(?<![\w.,$€£]){_CUR_PRE}?{_NUM}(?!\d|[.,]\d){_CUR_POST}?"
PRICE_RE = re.compile(_PRICE, re.IGNORECASE)
_HAS_CURRENCY = re.compile(r"[$€£]|USD|EUR|GBP|dollar|euro|buck|quid", re.IGNORECASE)

# A number directly followed by one of these is a quantity, a share or a duration, not a price.
_UNIT_AFTER = re.compile(
    r"[\s-]?(?:%|percent\b|per\s?cent\b|kg\b|kgs\b|kilos?\b|kilograms?\b|g\b|grams?\b|lbs?\b|pounds?\b|oz\b|"
    r"ounces?\b|ml\b|l\b|lit(?:er|re)s?\b|cm\b|mm\b|m\b|km\b|miles?\b|inch(?:es)?\b|bags?\b|sacks?\b|bars?\b|"
    r"packs?\b|packets?\b|box(?:es)?\b|pieces?\b|pcs\b|items?\b|units?\b|days?\b|weeks?\b|months?\b|years?\b|"
    r"yrs?\b|hours?\b|hrs?\b|minutes?\b|mins?\b|seconds?\b|times\b|x\b|gears?\b|speeds?\b|seats?\b|seater\b|"
    r"people\b|persons?\b|cups?\b|bottles?\b|jars?\b|cans?\b|loaves\b|loaf\b|dozen\b|st\b|nd\b|rd\b|th\b|"
    r"of\s+(?:them|these|those|us)\b|per\s+(?:customer|person|order|visit|household)\b)",
    re.IGNORECASE,
)
# A number directly after one of these is an index, a size or a date.
_LABEL_BEFORE = re.compile(
    r"(?:\b(?:round|day|size|model|version|number|no\.|step|page|item|year|in|since|by|until|til|on)|#)\s*$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?:19|20)\d\d")


def _parse_number(text: str) -> float | None:
    """The number in a price token ("$1,200.50" -> 1200.5), or None."""
    match = re.search(_NUM, text)
    if match is None:
        return None
    number = match.group(0).replace(",", "")
    thousands = number.lower().endswith("k")
    try:
        value = float(number.rstrip("kK")) * (1000 if thousands else 1)
    except ValueError:  # pragma: no cover - the regex only admits valid numbers
        return None
    return value if math.isfinite(value) else None


def price_at(message: str, start: int, end: int) -> float | None:
    """The price written at message[start:end], or None when the context says it is not a price."""
    token = message[start:end]
    value = _parse_number(token)
    if value is None:
        return None
    if not _HAS_CURRENCY.search(token):
        if _UNIT_AFTER.match(message, end):
            return None
        if _LABEL_BEFORE.search(message, max(0, start - 12), start):
            return None
        bare = token.strip()
        if _YEAR.fullmatch(bare) and re.search(r"\b(?:in|since|from|of|model|year|back)\s*$",
                                               message[max(0, start - 12):start], re.IGNORECASE):
            return None
    return value


# --- building blocks of the patterns -------------------------------------------------------

# One price or a range of two; the caller picks the end of a range.
_RANGE = (rf"(?:between\s+(?P<lo>{_PRICE})\s+and\s+(?P<hi>{_PRICE})"
          rf"|(?P<a>{_PRICE})(?:\s*(?:-|–|to)\s*(?P<b>{_PRICE})(?:\s+range\b)?)?)")
# Hedges and bounds that may stand between a limit word and its number.
_ADV_WORDS = (r"only|just|about|around|roughly|approximately|approx\.?|really|honestly|basically|actually|like|in\s+the|"
              r"exactly|strictly|firmly|realistically|truly|still|already|set\s+at|capped\s+at|fixed\s+at|"
              r"right\s+at|at\s+most|at\s+the\s+most|at|of|maybe|probably|likely|somewhere|near|close\s+to|"
              r"no\s+more\s+than|not\s+more\s+than|no\s+less\s+than|not\s+less\s+than|tops|a\s+(?:hard|firm|strict)")
_ADV = rf"(?:(?:{_ADV_WORDS})\b\s*|[,:—–-]\s*)*"
_I = r"(?:I|we)"
_MODAL = (r"(?:'d|\s+would|\s+can|\s+could|\s+will|'ll|\s+am\s+able\s+to|'m\s+able\s+to|'m\s+willing\s+to|"
          r"\s+am\s+willing\s+to|\s+can\s+possibly|\s+can\s+really|\s+could\s+possibly)")
_OBJ = r"(?:it|them|this|these|that|those)"

HI_WORDS = re.compile(r"budget|max|ceiling|cap|most|highest|high|top|above|over|higher|more|beyond|past|afford|"
                       r"spend|upper|pay", re.IGNORECASE)
LO_WORDS = re.compile(r"cost|floor|min|bottom|lowest|least|low|below|under|lower|less|lose|losing|loss|"
                       r"break|paid|bought|reserve|need|get|profit|making|money", re.IGNORECASE)

# Own limit: "my budget/floor/cost ... is X".
_OWN_NOUN = (r"budget|limit|max(?:imum)?|ceiling|cap|floor|minimum|min|bottom\s+line|bottom|"
             r"reserve(?:\s+price)?|reservation\s+(?:price|value)|walk[- ]?away(?:\s+price|\s+point)?|"
             r"cost(?:\s+price)?|costs|break[- ]?even(?:\s+point|\s+price)?|top\s+price|lowest\s+price|"
             r"highest\s+price|upper\s+limit|lower\s+limit|price\s+(?:floor|ceiling|limit)|spending\s+(?:limit|cap)")
_NOUN_MODS = r"(?:(?:absolute|total|whole|real|actual|hard|strict|top|overall|own|entire|personal|firm|very)\s+)*"
_FILL = r"(?:\s+(?!(?:not|isn't|is|was|wasn't|were|would|could|might|may|if|and|but|or)\b)[\w\x27\u2019-]+){0,6}?"
_COPULA = r"(?:\s+is|\s+was|'s|\s*:|\s*=|\s+of|\s+sits\s+at|\s+stands\s+at|\s+comes\s+(?:out\s+)?to|" \
          r"\s+works\s+out\s+(?:to|at)|\s+tops\s+out\s+at|\s+is\s+capped\s+at|\s+is\s+set\s+at)"

_OWN_PATTERNS = [
    # my budget is 2 / my cost on these bars is $3.20 each / my limit of 2.40
    rf"\b(?:my|our)\s+{_NOUN_MODS}(?P<word>{_OWN_NOUN})\b{_FILL}{_COPULA}\s*{_ADV}{_RANGE}",
    # I have a budget of 180 / I'm working with a hard limit of $600
    rf"\b{_I}\s*(?:'ve\s+got|'ve|have\s+got|have|got|'m\s+working\s+with|am\s+working\s+with|"
    rf"'re\s+working\s+with|'m\s+on|am\s+on|'re\s+on|'m\s+operating\s+on)\s+(?:only\s+)?(?:a|an)\s+"
    rf"(?:(?:hard|strict|firm|tight|total|fixed|absolute|max(?:imum)?)\s+)*"
    rf"(?P<word>budget|limit|ceiling|cap|spending\s+(?:limit|cap)|floor|minimum)\s+(?:of|at)\s+{_ADV}{_RANGE}",
    # I budgeted $500 / I've got 3.50 budgeted
    rf"\b{_I}(?:'ve|\s+have)?\s+(?P<word>budgeted)\s+(?:only\s+|just\s+)?{_RANGE}",
    rf"\b{_I}(?:'ve|\s+have)?\s+got\s+(?:only\s+|just\s+)?{_RANGE}\s+(?P<word>budgeted)",
    # the most I can pay is 3 / the absolute lowest I'd go is 12.50
    rf"\b(?:the\s+)?(?:absolute\s+|very\s+)?(?P<word>most|highest|lowest|least|max(?:imum)?|minimum|best)\s+"
    rf"(?:price\s+)?{_I}{_MODAL}?\s+(?:go|do|pay|spend|afford|accept|take|offer|"
    rf"sell(?:\s+{_OBJ})?(?:\s+for)?|let\s+{_OBJ}\s+go(?:\s+for)?|manage|stretch(?:\s+to)?|part\s+with\s+{_OBJ})"
    rf"\b(?:\s+(?:for|on)\s+[\w\x27\u2019 ]{{0,25}}?)?(?:\s+is|\s+would\s+be|\s+will\s+be|'s|\s*:)\s*{_ADV}{_RANGE}",
    # 2.20 is the most I can do / $560 is my absolute max / $12 is all I can afford
    rf"{_RANGE}(?:\s*(?:/|per|a|an|each)\s*[a-z]+)?\s+(?:is|'s)\s+(?:(?:really|honestly|truly|definitely|"
    rf"absolutely|just|simply|literally)\s+)?(?:(?:my|our)\s+(?:absolute\s+|very\s+|hard\s+|real\s+|top\s+)?"
    rf"(?P<word>max(?:imum)?|limit|ceiling|cap|budget|top\s+price|highest\s+price|floor|minimum|min|"
    rf"bottom\s+line|lowest\s+price|lowest|highest|cost|break[- ]?even|walk[- ]?away(?:\s+price)?|reserve)"
    rf"|the\s+(?:absolute\s+|very\s+)?(?P<word2>most|highest|max(?:imum)?|lowest|least|minimum|best)\s+"
    rf"(?:price\s+)?{_I}{_MODAL}?\s+(?:go|do|pay|spend|afford|accept|take|offer|sell|manage|part\s+with)"
    rf"|(?P<word3>all|as\s+much\s+as|as\s+high\s+as|as\s+low\s+as|as\s+far\s+as)\s+{_I}\s+(?:can|could)\s+"
    rf"(?:afford|pay|spend|go|do|manage|accept|take|stretch)|(?P<word4>all)\s+{_I}\s+(?:have|'ve\s+got|got))\b",
    # I can't go above 2.40 / I won't accept anything under 2.40 / there's no way I can pay over 2.60
    rf"\b(?:{_I}\s*(?:(?:really|just|simply|honestly|absolutely|definitely|seriously)\s+)?"
    rf"(?:can't|cannot|can\s+not|won't|will\s+not|couldn't|could\s+not|am\s+not\s+able\s+to|'m\s+not\s+able\s+to|"
    rf"'m\s+unable\s+to|am\s+unable\s+to|'m\s+not\s+going\s+to|am\s+not\s+going\s+to|'m\s+not|am\s+not|"
    rf"don't|do\s+not|never)"
    rf"|(?:there's\s+|there\s+is\s+)?no\s+way\s+{_I}\s+(?:can|could|will|would|'d|'ll)"
    rf"|{_I}\s+(?:don't|do\s+not)\s+think\s+{_I}\s+(?:can|could))"
    rf"\s+(?:(?:really|possibly|just|even|afford\s+to)\s+)?"
    rf"(?:go|going|pay|paying|spend|spending|afford|accept|accepting|take|taking|sell|selling|"
    rf"let\s+(?:{_OBJ}|the\s+\w+)\s+go|part\s+with\s+(?:{_OBJ}|the\s+\w+)|do|offer|budge|budging|"
    rf"come\s+down|coming\s+down|move|moving|drop|dropping)"
    rf"(?:\s+(?:{_OBJ}|anything|a\s+(?:cent|penny|dime)))?\s+(?:any\s+)?(?:for\s+)?(?:anything\s+)?"
    rf"(?P<word>above|over|higher\s+than|more\s+than|beyond|past|below|under|lower\s+than|less\s+than|"
    rf"better\s+than|further\s+than)\s+{_ADV}{_RANGE}",
    # anything over 2.5 is out of my budget / anything under 1.80 is a loss for me
    rf"\b(?:anything|everything|any\s+price)\s+(?P<word>over|above|more\s+than|beyond|higher\s+than|under|below|"
    rf"less\s+than|lower\s+than)\s+{_RANGE}\s+(?:is|would\s+be|'s)\s+(?:(?:just|simply|way|well|definitely|"
    rf"really|already)\s+)?(?:(?:out\s+of|over|beyond|above|outside(?:\s+of)?|more\s+than)\s+(?:my|our)\s+"
    rf"(?:budget|range|price\s+range|means|limit)|a\s+loss\b|below\s+(?:my|our)\s+(?:cost|floor)|"
    rf"under\s+(?:my|our)\s+cost)",
    # I can go as high as 2.45 / I can go as low as 2.55
    rf"\b{_I}\s+(?:can|could|'d|would|'ll|will)\s+(?:only\s+)?(?:go|come\s+down|come\s+up|stretch|drop)\s+"
    rf"as\s+(?P<word>high|low)\s+as\s+{_ADV}{_RANGE}",
    # I can only afford 2.20
    rf"\b{_I}\s+(?:can|could)\s+only\s+(?P<word>afford|pay|spend)\s+(?:up\s+to\s+)?{_ADV}{_RANGE}",
    # I'm capped at $190 / I'm limited to $150
    rf"\b{_I}(?:'m|\s+am|'re|\s+are)\s+(?P<word>capped|limited|maxed\s+out|max(?:ed)?)\s+(?:at|to)\s+{_ADV}{_RANGE}",
    # I need at least $200 / I have to get at least 2.20
    rf"\b{_I}\s+(?:need|have\s+to\s+get|must\s+get|need\s+to\s+get|have\s+to\s+make|need\s+to\s+make|"
    rf"must\s+have|require|have\s+to\s+have|need\s+to\s+have|'ve\s+got\s+to\s+get|gotta\s+get)\s+"
    rf"(?P<word>at\s+least|a\s+minimum\s+of|no\s+less\s+than|not\s+less\s+than)\s+{_ADV}{_RANGE}",
    # I only have $9.50 to spend
    rf"\b{_I}(?:'ve|\s+have)?\s+(?:only\s+|just\s+)?(?:have|got|'ve\s+got)\s+(?:only\s+|just\s+)?{_RANGE}\s+"
    rf"(?:left\s+)?(?P<word>to\s+spend|on\s+me|in\s+my\s+(?:budget|wallet|pocket)|in\s+total|total)\b",
    # it cost me 1.50 / each bar costs me $3
    rf"\b(?P<word>costs?\s+(?:me|us)|set\s+(?:me|us)\s+back)\s+(?:(?:only|just|about|around|roughly|nearly|almost|"
    rf"over|more\s+than|a\s+good)\s+)*{_RANGE}",
    # I paid 1.60 for it wholesale
    rf"\b{_I}\s+(?:originally\s+|actually\s+|myself\s+|already\s+)?(?P<word>paid|spent)\s+(?:only\s+|just\s+|"
    rf"about\s+|around\s+|over\s+|almost\s+|nearly\s+)?{_RANGE}\s+(?:(?:for|on)\s+(?:{_OBJ}|each|the\s+lot)\b|"
    rf"wholesale\b|myself\b)",
    # I bought the sofa for $900 / I bought it in 2019 for 350
    rf"\b{_I}\s+(?:originally\s+)?(?P<word>bought)\s+(?:{_OBJ}|the\s+\w+)(?:\s+(?:new|wholesale|myself))?"
    rf"(?:\s+(?:back\s+)?in\s+(?:19|20)\d\d)?(?:\s+(?:new|wholesale))?\s+for\s+{_ADV}{_RANGE}",
    rf"\b{_I}\s+got\s+(?:{_OBJ})\s+(?P<word>wholesale)\s+for\s+{_ADV}{_RANGE}",
    # below 1.70 I lose money / anything less than 3.80 and I'd be selling at a loss
    rf"\b(?:anything\s+)?(?P<word>below|under|less\s+than|lower\s+than)\s+{_RANGE}\s*,?\s+(?:and\s+)?{_I}"
    rf"(?:'d|'m|\s+am|\s+would|'ll|\s+will|'re|\s+are)?\s+(?:be\s+)?(?:(?:just|only|actually|already|basically)\s+)?"
    rf"(?:lose|losing|lost|sell(?:ing)?\s+at\s+a\s+loss|make\s+a\s+loss|making\s+a\s+loss|at\s+a\s+loss|"
    rf"in\s+the\s+red|out\s+of\s+pocket|underwater)\b",
    # I'd be losing money below $4.10
    rf"\b{_I}(?:'d|\s+would|'m|\s+am|\s+will|'ll|'re|\s+are)?\s+(?:be\s+)?(?:losing|lose|making\s+a\s+loss|"
    rf"selling\s+at\s+a\s+loss|at\s+a\s+loss)(?:\s+money)?(?:\s+on\s+{_OBJ})?\s+(?:at\s+anything\s+)?"
    rf"(?P<word>below|under|less\s+than|for\s+less\s+than|lower\s+than)\s+{_RANGE}",
    # if I went below 1.80 I'd be losing money
    rf"\bif\s+{_I}\s+(?:went|go|sold|sell|dropped|drop|go\s+any|went\s+any)\s+(?:{_OBJ}\s+)?"
    rf"(?P<word>lower\s+than|below|under|for\s+less\s+than)\s+{_RANGE}\s*,?\s+(?:then\s+)?{_I}"
    rf"(?:'d|\s+would|'ll|\s+will)?\s+(?:be\s+)?(?:lose|losing|selling\s+at\s+a\s+loss|making\s+a\s+loss|in\s+the\s+red)\b",
    # at 1.20 I'm only breaking even
    rf"\bat\s+{_RANGE}\s*,?\s+{_I}(?:'m|\s+am|'d|\s+would|'re|\s+are)?\s+(?:be\s+)?(?:only\s+|just\s+|barely\s+|"
    rf"already\s+)?(?P<word>break(?:ing)?\s+even)\b",
    # my wallet tops out at 30 / my wallet has a hard stop at 12 / hard stop at 850
    rf"\b(?:(?:my|our)\s+(?:wallet|budget|pocket|purse)\s+(?:tops\s+out|maxes\s+out|stops|caps\s+out)\s+at"
    rf"|(?:my|our)\s+(?:wallet|budget|pocket|purse)\s+(?:has|have)\s+a\s+(?:hard|firm)\s+stop\s+at"
    rf"|(?P<word>hard\s+stop)\s+at)\s+{_ADV}{_RANGE}",
    # break-even for me is around 4.20 / budget's 2k tops (a clause opening with the limit word)
    rf"\b(?P<word>break[- ]?even)(?:\s+(?:point|price))?\s+for\s+(?:me|us)\s+(?:is|'s|would\s+be)\s+{_ADV}{_RANGE}",
    rf"(?:^|(?<=[.!?;]\s))(?P<word>budget|max|limit|floor|minimum)(?:'s|\s+is)\s+{_ADV}{_RANGE}",
    # I'd rather keep the sofa than sell it for less than 1,000 dollars
    rf"\b{_I}(?:'d|\s+would)\s+rather\s+keep\s+(?:{_OBJ}|the\s+\w+)\s+than\s+(?:sell|let\s+(?:{_OBJ}\s+)?go|"
    rf"part\s+with\s+{_OBJ})(?:\s+{_OBJ})?\s+(?:for\s+)?(?P<word>less\s+than|under|below)\s+{_RANGE}",
    # what I paid, which was $130
    rf"\bwhat\s+{_I}\s+(?P<word>paid)(?:\s+for\s+{_OBJ})?\s*,?\s+which\s+(?:was|is)\s+{_ADV}{_RANGE}",
    # the price has to stay at 2.40 or higher
    rf"\b(?:the\s+price|it)\s+(?:has\s+to|must|needs\s+to)\s+(?:stay|be)\s+(?:at\s+)?{_RANGE}\s+or\s+"
    rf"(?P<word>higher|more|above|lower|less|below)\b",
    # anything under 110 bucks and the dresser stays with me
    rf"\banything\s+(?P<word>under|below|less\s+than)\s+{_RANGE}\s*,?\s+and\s+(?:the\s+\w+|it|they)\s+"
    rf"(?:stays?|remains?)\s+with\s+(?:me|us)\b",
    # I can afford somewhere between 400 and 450, no more
    rf"\b{_I}\s+can\s+(?P<word>afford)\s+{_ADV}{_RANGE}(?:\s+(?:for|on)\s+[\w\x27 -]{{0,30}}?)?\s*,?\s*"
    rf"(?:and\s+)?(?:no|not\s+a\s+(?:cent|penny|dime))\s+more\b",
    # I've got 80 set aside for this
    rf"\b{_I}(?:'ve|\s+have)?\s+got\s+{_RANGE}\s+(?P<word>set\s+aside)\b",
    # I only brought 25 with me, that's my max
    rf"{_RANGE}[^.!?\n]{{0,40}}?,?\s+(?:that's|that\s+is|which\s+is)\s+(?:my|our)\s+(?:absolute\s+|hard\s+)?"
    rf"(?P<word>max(?:imum)?|limit|budget|ceiling|cap|floor|minimum)\b",
]

# Other side's limit.
_OTHER_NOUN = (r"budget|limit|max(?:imum)?|ceiling|cap|floor|minimum|min|bottom\s+line|reserve(?:\s+price)?|"
               r"reservation\s+(?:price|value)|walk[- ]?away(?:\s+price|\s+point)?|cost(?:\s+price)?|costs|"
               r"break[- ]?even(?:\s+point)?|top\s+price|lowest\s+price|highest\s+price|upper\s+limit|"
               r"lower\s+limit|purchase\s+price|wholesale\s+price")
_SURE = r"(?:surely|probably|likely|clearly|obviously|definitely|certainly|def|defo|deffo)"
_BOUNDS = (rf"(?:(?:{_SURE}|easily|well|way|much|at\s+least|at\s+most|no\s+more\s+than|no\s+less\s+than|"
           r"not\s+more\s+than|more\s+than|less\s+than|higher\s+than|lower\s+than|over|above|under|below|around|"
           r"about|roughly|near|close\s+to|closer\s+to|something\s+like|somewhere\s+(?:around|near)|(?:north|south)\s+of|"
           r"in\s+the\s+region\s+of|only|just|maybe)\s+)*")

_OTHER_PATTERNS = [
    # your budget is at least 3 / your cost can't be more than 1.50
    rf"\b(?:your|ur)\s+(?:(?:real|actual|true|absolute|own|total|whole|hard|top)\s+)*(?P<word>{_OTHER_NOUN})\b"
    rf"(?:\s+(?:for|on)\s+(?:a|an|the|these|this|those|that)\s+\w+)?\s*"
    rf"(?:(?:is|'s)(?:\s+{_SURE})?|must\s+be|has\s+to\s+be|(?:has|'s)\s+got\s+to\s+be|should\s+be|"
    rf"can't\s+(?:possibly\s+|really\s+)?be|cannot\s+(?:possibly\s+|really\s+)?be|can\s+not\s+be|couldn't\s+be|"
    rf"must\s+have\s+been)"
    rf"\s+{_BOUNDS}{_RANGE}",
    # you can surely afford 2.80
    rf"\byou\s+(?:can|could)\s+(?:(?:{_SURE}|easily|totally|absolutely|still|comfortably)\s+)*(?P<word>afford)\s+"
    rf"(?:(?:at\s+least|more\s+than|up\s+to|as\s+much\s+as)\s+)?{_RANGE}",
    rf"\byou\s+(?:can|could)\s+(?:(?:{_SURE}|easily|totally|absolutely|still|comfortably)\s+)+"
    rf"(?P<word>pay|spend|go\s+(?:up\s+)?to|go\s+as\s+(?:high|low)\s+as)\s+"
    rf"(?:(?:at\s+least|more\s+than|up\s+to|as\s+much\s+as)\s+)?{_RANGE}",
    # you probably paid around 120 for it / you got these wholesale for less than $1
    rf"\byou(?:'ve|\s+have|\s+must\s+have|\s+probably|\s+likely|\s+surely)?\s+(?:(?:{_SURE}|only|must\s+have)\s+)*"
    rf"(?P<word>paid|got\s+{_OBJ}(?:\s+wholesale)?\s+for|bought\s+(?:{_OBJ}|the\s+\w+)(?:\s+wholesale)?\s+for)\s+"
    rf"(?:(?:around|about|roughly|at\s+most|no\s+more\s+than|less\s+than|under|maybe|only|just|barely)\s+)*{_RANGE}",
    # these can't have cost you more than 8 / they only cost you about 1.50
    rf"(?:\b(?:can't|cannot|couldn't|didn't|don't|doesn't)\s+(?:have\s+|possibly\s+)?|\b(?:only|probably|surely|"
    rf"likely)\s+)?\b(?P<word>costs?)\s+you\s+(?:(?:only|just|about|around|roughly|maybe|probably|less\s+than|"
    rf"under|more\s+than|over|at\s+most|no\s+more\s+than)\s+)*{_RANGE}",
    # you clearly have at least 3.50 to spend
    rf"\byou(?:'ve|\s+have)?\s+(?:{_SURE}\s+|easily\s+)*(?:have|got|'ve\s+got)\s+(?:(?:at\s+least|more\s+than|"
    rf"over)\s+)?{_RANGE}\s+(?P<word>to\s+spend|in\s+your\s+(?:budget|pocket|wallet)|budgeted)\b",
    # you must have a budget of at least $700
    rf"\byou\s+(?:(?:must|{_SURE})\s+)*(?:have|'ve\s+got|got)\s+(?:a|an)\s+(?P<word>budget|limit|ceiling|floor|"
    rf"minimum)\s+of\s+(?:(?:at\s+least|more\s+than|over|around|about)\s+)?{_RANGE}",
    # even at 1.80 you'd still be making money / you're still making a profit at 2.00
    rf"\bat\s+{_RANGE}\s*,?\s+you(?:'re|\s+are|'d|\s+would|'ll|\s+will)?\s+(?:still\s+)?(?:be\s+)?(?:still\s+)?"
    rf"(?P<word>making|make|turning|turn)\s+(?:money|a\s+(?:good\s+|nice\s+|small\s+)?(?:profit|margin))\b",
    rf"\byou(?:'re|\s+are|'d|\s+would|'ll|\s+will)?\s+(?:still\s+)?(?:be\s+)?(?:still\s+)?"
    rf"(?P<word>making|make|turning|turn)\s+(?:money|a\s+(?:good\s+|nice\s+|small\s+)?(?:profit|margin))\s+"
    rf"(?:even\s+)?at\s+{_RANGE}",
    # I'm sure you can stretch to 250 / I know for a fact you can spend 700
    rf"\b(?:I'm\s+sure|I\s+am\s+sure|I\s+know(?:\s+for\s+a\s+fact)?|I\s+bet)\s+(?:that\s+)?you\s+(?:can|could)\s+"
    rf"(?:easily\s+)?(?P<word>afford|pay|spend|stretch(?:\s+to)?|go\s+(?:up\s+)?to)\s+"
    rf"(?:(?:at\s+least|up\s+to|as\s+much\s+as)\s+)?{_RANGE}",
]

# Final offers: the cue; the value is looked up in the sentence.
_FINAL_PATTERNS = [
    r"\b(?:best\s+and\s+final(?:\s+(?:offer|price|bid))?|final\s+and\s+best(?:\s+(?:offer|price|bid))?|"
    r"(?:absolute(?:ly)?\s+|very\s+)?final\s+(?:offer|price|bid|answer|word|number)|"
    r"(?:very\s+)?last\s+(?:offer|price|bid))\b",
    r"\btake\s+it\s+or\s+leave\s+it\b",
    r"\bnon[- ]negotiable\b",
    r"\b(?:that's|that\s+is|this\s+is|it's|it\s+is)\s+final\b",
    rf"\b{_I}\s*(?:'m|\s+am|'re|\s+are)?\s*(?:(?:not\s+going\s+to|won't|will\s+not|can't|cannot|can\s+not|"
    rf"not\s+able\s+to|refuse\s+to)\s+(?:go|come\s+down|budge)|not\s+going)\s+(?:any\s+)?(?:lower|higher|further|more)\b"
    rf"(?:\s+than\s+(?:this|that|here|what\s+I(?:'ve)?\s+(?:offered|said))(?:\s+(?:price|offer|one))?)?",
    rf"\b(?:that's|that\s+is|this\s+is|it's|it\s+is)\s+(?:as\s+(?:low|high|far)\s+as\s+{_I}\s+(?:can\s+|will\s+)?go|"
    rf"the\s+(?:highest|lowest|most|least|best)\s+{_I}(?:'m|\s+am)?\s+(?:willing\s+to|can|could|will|able\s+to)\s+"
    rf"(?:go|do|pay|offer|accept))\b",
    rf"\b{_I}(?:'m|\s+am|'re|\s+are)\s+firm\s+(?:at|on)\s+(?P<p>{_PRICE})",
    rf"(?P<p>{_PRICE})\s*,?\s+(?:and\s+)?firm\b",
    rf"(?P<p>{_PRICE})\s+is\s+(?:my\s+)?final\b",
]

# Post-filters ---------------------------------------------------------------------------------

CLAUSE_BREAK = re.compile(r"[!?;,:\n—–()]|\.(?!\d)|\s-\s|\b(?:but|and|so|though|although|because|however|anyway)\b",
                           re.IGNORECASE)
SENTENCE_BREAK = re.compile(r"[!?\n]|\.(?!\d)")
# Words that make a statement hypothetical, negated or reported when they precede it in its clause.
NOT_ASSERTED = re.compile(
    r"\b(?:if|unless|suppose|supposing|assuming|imagine|pretend|hypothetically|wish|whether|not|never|nobody|"
    r"doubt|wonder|wondering)\b|n['’]t\b", re.IGNORECASE)
FINAL_PREV = re.compile(
    r"(?:\b(?:your|their|his|her)\s*|\b(?:in|than|from|since|to|before|after|about|on|of|with|over|above|below|"
    r"beat|improve|raise|raised|lower|lowered|change|changed)\s+(?:my|our|a|the|your)?\s*)$", re.IGNORECASE)
FINAL_NEXT_BAD = re.compile(
    r"\s+(?:was|were|you|from\s+you|that|which|they|he|she|it|"
    r"(?:I|we)(?:['’]ve|['’]d|\s+have|\s+had)?\s+(?:made|gave|given|sent|got|saw|seen|heard|had|offered|paid|said|"
    r"quoted|mentioned|found|checked|noticed|remember))\b|\s*,?\s*(?:unless|if|without|until)\b",
    re.IGNORECASE)
MODAL_BEFORE = re.compile(r"\b(?:would|will|could|might|should)\b|['’]d\b|['’]ll\b", re.IGNORECASE)


def _apostrophes(pattern: str) -> str:
    """Let a straight apostrophe in a pattern also match a typographic one."""
    return pattern.replace("'", "['’]")


def _compile(patterns: list[str]) -> list[re.Pattern]:
    """Compile phrase templates, case-insensitive, with either kind of apostrophe."""
    return [re.compile(_apostrophes(p), re.IGNORECASE) for p in patterns]


OWN_RES = _compile(_OWN_PATTERNS)
OTHER_RES = _compile(_OTHER_PATTERNS)
FINAL_RES = _compile(_FINAL_PATTERNS)
