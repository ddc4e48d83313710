"""What cancels a cue: the claim checker's named rules that keep a clause from asserting what its cue says.

A cue ("my budget", "can't go above", "final offer") found beside a price is a claim only when its
clause asserts it. Each way a clause can fail to is one named rule here (`Canceller`), with the
words that show it (in `claim_cues`) and the examples it exists for: messages it must cancel and
messages it must leave standing, run as tests (tests/test_claim_cues.py). `LIMIT_CANCELLERS`
govern limit cues, `FINAL_CANCELLERS` final-offer cues; the first rule that applies names the
cancellation, so `python -m benchmarks.claims --cues` can count how often each cancels and how
often rightly. Kept apart from `claims`, which finds cues and prices, so that each rule can be
read, tested and measured on its own (docs/CLAIMS.md §2.4).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from bargain.analysis import claim_cues as cues
from bargain.analysis.price_mentions import Price


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
    """Whether a cue stands between an opening quote before it and a closing one after it in its sentence: mentioned,
    not said ("you wrote 'not a penny less than 80'")."""
    return cues.QUOTE_OPEN.search(masked[clause.sentence_span[0]:span[0]]) is not None and \
        cues.QUOTE_CLOSE.search(masked, span[1], clause.sentence_span[1]) is not None


def between(masked: str, span: tuple[int, int], price: Price) -> str:
    """The words between a cue and its price, whichever comes first."""
    return masked[min(span[1], price.end):max(span[0], price.start)]


@dataclass(frozen=True)
class Site:
    """A cue found in a clause of the masked message, with the price it points at: what a canceller reads."""

    masked: str
    clauses: tuple[Clause, ...]
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
        return self.masked[self.clause.start:self.clause.end]

    @cached_property
    def sentence(self) -> str:
        """The cue's sentence."""
        return self.masked[slice(*self.clause.sentence_span)]

    @cached_property
    def reach(self) -> tuple[int, int]:
        """From the cue or its price, whichever comes first, to whichever ends last, when the price is in the
        cue's clause; else the cue's own span."""
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
        return self.masked[self.clause.sentence_span[0]:self.span[0]]


@dataclass(frozen=True)
class Canceller:
    """One rule that cancels a cue: its name, its test, and the messages it must cancel and must leave standing.

    `cancels` and `keeps` are (speaker's side, message) pairs: in each of `cancels` a cue of the kind
    this rule governs is cancelled by this rule first; in each of `keeps` the same words stand, or a
    near miss of the rule's own words does not cancel.
    """

    name: str
    test: Callable[[Site], bool]
    cancels: tuple[tuple[str, str], ...]
    keeps: tuple[tuple[str, str], ...]


def _first_cancel(rules: tuple[Canceller, ...], site: Site) -> str | None:
    """The name of the first of `rules` that cancels the cue at `site`, or None: the cue stands."""
    return next((rule.name for rule in rules if rule.test(site)), None)


# --- limit cues ---------------------------------------------------------------------------------------------------

def _hypothetical(s: Site) -> bool:
    """A hypothetical before the cue or its price: "if my budget were 3"."""
    return not s.cue.conditional and cues.HYPOTHETICAL.search(s.masked[s.clause.start:max(s.reach[0], s.span[1])]) \
        is not None


def _consequent(s: Site) -> bool:
    """The consequent of a condition that opens the sentence, up to a contrast: "If I were buying in bulk, I'd pay
    around 1.10"; not "If it had the charger I'd pay more, but my max is 35"."""
    first = s.clause.sentence_span[0]
    return not s.cue.conditional and not s.clause.opens_sentence \
        and cues.ANTECEDENT.match(s.masked, first) is not None and not cues.CONTRAST.search(s.masked, first, s.span[0])


def _negated(s: Site) -> bool:
    """A negation outside the cue, in its clause: "I'm not saying my budget is 2". A negation before an earlier price
    in the clause is that price's ("I can't do 150, I need at least 190"); one before a colon is another thought
    ("let's not play games: your top ..."); for a "what I paid" cue only what follows counts ("I won't sell below what
    I paid, which was 130": the negation is the sale's)."""
    if s.cue.relative:
        outside = s.masked[s.span[1]:s.reach[1]]
    else:
        start = max([s.clause.start] + [p.end for p in s.clause.prices if p.end <= s.span[0] and p is not s.price])
        outside = s.masked[start:s.span[0]].rsplit(":", 1)[-1] + " " + s.masked[s.span[1]:s.reach[1]]
    return cues.NEGATION.search(cues.BOUND_NEGATION.sub(" ", outside)) is not None


def _reported(s: Site) -> bool:
    """Someone else's words, reported before or after: "you said your budget was 50", "2.60 is over your budget, you
    said"."""
    clause = s.clause
    return cues.REPORTED.search(s.masked[clause.start:s.reach[1]]) is not None \
        or cues.REPORTED_AFTER.search(s.masked[clause.sentence_span[0]:clause.end]) is not None \
        or cues.REPORTED_TAIL.match(s.masked, clause.end, clause.sentence_span[1]) is not None


_WAS = re.compile(r"\b(?:was|were)\b", re.IGNORECASE)


def _not_now(s: Site) -> bool:
    """A limit that was or will be, not the one now: "last year my budget for the conference was 2,000", "my budget
    will be 300"."""
    return cues.NOT_NOW.search(s.between) is not None or (
        _WAS.search(s.between) is not None and cues.PAST_TIME.search(s.text) is not None)


def _past_ceiling(s: Site) -> bool:
    """A ceiling in a clause that opens with a past time: "Last year I set a ceiling of 1,500" (a seller's past cost
    still stands)."""
    opening = s.clause.start + re.match(r"[^\w¤]*", s.text).end()
    return s.cue.direction == "hi" and cues.PAST_TIME.match(s.masked, opening) is not None


_FOR_SOMETHING = re.compile(r"\bfor\s+(?:the\s+|my\s+|our\s+)?\w+", re.IGNORECASE)
_BUT_THIS_ONE = re.compile(r"[^\w¤]*but\s+this\s+(?:one|\w+)\s+(?:is|comes|will\s+come|is\s+coming)\s+"
                           r"(?:for\s+me|out\s+of|from\s+my\s+own|different|separate|my\s+own)\b", re.IGNORECASE)


def _for_something_else(s: Site) -> bool:
    """A limit for something named, and then "but this one is ...": "my wife set a 300 limit for Christmas gifts, but
    this one is for me"."""
    return _FOR_SOMETHING.search(s.text) is not None \
        and _BUT_THIS_ONE.match(s.masked[s.clause.end:s.clause.sentence_span[1]]) is not None


def _no_consequence(s: Site) -> bool:
    """A bound that opens its sentence with no cost to the speaker after its price: "over 1,000 and I'd want a
    warranty", "under 2 a pot, these sell out by noon"."""
    rest = s.masked[s.price.end:s.clause.sentence_span[1]] if s.price is not None else ""
    return s.cue.consequence and not cues.CONSEQUENCE.search(rest)


def _market(s: Site) -> bool:
    """The other side's "limit" that is a shop's price: "you'd pay 80 for this in any store", "you'd pay 18 at the
    florist"."""
    return s.cue.kind == "other_limit" and (cues.MARKET.search(s.text) is not None or (
        s.cue.direction == "hi" and cues.SHOP_PRICE.search(s.text) is not None))


def _unasserted(s: Site) -> bool:
    """A cue that needs an assertion in its sentence and has none: "you'd accept forty" without "I'm sure"; "you might
    let it go for 200" is a guess."""
    guess = s.cue.kind == "other_limit" and cues.GUESS_MODAL.search(s.masked[s.span[0]:s.span[1]]) is not None
    return (s.cue.assertive or guess) and not cues.ASSERTIVE.search(s.sentence)


_COMPARED_BEFORE = re.compile(r"\b(?:(?:more|less|higher|lower)\s+than|(?:over|above|below|under|beyond|within)\s+what"
                              r"(?:\s+it)?)\s+$", re.IGNORECASE)


def _compared(s: Site) -> bool:
    """A price before the cue compared with it, which states no limit: "I'll meet you at 145, which is more than I
    budgeted"."""
    return s.price is not None and s.price.end <= s.span[0] \
        and _COMPARED_BEFORE.search(s.masked[s.clause.start:s.span[0]]) is not None


_OFFER_OF = re.compile(r"\b(?:my|our|this|that)\s+(?:\w+\s+)?(?:offer|bid|counter(?:offer)?|proposal)\s+"
                       r"(?:of\s+|at\s+)?$", re.IGNORECASE)


def _offer_of(s: Site) -> bool:
    """A refusal to pass an offer, whose price is the offer's: "I won't go higher than my current offer of 7,800"
    stands by the offer (final, not a limit)."""
    return s.price is not None and s.price.start >= s.span[1] \
        and _OFFER_OF.search(s.masked[s.span[1]:s.price.start]) is not None


_PART_OF_COST = re.compile(r"\b(?:(?:less|more)\s+than\s+)?(?:half|double|twice|a\s+third)\s+(?:of\s+)?$|"
                           r"(?:n['’]t|\bnot)\s+(?:even\s+)?cover\s+$|"
                           r"\b(?:(?:less|more)\s+than|below|under|over|above|beyond|within)\s+$", re.IGNORECASE)


def _part_of_cost(s: Site) -> bool:
    """A "what I paid" compared with a price, not stated: "that's less than half what I paid", "12 doesn't even cover
    what I paid"."""
    return s.cue.relative and _PART_OF_COST.search(s.masked[s.clause.start:s.span[0]]) is not None


LIMIT_CANCELLERS: tuple[Canceller, ...] = (
    Canceller("question", lambda s: s.clause.question,
              cancels=(("seller", "Is 50 your max?"), ("buyer", "is 50 ur floor")),
              keeps=(("seller", "35 is the last price, ok?"),)),
    Canceller("hypothetical", _hypothetical,
              cancels=(("buyer", "If my budget were 3, I'd say yes."),),
              keeps=(("seller", "If I go below 30 I lose money."),)),
    Canceller("consequent", _consequent,
              cancels=(("seller", "Had I bought it new, it would have cost me 900."),),
              keeps=(("buyer", "If it had the charger I'd pay more, but my max is 35."),)),
    Canceller("counterfactual", lambda s: cues.COUNTERFACTUAL.search(s.text) is not None,
              cancels=(("buyer", "Were my limit 1.50, I'd have said so."),),
              keeps=(("buyer", "I can pay 900 at most."),)),
    Canceller("negated", _negated,
              cancels=(("buyer", "I'm not saying my budget is 2."), ("seller", "i never said my min was 70")),
              keeps=(("buyer", "I can't go above 2.40."), ("seller", "I can't do 150, I need at least 190."))),
    Canceller("reported", lambda s: s.cue.kind != "final_offer" and _reported(s),
              cancels=(("seller", "You said your budget was 50."), ("seller", "2.60 is over your budget, you said.")),
              keeps=(("buyer", "My budget is 50."),)),
    Canceller("not-now", _not_now,
              cancels=(("buyer", "Last year my budget for the conference was 2,000."),
                       ("buyer", "My budget will be 300.")),
              keeps=(("buyer", "My budget is 300."),)),
    Canceller("quoted", lambda s: quoted(s.masked, s.clause, s.span),
              cancels=(("seller", "My grandfather's motto was 'not a penny less', but I'm more flexible."),),
              keeps=(("buyer", "My budget is 80."),)),
    Canceller("when-i-was", lambda s: cues.WHEN_I_WAS.search(s.before_cue) is not None,
              cancels=(("seller", "When I started out I'd never go below 20."),),
              keeps=(("seller", "I'd never go below 20."),)),
    Canceller("past-ceiling", _past_ceiling,
              cancels=(("buyer", "Last year I set a ceiling of 1,500."),),
              keeps=(("seller", "Last year I paid 1,500 for it."),)),
    Canceller("for-something-else", _for_something_else,
              cancels=(("buyer", "My wife set a 300 limit for Christmas gifts, but this one is for me."),),
              keeps=(("buyer", "My wife set a 300 limit for Christmas gifts."),)),
    Canceller("no-consequence", _no_consequence,
              cancels=(("buyer", "Over 1,000 and I'd want a warranty."),),
              keeps=(("buyer", "Above 85 it's cheaper for me to rent one."),)),
    Canceller("not-for-sale",
              lambda s: s.cue.kind == "own_limit" and s.cue.direction == "lo" and cues.NOT_FOR_SALE.search(s.sentence)
              is not None,
              cancels=(("seller", "I paid 15 for the stand, which I'm keeping."),),
              keeps=(("seller", "I paid 15 for the stand."),)),
    Canceller("elsewhere", lambda s: s.cue.kind == "own_limit" and cues.ELSEWHERE.search(s.sentence) is not None,
              cancels=(("buyer", "I set aside 2k for the honeymoon, totally separate from this."),),
              keeps=(("buyer", "I set aside 2k for this."),)),
    Canceller("heard",
              lambda s: s.cue.kind == "other_limit"
              and cues.HEARD.search(s.masked, s.clause.sentence_span[0], s.span[0]) is not None,
              cancels=(("buyer", "My friend said you'd take 250."),),
              keeps=(("buyer", "I know you'd take 250."),)),
    Canceller("sarcasm", lambda s: cues.SARCASM.search(s.sentence) is not None,
              cancels=(("buyer", "my budget is 40, kidding"),),
              keeps=(("buyer", "my budget is 40"),)),
    Canceller("hedge", lambda s: s.cue.kind == "other_limit" and cues.HEDGE.search(s.sentence) is not None,
              cancels=(("seller", "maybe ur max is 300 idk"),),
              keeps=(("seller", "I know your max is 300."),)),
    Canceller("market", _market,
              cancels=(("seller", "You'd pay 80 for this in any store, I'm sure."),),
              keeps=(("seller", "I'm sure you'd pay 80 for this."),)),
    Canceller("unasserted", _unasserted,
              cancels=(("buyer", "You might let it go for 200."),),
              keeps=(("buyer", "I'm sure you might let it go for 200."),)),
    Canceller("compared", _compared,
              cancels=(("buyer", "I'll meet you at 145, which is more than I budgeted for."),),
              keeps=(("buyer", "I budgeted 145 for this."),)),
    Canceller("offer-of", _offer_of,
              cancels=(("buyer", "I won't go higher than my current offer of 7,800."),),
              keeps=(("buyer", "I won't go higher than 7,800."),)),
    Canceller("part-of-cost", _part_of_cost,
              cancels=(("seller", "12 doesn't even cover what I paid."),),
              keeps=(("seller", "I won't sell below what I paid, which was 40."),)),
)


def cancel_limit(masked: str, clauses: tuple[Clause, ...], index: int, cue: cues.Cue, span: tuple[int, int],
                 price: Price | None) -> str | None:
    """The name of the rule that cancels a limit cue at `span` of clause `index` pointing at `price`, or None."""
    return _first_cancel(LIMIT_CANCELLERS, Site(masked, clauses, index, cue, span, price))


# --- final-offer cues ---------------------------------------------------------------------------------------------

def _left(s: Site) -> str:
    """Up to 40 characters of the cue's clause before it."""
    return s.masked[max(s.clause.start, s.span[0] - 40):s.span[0]]


def _final_negated(s: Site) -> bool:
    """A negation before a final-offer cue in its clause, after any colon: "I'm not going to say my final price is
    500"; an opening "no" answers ("No, this is my final offer" stands)."""
    before_cue = s.masked[s.clause.start:s.span[0]].rsplit(":", 1)[-1]  # "I have no wiggle room: 7,500 is the last"
    return cues.NEGATION.search(re.sub(r"^[^\w¤]*no\b", "", before_cue, flags=re.IGNORECASE)) is not None


_SAID_BEFORE = re.compile(r"\b(?:said|says|claimed|claims|insisted|mentioned|wrote|told\s+(?:me|us))\b[^.;!?]{0,25}$|"
                          r"¤\s+(?:to|on)\s+(?:my|our)\s+$", re.IGNORECASE)


def _third_party(s: Site) -> bool:
    """A final offer whose subject is a third party, unless the speaker is named after it: "the shop across the street
    is firm at 45". The subject is the cue's clause's, or the one before when the cue opens its clause ("..., final
    bid")."""
    clause, subject = s.clause, s.clause.start
    if s.index > 0 and s.clauses[s.index - 1].sentence == clause.sentence \
            and not re.search(r"\w", s.masked[clause.start:s.span[0]]):
        subject = s.clauses[s.index - 1].start
    third = cues.THIRD_PARTY.search(s.masked, subject, s.span[0])
    return third is not None and not cues.SPEAKER.search(s.masked, third.end(), s.span[1])


_NOT_MINE_BEFORE = re.compile(
    r"\b(?:your|their|his|her|is\s+(?:that|this)|was\s+(?:that|this)|not|isn't|no|if|unless|when|before|"
    r"than|about|from|since|what|whether|beat|improve|raised?|lowered?|changed?|you['’]re|you\s+are|you\s+were|"
    r"(?:I|we)\s+(?:was|were)|(?:give|tell)\s+you)\s+(?:\w+\s+)?(?:my\s+)?$", re.IGNORECASE)
_SOMEONE_ELSES = re.compile(rf"\b(?:{cues.PEOPLE})\s+(?:\w+\s+)?$|\b(?:would|could|might)\s+(?:have\s+been|be|call)"
                            r"\s+(?:\w+\s+)?$|['’]d\s+call\s+(?:\w+\s+)?$", re.IGNORECASE)
_NOT_NOW_AFTER = re.compile(r"\s*(?:(?:[\w'’-]+\s+){0,8}?(?:was|were|had\s+been)\b|you(?!['’]ll\s+(?:get|hear|see)\b)|"
                            r"from\s+you|that\s+you|which\s+you|depends|\?)|\s*,?\s*(?:unless|if|until|either|once)\b|"
                            r"\s+(?:will|would|might|may|could)\s+(?:\w+\s+)?depends?\b", re.IGNORECASE)


FINAL_CANCELLERS: tuple[Canceller, ...] = (
    Canceller("promised", lambda s: s.price is None and cues.FUTURE_FINAL.search(s.before_cue) is not None,
              cancels=(("buyer", "After the viewing I'll send my final offer."),),
              keeps=(("buyer", "After the viewing, this is my final offer."),)),
    Canceller("question-or-quote",
              lambda s: s.clause.question or (s.masked[s.span[0] - 1:s.span[0]] in cues.QUOTES
                                              and s.masked[s.span[1]:s.span[1] + 1] in cues.QUOTES),
              cancels=(("buyer", "Is that your final offer?"), ("buyer", "another 'non-negotiable' price that moved")),
              keeps=(("seller", "That's my final offer."),)),
    Canceller("negated", _final_negated,
              cancels=(("seller", "I'm not going to say my final price is 500."),),
              keeps=(("seller", "No, this is my final offer."),)),
    Canceller("said", lambda s: _SAID_BEFORE.search(_left(s)) is not None,
              cancels=(("buyer", "The garage said it's non-negotiable."),
                       ("buyer", "I can add 0.10 to my last offer.")),
              keeps=(("buyer", "It's non-negotiable."),)),
    Canceller("reported-or-quoted",
              lambda s: cues.REPORTED_AFTER.search(s.before_cue) is not None or quoted(s.masked, s.clause, s.span),
              cancels=(("buyer", "According to your message, 700 is non-negotiable."),
                       ("buyer", "'Take it or leave it,' you said — well, I'm leaving it.")),
              keeps=(("seller", "700 is non-negotiable."),)),
    Canceller("third-party", _third_party,
              cancels=(("buyer", "The shop across the street is firm at 45."),),
              keeps=(("seller", "I'm firm at 45."),)),
    Canceller("not-the-speakers",
              lambda s: _NOT_MINE_BEFORE.search(_left(s)) is not None
              or cues.HYPOTHETICAL.search(s.masked[s.clause.start:s.span[0]]) is not None,
              cancels=(("buyer", "You're firm at 20."), ("seller", "I was firm at 500 last week.")),
              keeps=(("seller", "I'm firm at 20."),)),
    Canceller("someone-elses",
              lambda s: _SOMEONE_ELSES.search(_left(s)) is not None
              or cues.ANTECEDENT.match(s.masked, s.clause.sentence_span[0]) is not None,
              cancels=(("buyer", "My brother's final offer was 500."),
                       ("seller", "500 would have been my final price.")),
              keeps=(("buyer", "My final offer is 500."),)),
    Canceller("past-or-open", lambda s: _NOT_NOW_AFTER.match(s.masked[s.span[1]:s.clause.end + 1]) is not None,
              cancels=(("seller", "My last price for those was 30."),),
              keeps=(("seller", "My last price is 30."),)),
)


def cancel_final(masked: str, clauses: tuple[Clause, ...], index: int, cue: cues.Cue, span: tuple[int, int],
                 price: Price | None) -> str | None:
    """The name of the rule that cancels a final-offer cue at `span` of clause `index`, naming `price`, or None."""
    return _first_cancel(FINAL_CANCELLERS, Site(masked, clauses, index, cue, span, price))
