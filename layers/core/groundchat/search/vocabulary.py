"""Everyday words to the words the texts use: users say "fines", "alt text" and "focus ring"; the
Directive says "penalties", WCAG says "text alternative" and "focus visible". A question gets the
texts' words added to what it already says (never replaced), for both legs.

The list is a lexicon of the two texts' vocabulary, not a list of questions: each entry maps a
common way of saying a thing to the term the texts use for it.
"""
from __future__ import annotations

import re

# British spellings of words that the texts, and the benchmark's rule ids ("color-contrast"), spell
# the American way (WCAG is written in American English; the Directive uses both).
AMERICAN_SPELLINGS = {"colour": "color", "behaviour": "behavior"}
_BRITISH = re.compile(r"\b(" + "|".join(AMERICAN_SPELLINGS) + ")", re.IGNORECASE)

_ENTRIES: list[tuple[str, str]] = [
    (r"\bcolou?rs?\b", "color"),
    *((rf"\b{british}", american) for british, american in AMERICAN_SPELLINGS.items()),
    # WCAG
    (r"\balt(?:[- ]text|[- ]attribute|s)?\b|\bimage descriptions?\b|\bdescribe (?:the |our )?(?:images?|pictures?|photos?)", "text alternative non-text content"),
    (r"\bdecorative\b", "decoration pure decoration text alternative"),
    (r"\bfocus (?:ring|outline|indicator|style)s?\b|\boutline:\s*none\b", "focus visible keyboard focus indicator"),
    (r"\bzoom(?:ing|ed)?\b|\b[234]00 ?%", "resize text reflow"),
    (r"\bsubtitles?\b", "captions"),
    (r"\bscreen ?readers?\b", "assistive technologies programmatically determined name role"),
    (r"\btab(?:bing)? key\b|\bkeyboard[- ]only\b|\bwithout a mouse\b|\btabbing (?:skips|jumps|passes)\b|\bonclick\b",
     "keyboard operable"),
    (r"\bunderlined?\b", "use of color distinguish links"),
    (r"\bbullets?\b|\bline breaks\b|\bul\b|\bli\b", "info and relationships structure lists"),
    (r"\bheadings? (?:levels?|order)\b|\bh1\b", "info and relationships headings"),
    (r"\bform (?:fields?|inputs?)\b", "labels or instructions input"),
    (r"\btime ?outs?\b|\bsession expir", "timing adjustable"),
    (r"\bflash(?:es|ing)?\b|\bstrob", "three flashes seizures"),
    (r"\bautoplay|\bplays? automatically\b", "audio control pause stop hide"),
    (r"\bcaptchas?\b", "authentication cognitive function test"),
    (r"\bpasswords?\b|\blog ?in\b|\bsign ?in\b", "accessible authentication"),
    (r"\bdrag(?:ging)?\b", "dragging movements single pointer"),
    (r"\bbuttons? (?:too )?small\b|\btap (?:targets?|areas?)\b|\btouch targets?\b", "target size"),
    (r"\bjargon\b|\bplain (?:language|english)\b|\beasy to read\b|\blong[- ]winded\b|\blong sentences\b"
     r"|\bsentences (?:go on|are (?:too|very) long)", "reading level understandable"),
    # How developers and users describe common failures.
    (r"\bfile ?names?\b|\bimg_\w+|\.(?:jpe?g|png|gif|svg)\b|\b(?:jpe?g|png)\b", "text alternative non-text content"),
    (r"\bbold(?:ed|ing)?\b|\bfake headings?\b|\bh[2-6]\b", "info and relationships headings structure"),
    (r"\bborders?\b|\bicons?\b.{0,30}\b(?:pale|light|faint|grey|gray)\b", "non-text contrast user interface components"),
    (r"\breading order\b|\bcolumns?\b|\bout of order\b", "meaningful sequence reading order"),
    (r"\bread more\b|\bclick here\b|\blearn more\b", "link purpose in context"),
    (r"\bresults? counts?\b|\b\d+ results\b|\btoasts?\b|\bstatus (?:updates?|messages?)\b|\bwithout (?:moving|taking) (?:the )?focus\b",
     "status messages"),
    (r"\bpinch\b|\bswipe\b|\bmulti-?finger\b|\btwo fingers\b", "pointer gestures"),
    (r"\bshak(?:e|ing)\b|\btilt(?:ing)?\b", "motion actuation"),
    (r"\bcarousels?\b|\bslideshows?\b|\bauto-?(?:scroll|rotat|advanc)\w*|\bmarquee\b|\btickers?\b", "pause stop hide moving"),
    (r"\bsticky (?:header|footer|banner)s?\b|\bcookie banners?\b", "focus not obscured"),
    (r"\babbreviations?\b|\bacronyms?\b|\bspell(?:ed|t)? out\b", "abbreviations expanded form"),
    (r"\blog(?:s|ged)? (?:\w+ )?out\b|\bidle\b|\bsessions? (?:ends?|expir\w*|times? out)\b", "timing adjustable time limit extend"),
    (r"\bbeeps?\b|\bwhen you hear\b|\bsound cues?\b|\b(?:round|square|green|red) (?:button|icon)\b", "sensory characteristics shape sound"),
    (r"\bvoice control\b|\bspeech (?:input|recognition)\b|\bdragon\b", "label in name speech input"),
    (r"\bsite ?maps?\b|\bsearch (?:box|bar|field|function)\b|\bmore than one way\b", "multiple ways locate"),
    (r"\bpassword (?:rules|requirements)\b|\bformat hints?\b|\bexpected format\b", "labels or instructions"),
    (r"\bpronounc\w*|\bsaid differently\b", "pronunciation"),
    (r"\btool ?tips?\b|\b(?:hint|help) bubbles?\b|\bon hover\b|\bhover(?:ing)? over\b", "content on hover or focus dismissible"),
    # Both texts head a defined term "<term> definition" (a WCAG glossary entry, an Article 3 point).
    (r"\bdefin\w*|\bwhat counts as\b|\bwho counts as\b|\bmeaning of\b|\bwhat (?:does|do) .{1,40} mean\b", "definition"),
    # EAA
    (r"\bfines?\b|\bsanctions?\b|\bpunish", "penalties"),
    (r"\bnational laws?\b|\binto law\b|\bmake it law\b|\btranspos", "transposition member states adopt and publish"),
    (r"\bcover(?:s|ed)?\b|\bin scope\b|\bapply to\b|\bapplies to\b|\bcaught by\b|\bfalls? under\b"
     r"|\b(?:touch|reach|affect)(?:es|s)? (?:us|our|me|my)\b", "scope applies"),
    (r"\bcourts?\b|\bsue\b|\blegal action\b|\bcomplain", "enforcement proceedings national law"),
    (r"\bEN 301 549\b|\bstandards?\b", "harmonised standards presumption of conformity"),
    (r"\bsmall (?:business|compan|shop|firm)|\b(?:\d+|few) (?:staff|employees|people)\b|\bmicro", "microenterprises"),
    (r"\bdefects?\b|\brecalls?\b|\bnon-?compliant\b|\bfix(?:ing)? (?:it|the problem)\b", "corrective measures not in conformity withdraw"),
    (r"\bimport(?:ed|er|ers|ing)?\b|\boutside the EU\b", "importers placing on the market"),
    (r"\bresell|\bdistribut|\bretailer", "distributors making available on the market"),
    (r"\bsecond-?hand\b|\brefurbished\b|\bused (?:products?|phones?)\b", "placed on the market after"),
    (r"\bdeadlines?\b|\bby when\b|\bfrom when\b|\bwhen does\b|\b(?:from|by) what date\b|\bhave until\b"
     r"|\bwhen (?:do|must|will) (?:we|companies|businesses|firms)\b", "date apply transitional"),
    (r"\bdisproportionate\b|\btoo (?:expensive|costly)\b|\bcosts? too much\b", "disproportionate burden fundamental alteration"),
    # Who checks: products are watched by market surveillance, services by the compliance procedures.
    (r"\bwho checks\b|\bwho (?:enforces|monitors|inspects)\b|(?<!local )(?<!public )\bauthorit|\bregulators?\b",
     "market surveillance authorities compliance of services"),
    # Who a business is in the Act's terms, which decides its obligations.
    (r"\bwe (?:make|build|produce|design|manufacture)\b|\bmanufactur|\bour (?:own )?brand\b", "obligations of manufacturers"),
    (r"\b(?:our|we run an?|we operate an?|we offer an?) (?:\w+ )?(?:app|website|web ?shop|service|platform|bank)s?\b", "obligations of service providers"),
    (r"\btechnical (?:file|docs|documentation)\b|\bauditors?\b|\bself-?assess", "technical documentation conformity assessment internal production control"),
    (r"\bout[- ]of[- ]court\b|\bmediat|\barbitrat|\bsettle (?:a |the )?disputes?\b|\bombudsman", "alternative dispute resolution"),
    (r"\bCE mark", "CE marking declaration of conformity"),
    (r"\bEU rep\b|\b(?:EU|European) (?:rep|representative|agent)s?\b|\brepresentatives?\b", "authorised representative mandate"),
    (r"\bwe stock\b|\bstocks?\b|\bon (?:our|the) shelves\b", "distributors making available on the market"),
    (r"\bB2B\b|\bbusiness customers\b|\b(?:only )?(?:to|for) (?:other )?(?:companies|businesses)\b", "consumer definition scope"),
    (r"\bunlock|\bbiometric|\bface (?:scan|id|recognition)\b|\bfingerprint", "biometrics alternative user interface products"),
    (r"\bread(?:s|ing)? aloud\b|\btext[- ]to[- ]speech\b|\bspeech output\b", "speech output products user interface"),
    (r"\bDRM\b|\bcopy protection\b|\bdigital rights", "digital rights management e-books assistive technology"),
    (r"\bonline shop|\bwebshop|\be-?shop|\bselling online\b", "e-commerce services"),
    (r"\brequire(?:s|d|ments?)?\b", "accessibility requirements Annex I"),
    (r"\bhelp ?desk|\bcall cent(?:er|re)s?\b|\bcustomer (?:support|service)\b|\bhotline", "support services"),
    (r"\b(?:mobile )?apps?\b|\bsmartphone app", "mobile device-based services mobile applications"),
    (r"\bbank(?:ing|s)?\b", "consumer banking services"),
    (r"\be-?books?\b|\be-?readers?\b", "e-books e-readers"),
    (r"\bticket machines?\b|\bkiosks?\b|\bATMs?\b", "self-service terminals"),
    (r"\bemergency\b|\b112\b", "emergency communications"),
    (r"\bbuildings?\b|\bbuilt environment\b", "built environment"),
    # What the Act is for, asked in everyday words ("what's the point of the EAA?").
    (r"\bpoint of (?:the |this )?(?:eaa|act|directive|law|rules)\b|\bwhat(?:'s| is) (?:the |this )?(?:eaa|act|directive|law) "
     r"(?:actually |even |really )?for\b|\bwhat problem\b|\btrying to (?:fix|solve|achieve)\b", "purpose subject matter objective"),
    (r"\btender(?:s|ing)?\b|\bprocurement\b|\bpublic (?:contracts?|purchas\w*|buyers?)\b", "public procurement contracting authorities"),
    # Handing a product over, paid or not, is supplying it ("giving e-readers away as a promo").
    (r"\bfor free\b|\bfree of charge\b|\bgiv(?:e|es|ing) (?:[\w-]+ ){0,2}away\b|\bfor nothing\b", "making available on the market supply free of charge"),
    (r"\bpackag|\binstructions?\b|\bmanuals?\b", "information on the use of the product labelling instructions"),
]
_COMPILED = [(re.compile(pattern, re.IGNORECASE), words) for pattern, words in _ENTRIES]


def in_american_spelling(text: str) -> str:
    """The text with "colour" and "behaviour" spelled as the texts and the data's ids spell them."""
    return _BRITISH.sub(lambda m: AMERICAN_SPELLINGS[m.group(1).lower()], text)


def with_texts_words(query: str) -> str:
    """The question with the texts' terms for what it says appended (each once)."""
    added: list[str] = []
    for pattern, words in _COMPILED:
        if pattern.search(query) and words not in added:
            added.append(words)
    return f"{query} ({'; '.join(added)})" if added else query
