"""What cancels a cue: the claim checker's named rules that keep a clause from asserting what its
cue says.

A cue ("my budget", "can't go above", "final offer") found beside a price is a claim only when its
clause asserts it. Each way a clause can fail to is one named rule here (`Canceller`), with the
words that show it (the patterns at the top, or beside the rule) and the examples it exists for:
messages it must cancel and messages it must leave standing, run as tests
(tests/test_claim_cues.py). `LIMIT_CANCELLERS` govern limit cues, `FINAL_CANCELLERS` final-offer
cues; the first rule that applies names the cancellation, so `python -m benchmarks.claims --cues`
can count how often each cancels and how often rightly. Kept apart from `claims`, which finds cues
and prices, so that each rule can be read, tested and measured on its own (docs/CLAIMS.md §2.4,
§5).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from bargain.analysis import claim_cues as cues
from bargain.analysis import claim_parts
from bargain.analysis.claim_parts import ME, MY, WE
from bargain.analysis.price_mentions import Price

# --- the words the cancellers look for ------------------------------------------------------------
QUOTES = frozenset("'\"‘’“”")  # a cue between two of these is mentioned, not said
# A quote still open before a cue, and one closing after it ("you wrote 'not a penny less than
# 80'"); an apostrophe
# that only shortens a word ("'em") closes nothing.
QUOTE_OPEN = re.compile(r"(?:^|\s)['‘\"“][^'’\"”]*$")
QUOTE_CLOSE = re.compile(r"(?<=\S)['’\"”](?!\w)")
# A final offer promised for later ("I'll send my final offer after the viewing") declares none yet.
FUTURE_FINAL = re.compile(
    r"\b(?:I['’]ll|I\s+will|I['’]m\s+going\s+to|I['’]m\s+gonna|"
    r"I\s+am\s+going\s+to|I['’]d\s+like\s+to)\s+"
    r"(?:\w+\s+){0,3}?(?:send|let\s+you\s+know|make|give|tell|"
    r"come\s+back\s+with|get\s+back\s+(?:to\s+you\s+)?with|"
    r"put\s+together|decide|work\s+out|present|submit|share|"
    r"have)\b(?!\s+(?:this|it|that)\b)[^.;!?¤]*$",
    re.IGNORECASE,
)
# Who else may declare a price final: "the shop across the street is firm at 45", "another buyer
# gave me a final offer".
THIRD_PARTY = re.compile(
    r"^[^\w¤]*(?:(?:but|and|so|also|well)\s+)?(?:the|another|that|a|some|"
    r"other)\s+(?:\w+\s+)?(?:shop|store|dealer|dealership|garage|seller|buyer|"
    r"bidder|"
    r"guy|man|woman|lady|place|website|site|market|auction|auctioneer|vendor|"
    r"agent|company|firm|stall)s?\b|"
    r"\b(?:gave|made|sent|offered|got|received)\s+(?:me\s+|us\s+)?(?:a|an|"
    r"their|his|her)\s+$",
    re.IGNORECASE,
)
HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|suppose|supposing|assuming|(?<!I\s)imagine|pretend|hypothetically|wish\s+(?:I|"
    r"we|it|my)|whether|in\s+case|"
    r"what\s+if|in\s+a\s+world\s+where|it\s+would\s+take|it['’]d\s+take|wonder|wondering|"
    r"(?<!\bno\s)(?<!without\s)(?<!\ba\s)doubt|let['’]s\s+say|(?:love|like|want|"
    r"wish)\s+to\s+(?:say|tell\s+you)|if\s+only|say\s+(?:I|we|you|it)\s+(?:paid|had|was|were|got)|"
    rf"were\s+{WE}\s+to|"
    r"(?:I['’]ll|I\s+will|I['’]m\s+going\s+to|I['’]d)\s+(?:tell|give|show)\s+you)\b",
    re.IGNORECASE,
)
ANTECEDENT = re.compile(
    r"[^\w¤]*(?:if|unless|suppose|supposing|assuming|were\s+(?:I|we|you|this|"
    r"it|that)|had\s+(?:I|you|we)|should\s+(?:the|you|it|I)|"
    r"even\s+if)\b",
    re.IGNORECASE,
)
# A seller's cost of something that is not for sale: "my other bike", "the stand, which I'm
# keeping", "not included".
NOT_FOR_SALE = re.compile(
    rf"\b{MY}\s+other\b|\b(?:which|that)\s+(?:I['’]m|I\s+am|we['’]re|"
    r"we\s+are)\s+keeping\b|"
    r"\b(?:that|which|it|they)\s*(?:['’]s\s+not|is\s+not|isn['’]t|are\s+not|"
    r"aren['’]t|['’]re\s+not)\s+"
    r"(?:\w+\s+)?(?:included|part\s+of\s+(?:the|this)\s+(?:sale|"
    r"deal))\b",
    re.IGNORECASE,
)
# A limit for something else or for a perk: "2k for the honeymoon, totally separate from this", "a
# separate 400",
# "our minimum order value for free delivery is 30".
ELSEWHERE = re.compile(
    r"\bseparate\s+from\s+(?:this|that|the\s+\w+)\b|\ba\s+separate\s+¤|"
    r"\bnothing\s+to\s+do\s+with\s+(?:this|that)\b|"
    r"\bfor\s+(?:free|discounted|cheaper)\s+(?:delivery|shipping|postage|"
    r"installation)\b|\bto\s+qualify\s+for\b",
    re.IGNORECASE,
)
# What the speaker heard from someone else about the other side is a report: "my friend said you'd
# take 250" (about
# the speaker, "my mom said I can spend 160" is the speaker's limit).
HEARD = re.compile(
    rf"\b(?:my|our|a)\s+(?:\w+\s+)?{cues.PEOPLE}\s+(?:\w+\s+)?(?:said|says|told\s+me|"
    rf"mentioned|reckons|heard)\b",
    re.IGNORECASE,
)
# What ends a condition's reach within its sentence: "If it had the charger I'd pay more, but as it
# is my max is 35".
CONTRAST = re.compile(r"\b(?:but|however|yet|though|anyway|still)\b|[:—–]|\s-\s", re.IGNORECASE)
COUNTERFACTUAL = re.compile(
    r"\b(?:would|could|might|should)\s*(?:have|['’]ve)\b(?!\s+you\b)|"
    r"\b(?:would|could|should)['’]ve\b|"
    r"['’]d\s+have\s+(?:\w+ed|said|told|taken|paid|gone)\b|^\W*(?:had|"
    r"were)\s+(?:I|we|you|my|our|your|it|the)\b",
    re.IGNORECASE,
)
NEGATION = re.compile(
    r"\b(?:not|never|no|nobody|neither|nor|hardly|aint|dont|didnt|isnt|wasnt|"
    r"cant|wont|wouldnt|couldnt|"
    r"shouldnt|doesnt|havent|hasnt)\b|n['’]t\b|"
    r"\bcannot\b",
    re.IGNORECASE,
)
# A negated "be" or "have" bounds a claim rather than denying it: "your cost can't be more than
# 1.50".
BOUND_NEGATION = re.compile(
    r"\b(?:can['’]?t|cannot|couldn['’]?t|can\s+not)\s+(?:\w+\s+)?(?:be|"
    r"have)\b|\bno\s+way\s*$|"
    r"\b(?:no|without\s+(?:a|any)?)\s*(?:doubt|question|trouble|problem)\b",
    re.IGNORECASE,
)  # "no way you paid more than 150" bounds the other side's cost
REPORTED = re.compile(
    r"\b(?:you|u|they|he|she|someone|somebody|people)(?:['’]ve|['’]d|"
    r"\s+have)?\s+(?:\w+\s+)?(?:said|say|says|told|tell|"
    r"mentioned|mention|claimed|saying|telling|claiming|indicated|stated|noted|specified|implied|"
    r"admitted|confirmed|"
    r"claim|offered|quoted|asked|wrote|suggested|think|thinks|thought)\b|\b(?:your|their|his|"
    r"her)\s+(?:\w+\s+)?"
    r"(?:offer|bid|counter(?:offer)?|ask(?:ing)?(?:\s+price)?|quote|proposal)\b|\baccording\s+to\b|"
    r"\b(?:message|email|e-mail|text|note|letter|listing|ad|advert|post)\s+(?:\w+\s+){0,3}?(?:said|"
    r"says|stated|read|reads|"
    r"mentioned)\b|\b(?:your|ur|yer|his|her|their|the)\s+[\w-]+\s+(?:\w+\s+){0,3}?(?:said|says|say|"
    r"mentioned|told|claimed|"
    r"wrote|stated|indicated|suggested|shows|"
    r"showed)\b|"  # "your colleague mentioned", "the receipt you showed me says"
    r"\b(?:sells|goes|going|retails?|listed|priced|(?:is|are|'s|"
    r"'re)\s+selling)\s+(?:\w+\s+)?(?:for|at)\b|"
    r"\b(?<!I\s)sold\s+(?:\w+\s+){0,3}?for\b|\bgoing\s+rate\b|"
    r"\b(?:online|on\s+ebay|on\s+amazon|in\s+(?:the\s+)?(?:shops|stores)|retail|"
    r"msrp|rrp|list\s+price|sticker\s+price|market\s+(?:price|value)|similar|another|last\s+time|"
    r"usually|normally|typically)\b",
    re.IGNORECASE,
)
ASSERTIVE = re.compile(
    r"\b(?:sure|bet|know|knows|knew|certain|surely|clearly|obviously|probably|likely|definitely|"
    r"def|easily|easy|undoubtedly|"
    r"doubt(?:less)?|reckon|suspect|guess|think|believe|confident|must|gladly|happily|comfortably|"
    r"well|honest|"
    r"tell|heartbeat|blinking|real|come\s+on|c?mon|no\s+problem|still|honestly|totally|for\s+sure|"
    r"fr|prob|"
    r"probs|deffo|defo|dare|opinion|trust|expect|imagine|guessing|pretend|frankly|wager|"
    r"realistically|positive|"
    r"all\s+day|don['’]?t\s+lie|admit\s+it|clear|evident|obvious|thinking\s+twice|second\s+thought|"
    r"hesitat\w*|sense|trouble|difficulty|figure)\b",
    re.IGNORECASE,
)
SPEAKER = re.compile(claim_parts.SPEAKER, re.IGNORECASE)  # the speaker as subject or owner
# A report that may follow what it reports: "your floor was 60, according to your first message".
REPORTED_AFTER = re.compile(
    r"\baccording\s+to\b|\b(?:your|his|her|their)\s+words\b|"
    r"\bas\s+(?:you|u)\s+(?:said|told|mentioned|wrote|stated|"
    r"put\s+it)\b",
    re.IGNORECASE,
)
# ... or in the clause after it: "2.60 is over your budget, you said, so what about 2.40?"
REPORTED_TAIL = re.compile(
    r"[^\w¤]*(?:(?:as\s+)?(?:you|u)\s+(?:said|told\s+me|mentioned|wrote|"
    r"stated)|(?:your|his|her|their)\s+(?:own\s+)?words)"
    r"(?=\s*(?:[,;.!?—–-]|$))",
    re.IGNORECASE,
)
_WHEN_I_WAS = rf"when\s+{WE}\s+(?:was|were|started|first)"
# When a limit stated in the past tense no longer holds: "my budget for my last phone was 600".
PAST_TIME = re.compile(
    r"\b(?:yesterday|earlier|at\s+first|last\s+(?:year|month|week|time|summer|"
    r"winter|spring|autumn|fall|night)|"
    r"for\s+(?:my|our|the)\s+(?:last|previous|old)|previous(?:ly)?|back\s+in|"
    r"in\s+(?:19|20)\d\d|years?\s+ago|months?\s+ago|used\s+to|at\s+the\s+time|"
    rf"originally|back\s+then|back\s+when|{MY}\s+(?:old|previous|former)|"
    rf"{_WHEN_I_WAS})\b",
    re.IGNORECASE,
)
# A habit the speaker had: "when I started out I'd never go below 20".
WHEN_I_WAS = re.compile(rf"\b{_WHEN_I_WAS}\b", re.IGNORECASE)
# What must follow a bound that opens its sentence for it to be the speaker's limit: a cost to the
# speaker
# ("over 400 and I keep taking the bus"); "over 1,000 and I'd want a warranty" states none.
CONSEQUENCE = re.compile(
    r"n['’]t\b|\b(?:not|never|cannot|nothing|lose|losing|loss|underwater|"
    r"for\s+free|subsidi[sz]\w*|worth|cheaper|"
    r"walk|walking|gone|kill|stretch|loan|borrow|noodles|broke|afloat|drain|"
    r"robbing|away|sting|sense|"
    r"struggle|bus|keep|decline|refuse|bear|(?:cost|costs)\s+(?:me\s+)?more|"
    r"paying\s+(?:you|to)|"
    r"out\s+of\s+(?:pocket|reach))\b|"
    r"\bI['’]?m\s+out\b",
    re.IGNORECASE,
)
# A limit that is not now's: "my budget used to be 200", "next month my budget will be 300".
NOT_NOW = re.compile(
    r"\b(?:used\s+to\s+be|will\s+(?:probably\s+|likely\s+)?be|(?:is|"
    r"are)\s+going\s+to\s+be)\b",
    re.IGNORECASE,
)
# What says a sentence is not meant: "my budget is 40, kidding", "oh totally, my budget is 60,000.
# Very funny."
SARCASM = re.compile(
    r"\b(?:(?:just\s+)?kidding|jk|yeah\s+right|oh\s+(?:sure|totally|yeah)|"
    r"very\s+funny|as\s+if|right,\s+because|"
    r"hypothetically)\b|^\W*sure,?\s+and\b",
    re.IGNORECASE,
)  # "Sure, and I paid a dollar for it."
# What marks a statement about the other side as a guess: "perhaps your minimum is 850, I do not
# know"
# ("you paid maybe 20" only rounds the price).
HEDGE = re.compile(
    r"\b(?:(?:maybe|perhaps|possibly)(?!\s+(?:like\s+|about\s+|around\s+)?¤)|"
    r"it['’]s\s+possible|idk|not\s+sure|no\s+idea|(?:I|I['’]d)\s+(?:do\s+not|"
    r"don['’]?t|"
    r"wouldn['’]?t)\s+know|(?:could|may|"
    r"might)\s+(?:well\s+)?be\s+wrong)\b",
    re.IGNORECASE,
)
# A guess about the other side by its modal: "you might let it go for 200" (an assertion makes it a
# claim).
GUESS_MODAL = re.compile(r"\b(?:might|may)\b", re.IGNORECASE)
# Where a price is the market's, not a side's: an other-side claim made about it claims nothing.
MARKET = re.compile(
    r"\b(?:in|at)\s+(?:any|every)\s+(?:store|shop|supermarket|market)\b|"
    r"\banywhere\s+else\b|\belsewhere\b",
    re.IGNORECASE,
)
# ... and where what the buyer would pay is a shop's price or another thing's: "you'd pay 18 at the
# florist", "the
# least you'd pay for a new one is 600" (what the seller paid at the outlet is still the seller's
# cost).
SHOP_PRICE = re.compile(
    r"\bat\s+(?:the|a)\s+(?:\w+\s+)?(?:florist|shop|store|supermarket|mall|"
    r"dealer(?:ship)?|bakery|butcher|"
    r"chemist|pharmacy|outlet|boutique|retailer)s?\b|"
    r"\bfor\s+a\s+(?:brand[- ])?new\s+one\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Clause:
    """A clause of the masked message: its span, its sentence, whether it asks, and its prices."""

    start: int
    end: int
    sentence: int
    question: bool
    prices: tuple[Price, ...]
    sentence_span: tuple[int, int]  # a condition opening the sentence governs the clauses after it

    @property
    def opens_sentence(self) -> bool:
        """Whether this is its sentence's first clause."""
        return self.start == self.sentence_span[0]


def quoted(masked: str, clause: Clause, span: tuple[int, int]) -> bool:
    """Whether a cue stands between an opening quote before it and a closing one after it in its
    sentence: mentioned, not said ("you wrote 'not a penny less than 80'")."""
    return (
        QUOTE_OPEN.search(masked[clause.sentence_span[0] : span[0]]) is not None
        and QUOTE_CLOSE.search(masked, span[1], clause.sentence_span[1]) is not None
    )


def between(masked: str, span: tuple[int, int], price: Price) -> str:
    """The words between a cue and its price, whichever comes first."""
    return masked[min(span[1], price.end) : max(span[0], price.start)]


@dataclass(frozen=True)
class Site:
    """A cue found in a clause of the masked message, with the price it points at: what a canceller
    reads."""

    masked: str
    clauses: Sequence[Clause]
    index: int  # the cue's clause
    cue: cues.Cue
    span: tuple[int, int]
    price: Price | None

    @property
    def clause(self) -> Clause:
        """The cue's clause."""
        return self.clauses[self.index]

    @cached_property
    def text(self) -> str:
        """The cue's clause."""
        return self.masked[self.clause.start : self.clause.end]

    @cached_property
    def sentence(self) -> str:
        """The cue's sentence."""
        return self.masked[slice(*self.clause.sentence_span)]

    @cached_property
    def reach(self) -> tuple[int, int]:
        """From the cue or its price, whichever comes first, to whichever ends last, when the price
        is in the cue's clause; else the cue's own span."""
        price, (start, end) = self.price, self.span
        if price is not None and self.clause.start <= price.start < self.clause.end:
            return min(start, price.start), max(end, price.end)
        return self.span

    @cached_property
    def between(self) -> str:
        """The words between the cue and its price ("" without one)."""
        return between(self.masked, self.span, self.price) if self.price is not None else ""

    @cached_property
    def before_cue(self) -> str:
        """The cue's sentence up to the cue."""
        return self.masked[self.clause.sentence_span[0] : self.span[0]]


@dataclass(frozen=True)
class Canceller:
    """One rule that cancels a cue: its name, its test, and the messages it must cancel and must
    leave standing.

    `cancels` and `keeps` are (speaker's side, message) pairs: in each of `cancels` a cue of the
    kind this rule governs is cancelled by this rule first; in each of `keeps` the same words stand,
    or a near miss of the rule's own words does not cancel.
    """

    name: str
    test: Callable[[Site], bool]
    cancels: tuple[tuple[str, str], ...]
    keeps: tuple[tuple[str, str], ...]


def _first_cancel(rules: tuple[Canceller, ...], site: Site) -> str | None:
    """The name of the first of `rules` that cancels the cue at `site`, or None: the cue stands."""
    return next((rule.name for rule in rules if rule.test(site)), None)


# --- limit cues -----------------------------------------------------------------------------------


def _hypothetical(s: Site) -> bool:
    """A hypothetical before the cue or its price: "if my budget were 3"."""
    return (
        not s.cue.conditional
        and HYPOTHETICAL.search(s.masked[s.clause.start : max(s.reach[0], s.span[1])]) is not None
    )


def _consequent(s: Site) -> bool:
    """The consequent of a condition that opens the sentence, up to a contrast: "If I were buying in
    bulk, I'd pay around 1.10"; not "If it had the charger I'd pay more, but my max is 35"."""
    first = s.clause.sentence_span[0]
    return (
        not s.cue.conditional
        and not s.clause.opens_sentence
        and ANTECEDENT.match(s.masked, first) is not None
        and not CONTRAST.search(s.masked, first, s.span[0])
    )


def _negated(s: Site) -> bool:
    """A negation outside the cue, in its clause: "I'm not saying my budget is 2". A negation before
    an earlier price in the clause is that price's ("I can't do 150, I need at least 190"); one
    before a colon is another thought ("let's not play games: your top ..."); for a "what I paid"
    cue only what follows counts ("I won't sell below what I paid, which was 130": the negation is
    the sale's)."""
    if s.cue.relative:
        outside = s.masked[s.span[1] : s.reach[1]]
    else:
        start = max(
            [s.clause.start]
            + [p.end for p in s.clause.prices if p.end <= s.span[0] and p is not s.price]
        )
        outside = (
            s.masked[start : s.span[0]].rsplit(":", 1)[-1] + " " + s.masked[s.span[1] : s.reach[1]]
        )
    return NEGATION.search(BOUND_NEGATION.sub(" ", outside)) is not None


def _reported(s: Site) -> bool:
    """Someone else's words, reported before or after: "you said your budget was 50", "2.60 is over
    your budget, you said"."""
    clause = s.clause
    return (
        REPORTED.search(s.masked[clause.start : s.reach[1]]) is not None
        or REPORTED_AFTER.search(s.masked[clause.sentence_span[0] : clause.end]) is not None
        or REPORTED_TAIL.match(s.masked, clause.end, clause.sentence_span[1]) is not None
    )


_WAS = re.compile(r"\b(?:was|were)\b", re.IGNORECASE)


def _not_now(s: Site) -> bool:
    """A limit that was or will be, not the one now: "last year my budget for the conference was
    2,000", "my budget will be 300"."""
    return NOT_NOW.search(s.between) is not None or (
        _WAS.search(s.between) is not None and PAST_TIME.search(s.text) is not None
    )


def _past_ceiling(s: Site) -> bool:
    """A ceiling in a clause that opens with a past time: "Last year I set a ceiling of 1,500" (a
    seller's past cost still stands)."""
    leading = re.match(r"[^\w¤]*", s.text)  # always matches, if only the empty string
    opening = s.clause.start + (leading.end() if leading else 0)
    return s.cue.direction == "hi" and PAST_TIME.match(s.masked, opening) is not None


_FOR_SOMETHING = re.compile(r"\bfor\s+(?:the\s+|my\s+|our\s+)?\w+", re.IGNORECASE)
_BUT_THIS_ONE = re.compile(
    r"[^\w¤]*but\s+this\s+(?:one|\w+)\s+(?:is|comes|will\s+come|is\s+coming)\s+"
    r"(?:for\s+me|out\s+of|from\s+my\s+own|different|separate|my\s+own)\b",
    re.IGNORECASE,
)


def _for_something_else(s: Site) -> bool:
    """A limit for something named, and then "but this one is ...": "my wife set a 300 limit for
    Christmas gifts, but this one is for me"."""
    return (
        _FOR_SOMETHING.search(s.text) is not None
        and _BUT_THIS_ONE.match(s.masked[s.clause.end : s.clause.sentence_span[1]]) is not None
    )


def _no_consequence(s: Site) -> bool:
    """A bound that opens its sentence with no cost to the speaker after its price: "over 1,000 and
    I'd want a warranty", "under 2 a pot, these sell out by noon"."""
    rest = s.masked[s.price.end : s.clause.sentence_span[1]] if s.price is not None else ""
    return s.cue.consequence and not CONSEQUENCE.search(rest)


def _market(s: Site) -> bool:
    """The other side's "limit" that is a shop's price: "you'd pay 80 for this in any store", "you'd
    pay 18 at the florist"."""
    return s.cue.kind == "other_limit" and (
        MARKET.search(s.text) is not None
        or (s.cue.direction == "hi" and SHOP_PRICE.search(s.text) is not None)
    )


def _unasserted(s: Site) -> bool:
    """A cue that needs an assertion in its sentence and has none: "you'd accept forty" without "I'm
    sure"; "you might let it go for 200" is a guess."""
    guess = (
        s.cue.kind == "other_limit"
        and GUESS_MODAL.search(s.masked[s.span[0] : s.span[1]]) is not None
    )
    return (s.cue.assertive or guess) and not ASSERTIVE.search(s.sentence)


_COMPARED_BEFORE = re.compile(
    r"\b(?:(?:more|less|higher|lower)\s+than|(?:over|above|below|under|beyond|within)\s+what"
    r"(?:\s+it)?)\s+$",
    re.IGNORECASE,
)


def _compared(s: Site) -> bool:
    """A price before the cue compared with it, which states no limit: "I'll meet you at 145, which
    is more than I budgeted"."""
    return (
        s.price is not None
        and s.price.end <= s.span[0]
        and _COMPARED_BEFORE.search(s.masked[s.clause.start : s.span[0]]) is not None
    )


_OFFER_OF = re.compile(
    r"\b(?:my|our|this|that)\s+(?:\w+\s+)?(?:offer|bid|counter(?:offer)?|proposal)\s+"
    r"(?:of\s+|at\s+)?$",
    re.IGNORECASE,
)


def _offer_of(s: Site) -> bool:
    """A refusal to pass an offer, whose price is the offer's: "I won't go higher than my current
    offer of 7,800" stands by the offer (final, not a limit)."""
    return (
        s.price is not None
        and s.price.start >= s.span[1]
        and _OFFER_OF.search(s.masked[s.span[1] : s.price.start]) is not None
    )


_PART_OF_COST = re.compile(
    r"\b(?:(?:less|more)\s+than\s+)?(?:half|double|twice|a\s+third)\s+(?:of\s+)?$|"
    r"(?:n['’]t|\bnot)\s+(?:even\s+)?cover\s+$|"
    r"\b(?:(?:less|more)\s+than|below|under|over|above|beyond|within)\s+$",
    re.IGNORECASE,
)


def _part_of_cost(s: Site) -> bool:
    """A "what I paid" compared with a price, not stated: "that's less than half what I paid", "12
    doesn't even cover what I paid"."""
    return s.cue.relative and _PART_OF_COST.search(s.masked[s.clause.start : s.span[0]]) is not None


LIMIT_CANCELLERS: tuple[Canceller, ...] = (
    Canceller(
        "question",
        lambda s: s.clause.question,
        cancels=(("seller", "Is 50 your max?"), ("buyer", "is 50 ur floor")),
        keeps=(("seller", "35 is the last price, ok?"),),
    ),
    Canceller(
        "hypothetical",
        _hypothetical,
        cancels=(("buyer", "If my budget were 3, I'd say yes."),),
        keeps=(("seller", "If I go below 30 I lose money."),),
    ),
    Canceller(
        "consequent",
        _consequent,
        cancels=(("seller", "Had I bought it new, it would have cost me 900."),),
        keeps=(("buyer", "If it had the charger I'd pay more, but my max is 35."),),
    ),
    Canceller(
        "counterfactual",
        lambda s: COUNTERFACTUAL.search(s.text) is not None,
        cancels=(("buyer", "Were my limit 1.50, I'd have said so."),),
        keeps=(("buyer", "I can pay 900 at most."),),
    ),
    Canceller(
        "negated",
        _negated,
        cancels=(
            ("buyer", "I'm not saying my budget is 2."),
            ("seller", "i never said my min was 70"),
        ),
        keeps=(
            ("buyer", "I can't go above 2.40."),
            ("seller", "I can't do 150, I need at least 190."),
        ),
    ),
    Canceller(
        "reported",
        lambda s: s.cue.kind != "final_offer" and _reported(s),
        cancels=(
            ("seller", "You said your budget was 50."),
            ("seller", "2.60 is over your budget, you said."),
        ),
        keeps=(("buyer", "My budget is 50."),),
    ),
    Canceller(
        "not-now",
        _not_now,
        cancels=(
            ("buyer", "Last year my budget for the conference was 2,000."),
            ("buyer", "My budget will be 300."),
        ),
        keeps=(("buyer", "My budget is 300."),),
    ),
    Canceller(
        "quoted",
        lambda s: quoted(s.masked, s.clause, s.span),
        cancels=(
            ("seller", "My grandfather's motto was 'not a penny less', but I'm more flexible."),
        ),
        keeps=(("buyer", "My budget is 80."),),
    ),
    Canceller(
        "when-i-was",
        lambda s: WHEN_I_WAS.search(s.before_cue) is not None,
        cancels=(("seller", "When I started out I'd never go below 20."),),
        keeps=(("seller", "I'd never go below 20."),),
    ),
    Canceller(
        "past-ceiling",
        _past_ceiling,
        cancels=(("buyer", "Last year I set a ceiling of 1,500."),),
        keeps=(("seller", "Last year I paid 1,500 for it."),),
    ),
    Canceller(
        "for-something-else",
        _for_something_else,
        cancels=(
            ("buyer", "My wife set a 300 limit for Christmas gifts, but this one is for me."),
        ),
        keeps=(("buyer", "My wife set a 300 limit for Christmas gifts."),),
    ),
    Canceller(
        "no-consequence",
        _no_consequence,
        cancels=(("buyer", "Over 1,000 and I'd want a warranty."),),
        keeps=(("buyer", "Above 85 it's cheaper for me to rent one."),),
    ),
    Canceller(
        "not-for-sale",
        lambda s: (
            s.cue.kind == "own_limit"
            and s.cue.direction == "lo"
            and NOT_FOR_SALE.search(s.sentence) is not None
        ),
        cancels=(("seller", "I paid 15 for the stand, which I'm keeping."),),
        keeps=(("seller", "I paid 15 for the stand."),),
    ),
    Canceller(
        "elsewhere",
        lambda s: s.cue.kind == "own_limit" and ELSEWHERE.search(s.sentence) is not None,
        cancels=(("buyer", "I set aside 2k for the honeymoon, totally separate from this."),),
        keeps=(("buyer", "I set aside 2k for this."),),
    ),
    Canceller(
        "heard",
        lambda s: (
            s.cue.kind == "other_limit"
            and HEARD.search(s.masked, s.clause.sentence_span[0], s.span[0]) is not None
        ),
        cancels=(("buyer", "My friend said you'd take 250."),),
        keeps=(("buyer", "I know you'd take 250."),),
    ),
    Canceller(
        "sarcasm",
        lambda s: SARCASM.search(s.sentence) is not None,
        cancels=(("buyer", "my budget is 40, kidding"),),
        keeps=(("buyer", "my budget is 40"),),
    ),
    Canceller(
        "hedge",
        lambda s: s.cue.kind == "other_limit" and HEDGE.search(s.sentence) is not None,
        cancels=(("seller", "maybe ur max is 300 idk"),),
        keeps=(("seller", "I know your max is 300."),),
    ),
    Canceller(
        "market",
        _market,
        cancels=(("seller", "You'd pay 80 for this in any store, I'm sure."),),
        keeps=(("seller", "I'm sure you'd pay 80 for this."),),
    ),
    Canceller(
        "unasserted",
        _unasserted,
        cancels=(("buyer", "You might let it go for 200."),),
        keeps=(("buyer", "I'm sure you might let it go for 200."),),
    ),
    Canceller(
        "compared",
        _compared,
        cancels=(("buyer", "I'll meet you at 145, which is more than I budgeted for."),),
        keeps=(("buyer", "I budgeted 145 for this."),),
    ),
    Canceller(
        "offer-of",
        _offer_of,
        cancels=(("buyer", "I won't go higher than my current offer of 7,800."),),
        keeps=(("buyer", "I won't go higher than 7,800."),),
    ),
    Canceller(
        "part-of-cost",
        _part_of_cost,
        cancels=(("seller", "12 doesn't even cover what I paid."),),
        keeps=(("seller", "I won't sell below what I paid, which was 40."),),
    ),
)


def cancel_limit(
    masked: str,
    clauses: Sequence[Clause],
    index: int,
    cue: cues.Cue,
    span: tuple[int, int],
    price: Price | None,
) -> str | None:
    """The name of the rule that cancels a limit cue at `span` of clause `index` pointing at
    `price`, or None."""
    return _first_cancel(LIMIT_CANCELLERS, Site(masked, clauses, index, cue, span, price))


# --- exceptions of particular limit cues --------------------------------------------------------
# Where a limit cue's words stand beside a price but say nothing of the speaker's limit at it.
# `readings` applies them
# before `LIMIT_CANCELLERS`; `confirm`, looser, does not.

# "my budget is 300", "max: 300"
_NAMED_AS = re.compile(r"\s*(?:\w+\s+){0,2}?(?:of|is|was|:|=)\s*(?:\w+\s+)?")


def _someone_elses_subject(s: Site) -> bool:
    """A cue whose subject chat may drop, with none of its own, after a clause naming someone else
    in its sentence: "my dad, who'll pay anything, wouldn't go above 200"."""
    if not s.cue.subjectless or s.index == 0 or cues.FIRST.search(s.masked[s.span[0] : s.span[1]]):
        return False
    before = s.clauses[s.index - 1]
    return (
        before.sentence == s.clause.sentence
        and cues.THIRD.search(s.masked[before.start : before.end]) is not None
    )


def _compares_nearby(s: Site) -> bool:
    """A limit noun of the speaker's compared with a price, not naming it: a comparison just before
    the noun with the price after it ("your price is above my budget at 2,400"), or one between the
    price and the noun ("2.60 is over my budget")."""
    if s.cue.side != "near" or s.cue.kind != "own_limit" or s.price is None:
        return False
    start, end = s.span
    return (
        s.price.start >= end
        and not _NAMED_AS.fullmatch(s.masked, end, s.price.start)
        and cues.COMPARED.search(s.masked[max(s.clause.start, start - 15) : start]) is not None
    ) or cues.COMPARED.search(s.between) is not None


LIMIT_EXCEPTIONS: tuple[Canceller, ...] = (
    Canceller(
        "someone-elses-subject",
        _someone_elses_subject,
        cancels=(("buyer", "My dad, who'll pay anything, wouldn't go above 200."),),
        keeps=(("buyer", "I wouldn't go above 200."),),
    ),
    Canceller(
        "compared-with-limit",
        _compares_nearby,
        cancels=(
            ("buyer", "Your price is above my budget at 2,400."),
            ("buyer", "2.60 is over my budget."),
        ),
        keeps=(("buyer", "My budget is 2,400."),),
    ),
)


def cancel_exception(
    masked: str,
    clauses: Sequence[Clause],
    index: int,
    cue: cues.Cue,
    span: tuple[int, int],
    price: Price | None,
) -> str | None:
    """The name of the exception that takes a limit cue at `span` of clause `index` away from
    `price`, or None."""
    return _first_cancel(LIMIT_EXCEPTIONS, Site(masked, clauses, index, cue, span, price))


# --- final-offer cues -----------------------------------------------------------------------------


def _left(s: Site) -> str:
    """Up to 40 characters of the cue's clause before it."""
    return s.masked[max(s.clause.start, s.span[0] - 40) : s.span[0]]


def _final_negated(s: Site) -> bool:
    """A negation before a final-offer cue in its clause, after any colon: "I'm not going to say my
    final price is 500"; an opening "no" answers ("No, this is my final offer" stands)."""
    # "I have no wiggle room: 7,500 is the last"
    before_cue = s.masked[s.clause.start : s.span[0]].rsplit(":", 1)[-1]
    return NEGATION.search(re.sub(r"^[^\w¤]*no\b", "", before_cue, flags=re.IGNORECASE)) is not None


_SAID_BEFORE = re.compile(
    rf"\b(?:said|says|claimed|claims|insisted|mentioned|wrote|told\s+{ME})\b[^.;!?]{{0,25}}$|"
    rf"¤\s+(?:to|on)\s+{MY}\s+$",
    re.IGNORECASE,
)


def _third_party(s: Site) -> bool:
    """A final offer whose subject is a third party, unless the speaker is named after it: "the shop
    across the street is firm at 45". The subject is the cue's clause's, or the one before when the
    cue opens its clause ("..., final bid")."""
    clause, subject = s.clause, s.clause.start
    if (
        s.index > 0
        and s.clauses[s.index - 1].sentence == clause.sentence
        and not re.search(r"\w", s.masked[clause.start : s.span[0]])
    ):
        subject = s.clauses[s.index - 1].start
    third = THIRD_PARTY.search(s.masked, subject, s.span[0])
    return third is not None and not SPEAKER.search(s.masked, third.end(), s.span[1])


_NOT_MINE_BEFORE = re.compile(
    r"\b(?:your|their|his|her|is\s+(?:that|this)|was\s+(?:that|this)|not|isn't|no|if|unless|when|"
    r"before|"
    r"than|about|from|since|what|whether|beat|improve|raised?|lowered?|changed?|you['’]re|"
    r"you\s+are|you\s+were|"
    rf"{WE}\s+(?:was|were)|(?:give|tell)\s+you)\s+(?:\w+\s+)?(?:my\s+)?$",
    re.IGNORECASE,
)
_SOMEONE_ELSES = re.compile(
    rf"\b(?:{cues.PEOPLE})\s+(?:\w+\s+)?$|\b(?:would|could|might)\s+(?:have\s+been|be|call)"
    r"\s+(?:\w+\s+)?$|['’]d\s+call\s+(?:\w+\s+)?$",
    re.IGNORECASE,
)
_NOT_NOW_AFTER = re.compile(
    r"\s*(?:(?:[\w'’-]+\s+){0,8}?(?:was|were|had\s+been)\b|you(?!['’]ll\s+(?:get|hear|see)\b)|"
    r"from\s+you|that\s+you|which\s+you|depends|\?)|\s*,?\s*(?:unless|if|until|either|once)\b|"
    r"\s+(?:will|would|might|may|could)\s+(?:\w+\s+)?depends?\b",
    re.IGNORECASE,
)


FINAL_CANCELLERS: tuple[Canceller, ...] = (
    Canceller(
        "promised",
        lambda s: s.price is None and FUTURE_FINAL.search(s.before_cue) is not None,
        cancels=(("buyer", "After the viewing I'll send my final offer."),),
        keeps=(("buyer", "After the viewing, this is my final offer."),),
    ),
    Canceller(
        "question-or-quote",
        lambda s: (
            s.clause.question
            or (
                s.masked[s.span[0] - 1 : s.span[0]] in QUOTES
                and s.masked[s.span[1] : s.span[1] + 1] in QUOTES
            )
        ),
        cancels=(
            ("buyer", "Is that your final offer?"),
            ("buyer", "another 'non-negotiable' price that moved"),
        ),
        keeps=(("seller", "That's my final offer."),),
    ),
    Canceller(
        "negated",
        _final_negated,
        cancels=(("seller", "I'm not going to say my final price is 500."),),
        keeps=(("seller", "No, this is my final offer."),),
    ),
    Canceller(
        "said",
        lambda s: _SAID_BEFORE.search(_left(s)) is not None,
        cancels=(
            ("buyer", "The garage said it's non-negotiable."),
            ("buyer", "I can add 0.10 to my last offer."),
        ),
        keeps=(("buyer", "It's non-negotiable."),),
    ),
    Canceller(
        "reported-or-quoted",
        lambda s: (
            REPORTED_AFTER.search(s.before_cue) is not None or quoted(s.masked, s.clause, s.span)
        ),
        cancels=(
            ("buyer", "According to your message, 700 is non-negotiable."),
            ("buyer", "'Take it or leave it,' you said — well, I'm leaving it."),
        ),
        keeps=(("seller", "700 is non-negotiable."),),
    ),
    Canceller(
        "third-party",
        _third_party,
        cancels=(("buyer", "The shop across the street is firm at 45."),),
        keeps=(("seller", "I'm firm at 45."),),
    ),
    Canceller(
        "not-the-speakers",
        lambda s: (
            _NOT_MINE_BEFORE.search(_left(s)) is not None
            or HYPOTHETICAL.search(s.masked[s.clause.start : s.span[0]]) is not None
        ),
        cancels=(("buyer", "You're firm at 20."), ("seller", "I was firm at 500 last week.")),
        keeps=(("seller", "I'm firm at 20."),),
    ),
    Canceller(
        "someone-elses",
        lambda s: (
            _SOMEONE_ELSES.search(_left(s)) is not None
            or ANTECEDENT.match(s.masked, s.clause.sentence_span[0]) is not None
        ),
        cancels=(
            ("buyer", "My brother's final offer was 500."),
            ("seller", "500 would have been my final price."),
        ),
        keeps=(("buyer", "My final offer is 500."),),
    ),
    Canceller(
        "past-or-open",
        lambda s: _NOT_NOW_AFTER.match(s.masked[s.span[1] : s.clause.end + 1]) is not None,
        cancels=(("seller", "My last price for those was 30."),),
        keeps=(("seller", "My last price is 30."),),
    ),
)


def cancel_final(
    masked: str,
    clauses: Sequence[Clause],
    index: int,
    cue: cues.Cue,
    span: tuple[int, int],
    price: Price | None,
) -> str | None:
    """The name of the rule that cancels a final-offer cue at `span` of clause `index`, naming
    `price`, or None."""
    return _first_cancel(FINAL_CANCELLERS, Site(masked, clauses, index, cue, span, price))
