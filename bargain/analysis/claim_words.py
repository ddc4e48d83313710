"""The claim checker's shared word lists: pronouns' companions, negations, verbs of paying and moving, coins,
comparisons, limit nouns, people. Each list is defined once, as a tuple of words (regex fragments, tried in the
order given), and `claim_cues` builds its cues from them with `one_of`, so a word added here reaches every cue
that uses the list, and a test (tests/test_claim_cues.py) checks that no list holds a word twice.
"""

from __future__ import annotations


def one_of(words: tuple[str, ...]) -> str:
    """A non-capturing group of `words`, tried in order: `(?:a|b|c)`."""
    return "(?:" + "|".join(words) + ")"


def not_after(words: tuple[str, ...]) -> str:
    """A run of fixed-width look-behinds: the next word does not follow any of `words` (regex look-behinds cannot
    take an alternation of different widths)."""
    return "".join(rf"(?<!{word}\s)" for word in words)


# What a seller pays for besides the item: "fuel cost me 30", "I pay my babysitter 15" state no floor.
EXPENSES = ("fuel", "petrol", "gas", "diesel", "storage", r"storage\sunit", "parking", "insurance", "rent",
            "repairs", "repair", "tolls", "fees", "babysitter", "listing", "ads", "advert", "tax", "taxes",
            "licence", "license", "permit", "pitch")
# The limits that bound no price: "my credit limit", "the weight limit".
NOT_PRICE_LIMITS = ("credit", "weight", "speed", "height", "age", "time", "word", "data", "transfer", "daily",
                    "size", "load", "luggage", "baggage", "card")
_NOT_A_PRICE_LIMIT = not_after(NOT_PRICE_LIMITS)
# Whose costs a bare "costs" is: "my costs", "the unit cost", "landed costs" (not "shipping costs").
COST_OWNERS = ("my", "our", "the", "ur", "your", "total", "real", "actual", "own", "pocket", "purchase",
               "acquisition", "unit", "landed")
_COST_OWNERS = "|".join(rf"(?<={word}\s)" for word in COST_OWNERS)

# What opens a clause whose subject chat drops: "sorry, paid 65 for it new"
SUBJECT_DROPPERS = ("pls", "please", "sorry", "sry", "nah", "no", "ok", "okay", "look", "honestly",
                    "tbh", "man", "bro", "dude", "yeah", "well", "so", "sir", "madam")

# What may stand between a subject and its verb: "I can't really afford to go over", "I won't even take"
ADVERBS = (r"\w+ly", "really", "just", "simply", "honestly", "absolutely", "definitely",
           "seriously", "truly", "literally", "only", "possibly", "even", "ever", "actually",
           "realistically", "basically", "frankly", "still", "already", "originally", "myself",
           "personally", "physically", r"afford\s+to", r"bring\s+myself\s+to", r"go\s+and", "be",
           r"want\s+to", "wanna", r"intend\s+to", r"plan\s+to")

# What a verb of selling takes before its price: "let it go for", "sell the bike for"
OBJECTS = ("it", "them", "['’]em", "this", "these", "that", "those", "the", "my", "our", "her",
           "him")

# A refusal or inability: "can't", "won't", "refuse to", "am not prepared to"
NEGATIONS = ("can['’]?t", "cannot", r"can\s+not", r"not\s+can", "won['’]?t", r"will\s+not",
             r"shall\s+not", "shan['’]t", r"must\s+not", "wouldn['’]?t", r"would\s+not",
             "couldn['’]?t", r"could\s+not", "don['’]?t", r"do\s+not", r"am\s+not", r"['’]m\s+not",
             r"are\s+not", "aren['’]t", r"['’]re\s+not", "not", "never", r"refuse\s+to",
             r"(?:am|are|is|['’]m|['’]re)\s+unable\s+to", r"unable\s+to", r"no\s+longer",
             r"(?:['’]d|would)\s+(?:\w+\s+)?rather\s+not", "ain['’]?t", "dont", "wont", "cant",
             r"(?:am|['’]m|are|['’]re)\s+not\s+(?:in\s+a\s+position|able|prepared|willing|going)\s+to")

# The verbs of paying, selling and moving on price: "go", "pay", "let it go", "come down", "budge"
MONEY_VERBS = ("go(?:ing|in)?", "pay(?:ing|in)?", "spend(?:ing)?", "sell(?:ing|in)?",
               "accept(?:ing)?", "take", "taking", "takin", "charg(?:e|ing)", "ask(?:ing)?", "bill",
               "quote", "list", "rent", "let", "lease", "sublet", "do(?:ing)?",
               r"part(?:ing)?\s+with", r"let(?:ting)?\s+[\w'’]+(?:\s+\w+)?\s+go", "touch",
               "drop(?:ping)?", "budg(?:e|ing)", r"come\s+down", r"coming\s+down", r"come\s+up",
               "mov(?:e|ing)", "offer(?:ing)?", "afford", "giv(?:e|ing)", r"shell(?:ing)?\s+out",
               r"fork(?:ing)?\s+out", r"cough(?:ing)?\s+up", "hav(?:e|ing)", "get(?:ting)?",
               "manag(?:e|ing)", "stretch(?:ing)?", "justify(?:ing)?", "bid(?:ding)?",
               r"put\s+down", "put", r"lay\s+out", "settle", "settling", "consider(?:ing)?",
               "entertain(?:ing)?", r"let\s+go", "part", "discount(?:ing)?", "pric(?:e|ing)")

# The coins and notes of "not a cent more", "one single dollar"
COINS = ("cent", "penny", "dime", "nickel", "dollar", "euro", "pound", "quid", "buck", "lira",
         "rupee", "franc", "rand", "peso")

# Above a price: "more than", "north of", "a penny over"
HI_COMPARISONS = (r"more\s+th[ae]n", "more['’]n", "above", "over", r"higher\s+th[ae]n", "beyond",
                  "past", r"north\s+of", r"in\s+excess\s+of", r"upwards\s+of",
                  r"a\s+(?:cent|penny|dime)\s+(?:more|over|above)(?:\s+than)?",
                  r"any\s+more\s+than", r"any\s+higher\s+than")

# Below a price: "less than", "south of", "a cent under"
LO_COMPARISONS = (r"less\s+th[ae]n", "below", "under", r"lower\s+th[ae]n", r"south\s+of",
                  r"cheaper\s+than", r"a\s+(?:cent|penny|dime)\s+(?:less|under|below)(?:\s+than)?",
                  r"any\s+less\s+than", r"any\s+lower\s+than")

# The nouns of a ceiling: "budget", "max", "spending limit"
HI_NOUNS = ("funds", "means", "savings", r"highest(?!\s+(?:offer|bid|counter))",
            r"(?:highest|maximum)\s+(?:acceptable\s+|possible\s+)?(?:price|figure|number|amount)",
            "budget", "max(?:imum)?", "ceiling", "cap",
            r"top\s+(?:price|number|figure|end|limit|whack|dollar)", r"upper\s+(?:limit|bound|end)",
            r"spending\s+(?:limit|cap|power)", r"price\s+ceiling", r"comfort\s+limit",
            r"absolute\s+top", "top", "mandate", "allowance", "authori[sz]ation", "approval",
            "purse", "wallet", r"ceiling\s+price", r"war\s+chest", "kitty",
            r"willingness\s+to\s+pay")

# The nouns of a floor: "minimum", "reserve", "break-even", "my costs"
LO_NOUNS = (r"(?:lowest|least)(?!\s+(?:offer|bid|counter))",
            r"(?:lowest|minimum)\s+(?:acceptable\s+|possible\s+)?(?:price|figure|number|amount)",
            "floor", "minimum", "min", r"lowest\s+price", r"lower\s+(?:limit|bound|end)",
            r"reserve(?:\s+price)?", r"price\s+floor", r"cost\s+price",
            r"break[- ]?even(?:\s+point|\s+price)?", r"purchase\s+price", r"acquisition\s+cost",
            "buy[- ]in", r"rock[- ]bottom(?:\s+price)?", r"bottom\s+dollar",
            r"minimum\s+(?:order\s+)?(?:value|charge|fee|spend)", r"wholesale\s+(?:price|cost)",
            rf"(?:{_COST_OWNERS})costs?",
            "outlay", r"bottom\s+price", "bottom", "overheads?", "expenses")

# The nouns of a limit either way: "limit", "bottom line", "walk-away price"
ANY_NOUNS = (r"number(?!\s+(?:of|one|two|is\s+\d))",
             rf"{_NOT_A_PRICE_LIMIT}limit",
             r"bottom\s+line", r"walk[- ]?away(?:\s+(?:price|point|number))?", "cut-?off",
             "threshold", r"red\s+line", r"hard\s+stop", r"reservation\s+(?:price|value)",
             r"line\s+in\s+the\s+sand", "bound")

# What may stand before a limit noun: "my absolute max", "our real bottom line"
NOUN_MODIFIERS = ("absolute", "total", "whole", "real", "actual", "hard", "strict", "firm", "top",
                  "overall", "own", "entire", "personal", "very", "true", "realistic",
                  "comfortable", "maximum", "max", "highest", "lowest", "final", "bare", "honest",
                  "rock[- ]bottom", "non-negotiable", "spending", "monthly", "set", "fixed",
                  "current", "approved", "upper", "lower")

# The people whose words or offers are theirs, not the speaker's: "my brother's final offer"
PERSONS = ("brother", "sister", "dad", "father", "mom", "mum", "mother", "friend", "neighbou?r",
          "wife", "husband", "partner", "son", "daughter", "boss", "cousin", "co-?worker",
          "roommate", "uncle", "aunt", "grandma", "grandpa", "girlfriend", "boyfriend", "kid",
          "colleague", "flatmate", "buddy", "mate", "parents?", "family")

# The words that start a new clause
CONJUNCTIONS = ("but", "so", "because", "cause", "cuz", "though", "although", "while", "whereas",
                "plus", "yet", "otherwise", "however", "anyway")
