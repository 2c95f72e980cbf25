"""Whether a question asks what the texts say or what the benchmark's data holds, for the offline router.

People ask about their own site and business in everyday words: "how many flashes per second is too
many?", "after closing a modal, where should focus go?", "we split our agency into three firms; will
that fly?". None names WCAG or the Act, and several use words the benchmark's data also holds: a task
is called "modal-dialog" or "checkout-flow", and "more context" or "good enough" are what a question
comparing context levels says. So a question is the texts' when it speaks of web content, the people
using it or a business's duties, and of nothing that only the benchmark has: its runs, agents and
models, context levels, costs, scores and rule counts, or a model, context or label by name. A task
named alone does not make it the benchmark's: "the checkout page times out for screen reader users"
is about a checkout, not the checkout-flow runs.
"""
from __future__ import annotations

import re

# What web content does and the people who use it, in everyday words: words that say so alone, and
# words that say so only beside another ("text" and "help" are also a cover letter's, "memory" a
# coffee drinker's).
WEB_STRONG = re.compile(
    r"captions?|captoins?|subtitles?|transcripts?|audio description|sign language|\balt\b|alt text|contrast|keyboard|"
    r"\bfocus|screen ?readers?|headings?|\blinks?\b|buttons?|\bforms?\b|form fields?|\blabels?\b|\bzoom|reflow|fonts?|"
    r"line height|letter spacing|landscape|portrait|orientation|time ?outs?|time limits?|animations?|flash\w*|strobe|"
    r"seizures?|blink\w*|carousel|auto-?play\w*|drag\w*|swip\w*|gestures?|touch ?targets?|target size|pixels?|\bpx\b|"
    r"hover\w*|tooltips?|pop-?ups?|popovers?|modals?|dialogs?|\besc\b|escape key|\btabbing\b|sitemap|search (?:box|field)|"
    r"breadcrumbs?|data tables?|table (?:headers?|cells?)|header cells?|error messages?|captchas?|passwords?|log ?in|logging in|sign ?in|"
    r"checkout|(?:date|text|input|search) fields?|\baria\b|\bhtml\b|web ?pages?|web ?sites?|\bpdfs?\b|blind|deaf|low vision|dyslexi\w*|\badhd\b|autis\w*|"
    r"cognitive|tremor|wheelchair|hearing (?:aids?|impair\w*|loss)|hard of hearing|assistive|braille|magnif\w*|\baaa?\b|"
    r"level a\b", re.I)
WEB_WEAK = re.compile(
    r"\btext\b|\bscal(?:e|es|ed|ing)\b|scroll\w*|layout|spacing|session|inactiv\w*|moving|motion|sounds?|music|volume|"
    r"narrat\w*|\bvoice\b|menus?|navigation|\bhelp\b|\berrors?\b|basket|\bcart\b|re-?enter|confirm\w*|"
    r"\bundo\b|pronunc\w*|abbreviations?|jargon|reading level|\bpages?\b|\bsites?\b|\bapps?\b|quiz|alerts?|"
    r"notifications?|memory|motor|one hand|hand control|hearing|images?|pictures?|photos?|icons?|colou?rs?|videos?|"
    r"timers?|countdown|ticker|\bfields?\b|\btab\b|review (?:screen|page|step)|same place|every page|"
    r"tim(?:es|ed|ing) out|\busers?\b|visitors?|shoppers?|customers?", re.I)
# A business's duties under the Act, in everyday words, strong and weak alike.
LEGAL_STRONG = re.compile(
    r"\bthe act\b|\bact's\b|on the market|placing on|making available|microenterprises?|\bsmes?\b|harmoni[sz]ed|"
    r"technical (?:file|documentation)|\btech file|ce mark\w*|declaration of conformity|notified bod\w*|"
    r"market surveillance|disproportionate|burden|too[- ](?:costly|expensive)|turnover|procurement|universal design|"
    r"real-?time text|\b112\b|e-?readers?|\batms?\b|kiosks?|self-service|functional performance|economic operators?|"
    r"importers?|distributors?|manufacturers?|packaging", re.I)
# Accessibility itself: either text's, so it says a question is theirs but not which.
ACCESSIBILITY = re.compile(r"ac+es+ib\w*|a11y|disab\w*|impair\w*|face (?:scan|id|recognition|unlock)|fingerprint|"
                           r"biometric\w*", re.I)
# Words of the lists above that are as often about a device, a document or a picture as about
# accessibility ("clean my keyboard", "a font for a wedding invitation", "edit photos on my phone"):
# they count as weak ones.
_EVERYDAY = re.compile(r"(?:keyboards?|fonts?|pdfs?|passwords?|web ?sites?|web ?pages?|zoom\w*|pixels?|landscape|portrait|"
                       r"orientation|flash\w*|menus?|drag\w*|swip\w*|streaming|colou?rs?|images?|pictures?|photos?|videos?)",
                       re.I)
# One weak word is enough beside a question about what a site owes its users or what is allowed, or an
# open request on the subject.
_ASKS_WHAT_IS_OWED = re.compile(
    r"\b(?:ok|okay|fine|enough|issue|problem)\b|\bneeds?\b|\busers?\b|visitors?|shoppers?|customers?|people|have to|"
    r"\bmust\b|required|allowed|covered|\bok to\b|\bour\b|wcag|\beaa\b|\bact\b|\bcan (?:i|we)\b|"
    r"\bshould\b.{0,40}\b(?:be|have|show)\b|"
    # An open request on the subject, in a chat about accessibility: "tell me something about keyboards".
    r"\btell me (?:something |more )?about\b|\bwhat about\b|^\s*explain\b", re.I)
LEGAL_WEAK = re.compile(
    r"\bfirms?\b|staff|employees|standards?|technical specs?|authorit\w*|regulators?|inspectors?|\bfines\b|\ba fine\b|fined|"
    r"sanctions?|penalt\w*|exempt\w*|exceptions?|grants?|tenders?|ministr\w*|government|brussels|\bcommission\b|"
    r"\beu\b|\bunion\b|representatives?|\brep\b|transit|e-?tickets?|\bsms\b|emergency|telecoms?|broadcast\w*|"
    r"streaming|terminals?|\bbanks?\b|web ?shops?|\bshops?\b|requirements?|legally|court|\bsue\b|complain\w*|"
    r"retailers?|small (?:and medium[- ]sized )?(?:business\w*|compan\w*|enterprises?)|marketplaces?|on the hook|"
    r"liab\w*|responsib\w*|on us\b|outsourc\w*", re.I)
# What only the benchmark has. "Cost" is the Act's too when it weighs a business's burden.
BENCHMARK = re.compile(
    r"\bruns?\b|\bagents?\b|\bmodels?\b|context levels?|\b(?:which|what|each|every|no|per|by|all) contexts?\b|"
    r"violations?|benchmark|\brounds? \d|\bscores?\b|completion|\bcompleted\b|\baxe\b|grad(?:e|ed|ing)\b|"
    r"\bmean (?:violations?|costs?|number|scores?)\b|average|axe rules?|top rules|rules? (?:are |get )?(?:broken|violated|failed)|"
    r"\btasks?\b|sample data|round-\d", re.I)
# "Model" and "agents" in their everyday senses: a product's model ("one declaration per phone model")
# and people who answer customers ("our call centre agents"). Not the benchmark's models and agents.
_EVERYDAY_MODEL_OR_AGENT = re.compile(
    r"\b(?:phone|tv|television|car|product|device|laptop|tablet|printer|kiosk|atm|terminal|e-?reader|smartphone|"
    r"handset|router|console|camera|watch) models?\b|"
    r"\b(?:support|call[- ]?cent(?:re|er)|customer(?:[- ]service)?|service[- ]desk|help ?desk|sales|human|booking|"
    r"travel|insurance) (?:staff |team )?agents?\b", re.I)
_MONEY = re.compile(r"\bcosts?\b|cheap\w*|expensive|\bprices?\b|spend\w*|dollars?|\$", re.I)
_BURDEN = re.compile(r"too[- ](?:costly|expensive|high|much)|turnover|burden|disproportionate|exempt\w*|exceptions?|"
                     r"\bfirms?\b|staff|employees|microenterprises?|\bsmes?\b|accessibility consultant", re.I)
# A question about the people using a site: the texts', even when it names a task or an outcome.
# "Our modal", "my screen reader", "where is focus supposed to go": someone's own site and what it owes.
SITE_SITUATION = re.compile(r"\b(?:users?|shoppers?|customers?|visitors?|people|players?|viewers?)\b|"
                            r"\bis (?:that|this|it) (?:ok|okay|allowed|legal|fine|compliant|a problem)\b|"
                            r"\b(?:our|my|we|we're|i'm)\b|supposed to|\bshould\b|\bmust\b|have to|need to", re.I)


# The words of a price question that names nothing: "what does it cost?", "which one is cheapest?",
# "how much did we spend so far?". In this chat such a question is about the benchmark's costs.
_PRICE_QUESTION_WORDS = frozenset("""
    a an the it its is are was were be been do does did what which who how much many this that these those
    one ones option options setup setups thing things whole overall total average per so far now today
    we our us i me my you your please s most least more less than in on of for to and or all each every
    cost costs costing cheap cheapest cheaper expensive price prices priced pricing spend spent spending
    dollar dollars money""".split())


def asks_only_a_price(q: str) -> bool:
    """A question about a price that names nothing to buy: the benchmark's costs. "The cheapest flight
    to London" or "the price of bitcoin" names something else, and is not this chat's."""
    words = re.findall(r"[a-z]+", q.lower())
    return bool(_MONEY.search(q)) and all(word in _PRICE_QUESTION_WORDS for word in words)


def speaks_of_the_texts(q: str) -> bool:
    """Web content, its users or a business's duties: a word that says so alone, two that say so
    together, or one beside a question about what users need or what is allowed."""
    if ACCESSIBILITY.search(q):
        return True
    strong = {m.group(0).lower() for pattern in (WEB_STRONG, LEGAL_STRONG) for m in pattern.finditer(q)}
    everyday = {word for word in strong if _EVERYDAY.fullmatch(word)}
    if strong - everyday:
        return True
    weak = everyday | {m.group(0).lower() for pattern in (WEB_WEAK, LEGAL_WEAK) for m in pattern.finditer(q)}
    return len(weak) >= 2 or (len(weak) == 1 and bool(_ASKS_WHAT_IS_OWED.search(q)))


def speaks_of_duties(q: str) -> bool:
    """A business's duties or the Act's subjects, in any of their everyday words."""
    return bool(LEGAL_STRONG.search(q) or LEGAL_WEAK.search(q))


def asks_the_texts(q: str, pinned_names: dict[str, str]) -> bool:
    """True when the question is about web content, its users or a business's duties and about
    nothing only the benchmark has. `pinned_names` are the names the question gives (model, context,
    task, label); a task alone is an everyday noun here."""
    if any(facet != "task" for facet in pinned_names):
        return False
    # Money is the benchmark's ("which is cheapest") unless it is a business's burden under the Act
    # or a thing on someone's site ("our price comparison table").
    if BENCHMARK.search(_EVERYDAY_MODEL_OR_AGENT.sub(" ", q)) or (
            _MONEY.search(q) and not (_BURDEN.search(q) or SITE_SITUATION.search(q))):
        return False
    if not speaks_of_the_texts(q):
        return False
    # A task named and an outcome ("checkout timeouts") with no one using the site is the data's.
    return "task" not in pinned_names or bool(SITE_SITUATION.search(q))


__all__ = ["BENCHMARK", "SITE_SITUATION", "asks_only_a_price", "asks_the_texts", "speaks_of_duties", "speaks_of_the_texts"]
