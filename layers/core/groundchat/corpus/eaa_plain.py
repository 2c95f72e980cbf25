"""What each article and annex of the European Accessibility Act is about, in everyday words.

People ask about the Act the way a business or a user would ("who checks that shops comply?", "we
relabel e-readers under our brand", "by when did countries have to make it law?"); the Directive
says "market surveillance", "economic operator", "transposition". WCAG has Understanding WCAG to
bridge that gap; the Act has nothing like it, so this is ours: one note per article and annex
section saying who it concerns and what it settles, in the words people use. It is written for the
search (the keyword heading and the embedding text of every passage of that article or section,
see corpus/index_text.py); it is never shown or cited, and it states no more than the article does.

Keyed by the section as the converter names it without a paragraph ("Article 7", "Annex I Section
IV"); a paragraph ("Article 7(3)") and a definition ("Article 3(21)") take their article's note.
"""
from __future__ import annotations

from groundchat.corpus.annex_points import OPENING
from groundchat.corpus.chunk import whole_section
from groundchat.corpus.eaa_point_notes import point_notes
from groundchat.corpus.eaa_paragraph_notes import PARAGRAPH_NOTES
from groundchat.corpus.eaa_recital_notes import RECITAL_NOTES
from groundchat.corpus.eaa_situation_notes import SITUATION_NOTES

PLAIN_NOTES: dict[str, str] = {
    "Article 1": "what the Act is for: the same accessibility rules for products and services in every EU country, "
                 "so accessible goods can be sold across borders",
    "Article 2": "which products and services the Act covers and which it does not: computers, phones, TVs, "
                 "e-readers, ticket machines, ATMs, payment terminals, phone and messaging services, streaming, "
                 "transport websites and apps, online banking, e-books, online shops, emergency calls to 112; "
                 "what content on websites and apps is left out",
    "Article 3": "what the words in the Act mean: definitions",
    "Article 4": "the accessibility requirements products and services must meet (Annex I); the exemption of "
                 "very small businesses with fewer than 10 staff that provide services; buildings where services are offered",
    "Article 5": "how the Act fits with the EU's existing passenger rights rules for air, rail, bus and ship travel",
    "Article 6": "countries may not block products or services that comply with the Act from their market",
    "Article 7": "what a manufacturer (a company that makes a product or has it made under its name) must do: design it "
                 "accessibly, technical file, conformity check, declaration, CE mark, keep papers 5 years, "
                 "fix, withdraw or recall a product that does not comply, tell the authorities, name and address on the product",
    "Article 8": "a manufacturer can appoint an authorised representative in the EU by written mandate, and what that agent may do",
    "Article 9": "what an importer bringing products from outside the EU must check and do before selling them: CE mark, "
                 "documents, its name on the product, keep papers, act when a product does not comply",
    "Article 10": "what a distributor, reseller or retailer must check before selling a product (CE mark, instructions "
                  "in the local language) and do when it does not comply",
    "Article 11": "when an importer or distributor counts as the manufacturer: selling a product under its own name or "
                  "brand (white label), or changing a product",
    "Article 12": "businesses in the supply chain must be able to tell authorities who supplied them and whom they supplied, for 5 years",
    "Article 13": "what a service provider (a bank, shop, telecom, transport or streaming company offering a service) "
                  "must do: design the service accessibly, explain publicly how it meets the requirements, keep it "
                  "accessible after changes, fix problems, inform the authorities when the service does not comply",
    "Article 14": "the exceptions when meeting a requirement would fundamentally change the product or service or cost too "
                  "much (disproportionate burden): assessing it, documenting it, renewing it every 5 years, telling the authorities",
    "Article 15": "following harmonised standards such as EN 301 549 or the Commission's technical specifications "
                  "means a product or service is presumed to comply",
    "Article 16": "the EU declaration of conformity of a product: what it states, its language, the manufacturer's responsibility",
    "Article 17": "the CE marking of products: the general rules that apply to it",
    "Article 18": "where and how the CE mark is put on a product or its packaging: visible, legible, lasting, before sale",
    "Article 19": "national authorities check products on the market (market surveillance), including claims that "
                  "complying would cost too much",
    "Article 20": "what happens when a product on the market does not comply: the authority's evaluation, the business must "
                  "correct it, withdraw or recall it, other countries and the Commission are told",
    "Article 21": "when another country or the Commission objects to a national measure against a non-compliant product",
    "Article 22": "paperwork failures: a wrong or missing CE mark, declaration or technical file, and what must follow",
    "Article 23": "how countries check that services comply: authorities responsible for services, complaints and "
                  "reports from customers followed up, checks that problems are fixed, information for the public",
    "Article 24": "accessibility in other EU laws: public procurement and EU funding can rely on these requirements",
    "Article 25": "standards and specifications used for accessibility under other EU laws",
    "Article 26": "the Commission's power to add detail to the Act by delegated acts",
    "Article 27": "the committee of EU countries that assists the Commission",
    "Article 28": "a working group of national authorities and people concerned, including disability organisations, "
                  "to exchange experience and advise on applying the Act",
    "Article 29": "enforcement: customers can go to court or to an administrative body; public bodies, consumer groups "
                  "and disability organisations can take action on their behalf; public procurement checks",
    "Article 30": "penalties: fines and sanctions for breaking the national rules, effective and proportionate, "
                  "with time to fix the problem",
    "Article 31": "deadlines: countries had to turn the Act into national law by 28 June 2022 and apply it from "
                  "28 June 2025; emergency number 112 by 2027",
    "Article 32": "transition periods: services may keep using products they already used before 28 June 2025 (up to 5 "
                  "years for contracts, up to 20 years for self-service terminals like ticket machines and ATMs)",
    "Article 33": "the Commission's reports on how the Act works and its review, including its effect on small businesses",
    "Article 34": "when the Directive entered into force",
    "Article 35": "to whom the Directive is addressed: the EU countries",
    "Annex I Section I": "requirements for every product: information on the product and its labels, instructions and "
                         "warnings through more than one sense, readable text, the user interface and how it works: "
                         "more than one way to use it (sight, hearing, touch, speech), zoom, volume and contrast, no "
                         "reliance on color alone, enough time, an alternative to biometrics such as face or "
                         "fingerprint unlock, privacy, use with limited reach or strength, no flashing that triggers "
                         "seizures, working with assistive technology such as screen readers and hearing aids",
    "Annex I Section II": "requirements for products other than self-service terminals: packaging, instructions for "
                          "installation, maintenance, storage and disposal, in accessible formats",
    "Annex I Section III": "requirements for every service: information about how the service works and its accessibility "
                           "features, websites and mobile apps that everyone can use, accessible support, help desk and call centres",
    "Annex I Section IV": "extra requirements for specific services: phone and video calls with real time text, TV and "
                          "streaming with subtitles and audio description, transport information, online banking "
                          "(identification, electronic signatures, payment, understandable language), e-books (read "
                          "aloud by assistive technology, navigation, accessibility metadata, copy protection that "
                          "does not block accessibility), online shops (checkout, identification, payment, information "
                          "about product accessibility)",
    "Annex I Section V": "answering emergency calls to 112 accessibly: text, real time text and video, not only voice",
    "Annex I Section VI": "accessibility requirements for features of products and services bought under other EU laws",
    "Annex I Section VII": "functional performance: the product or service must work for people without sight, with low "
                           "vision, without color perception, without hearing, without speech, with limited reach, strength "
                           "or dexterity, with cognitive limits, and avoid triggering seizures",
    "Annex II Section I": "example solutions for general requirements for all products",
    "Annex II Section II": "example solutions for products other than self-service terminals",
    "Annex II Section III": "example solutions for general requirements for all services",
    "Annex II Section IV": "example solutions for specific services",
    "Annex III": "accessibility of the buildings where services are offered: entrances, paths, toilets, signs, outdoor areas",
    "Annex IV": "the conformity assessment a manufacturer does itself: internal production control and the technical "
                "documentation (technical file) it must keep",
    "Annex V": "the information a service provider must publish on how its service meets the accessibility requirements",
    "Annex VI": "how to assess whether complying would cost a business too much (disproportionate burden): costs "
                "against benefits and the business's size and turnover",
}

def plain_note(section: str, points: list[str] | None = None) -> str | None:
    """The note for an article, paragraph, definition, annex passage or recital; None for anything
    else: the article's or section's note, the situations people bring to it
    (corpus/eaa_situation_notes.py), then the paragraph's own note (corpus/eaa_paragraph_notes.py),
    the recital's (corpus/eaa_recital_notes.py) or, for a passage of an annex section's points
    (`points`, as the converter labels them), its points' notes (corpus/eaa_point_notes.py)."""
    whole = whole_section(section)
    own = [PARAGRAPH_NOTES.get(section) or RECITAL_NOTES.get(section)]
    if points and OPENING not in points:
        own += point_notes(whole, points)
    notes = [PLAIN_NOTES.get(whole), SITUATION_NOTES.get(whole), *own]
    return "; ".join(note for note in notes if note) or None


__all__ = ["PLAIN_NOTES", "plain_note"]
