"""The situations people bring to each article and annex section of the European Accessibility Act.

People describe their situation, not the rule: "we sell a TV box with a programme guide", "our
hotel takes bookings online", "a shop stocks imported tablets". `PLAIN_NOTES` (corpus/eaa_plain.py)
says what each part is about; these say who comes to it with what product, service or problem, in
their words. Written from the Act's text, blind to every question set; never shown or cited, only
searched, after the part's own note.
"""
from __future__ import annotations

SITUATION_NOTES: dict[str, str] = {
    "Article 1": "someone new to the law asking why it exists, a firm selling gadgets or apps in several EU "
                 "countries wondering why one set of rules replaces many national ones",
    "Article 2": "does my laptop, smart TV box, tablet, e-reader, card terminal, ticket kiosk, banking app, web "
                 "shop, airline site or ebook fall under the law; are old PDFs, videos, maps or archived pages "
                 "exempt",
    "Article 4": "what must my kiosk, phone or booking site actually do to be usable by disabled customers; a café "
                 "with 6 staff taking online orders asks if it is exempt; must our shop entrance be step-free",
    "Article 5": "an airline, train operator, coach company or ferry line already following passenger rights rules "
                 "asks whether its journey information and booking site still need extra work under this law",
    "Article 6": "a maker whose accessible tablet or a bank whose compliant app is refused by another EU country, "
                 "asking whether that country can stop it being sold or offered there",
    "Article 7": "a phone or e-reader brand, or a firm having devices built by a factory under its label: what "
                 "paperwork, testing, labelling, record keeping and recalls it owes when its product falls short",
    "Article 8": "a device maker based outside Europe wants an EU agent or representative to handle authorities "
                 "and paperwork for it; what tasks can be handed over and what cannot",
    "Article 9": "a company bringing in laptops, tablets or payment terminals from China or the US: what to verify "
                 "before shelving them, whose address goes on the box, how to store and transport them",
    "Article 10": "an electronics retailer or marketplace seller stocking phones or e-readers made by others: what "
                  "to look for on the box and manual, and what to do if a customer reports a barrier",
    "Article 11": "a shop selling own-brand tablets or rebadged set-top boxes, or a reseller changing firmware or "
                  "hardware, asking if it now carries the full duties of the original producer",
    "Article 12": "a wholesaler, importer or retailer asked by inspectors where a batch of card readers came from "
                  "and which shops got them, and how long such records must be kept",
    "Article 13": "a bank, telecom, e-commerce site, streaming platform or rail company: how to build its service "
                  "so disabled users can use it, publish an accessibility statement, and react when something "
                  "breaks",
    "Article 14": "a small firm claiming fixing its app or machine would be too expensive or change what it is; how "
                  "to prove that, keep the evidence, redo it, and whether subsidies remove the option",
    "Article 15": "a developer or product team asking if testing against EN 301 549 or WCAG-based standards is "
                  "enough to show the app, website or device meets the law",
    "Article 16": "a manufacturer drafting the signed compliance statement for its e-reader or terminal: what goes "
                  "in it, which languages it needs, and who is liable for it",
    "Article 17": "a maker or importer asking what the CE logo means for accessibility, and whether the general "
                  "European CE rules also cover a ticket machine or smartphone",
    "Article 18": "where to print the CE logo on a router, phone or its box when the device is tiny, and whether it "
                  "may be added after the product is already sold",
    "Article 19": "a regulator inspects our e-reader and questions our claim that redesigning it would be too "
                  "costly for us; a blind shopper asks the watchdog what it found about a laptop brand",
    "Article 20": "an inspector says our smartphone fails the accessibility rules: must we fix it, pull it from "
                  "shops or recall sold units, and do other EU countries hear about it",
    "Article 21": "another EU country or Brussels disputes a national ban on our payment terminal; can the "
                  "Commission overrule it, and what if the flaw lies in the harmonised standard itself",
    "Article 22": "our imported tablets have no CE mark, or our declaration of conformity and tech file are missing "
                  "or wrong; what happens if we don't sort the paperwork out",
    "Article 23": "a deaf customer complains that a bank's app or an airline's booking website is unusable; who "
                  "checks online services, follows up complaints and confirms the company fixed it",
    "Article 24": "a council buying kiosks or laptops in a public tender wants to know whether EAA requirements "
                  "apply, and whether an accessible product also counts as meeting other EU rules",
    "Article 25": "a supplier bidding for a public contract asks whether following the EN 301 549 standard proves "
                  "the accessibility demanded by procurement law",
    "Article 26": "can Brussels later change the rules, for example add detail to the requirements or the "
                  "small-business exemption criteria, and can Parliament block or cancel those changes",
    "Article 27": "which comitology committee of national experts helps the Commission when it updates technical "
                  "specifications, and how does that examination vote work",
    "Article 28": "a disability charity or a national regulator wants a say in how the Act is applied across Europe "
                  "and to share good practice with authorities elsewhere",
    "Article 29": "a wheelchair user can't complete an online shop's checkout and wants to sue, or a blind people's "
                  "association wants to bring a case for a member; where can they go",
    "Article 30": "how big are the fines if our ticket machine or e-commerce site isn't accessible; does it depend "
                  "on how many units were sold and how many customers were hurt",
    "Article 31": "when did the rules start to apply to our streaming service or webshop, what was the deadline for "
                  "governments to pass national laws, and is there extra time for 112 emergency calls",
    "Article 32": "a bank with older ATMs, a rail operator with existing ticket machines, or a telecom firm with "
                  "contracts signed before mid-2025: how long can they keep them",
    "Article 33": "when will the EU evaluate whether the Act works, how it affects small firms and disabled people, "
                  "and whether the rules might be tightened later",
    "Article 34": "on what date did the accessibility directive legally come into existence after it was published "
                  "in the EU journal",
    "Article 35": "does the directive itself bind my company directly, or only the EU governments that must turn it "
                  "into national law",
    "Annex I Section I": "a phone, laptop, e-reader or ATM maker asks what its device must do: readable labels, manuals "
                         "usable by blind buyers, zoom and volume, no fingerprint-only unlock, screen reader and hearing "
                         "aid support, helpline answering accessibility questions",
    "Annex I Section II": "a router, tablet or smartphone brand designs its box and leaflets: can a blind customer open it, "
                          "read the setup and care guide, and know how to recycle it, with an online PDF manual that works",
    "Annex I Section III": "a bank, airline, telecom or streaming firm asks how its customer-facing side must work: "
                           "explaining the service in usable formats, an accessible website and app, and a helpdesk deaf or "
                           "blind customers can reach",
    "Annex I Section IV": "a mobile operator adding text chat to calls, a broadcaster's programme guide and subtitles, a "
                          "train company's timetable app, a bank's login, an e-book publisher's DRM, an online shop's "
                          "checkout and payment",
    "Annex I Section V": "a deaf or speech-impaired person needs to reach the ambulance, police or fire line by texting or "
                         "video; a national call centre handling 112 asks what it must accept besides a voice call",
    "Annex I Section VI": "a ministry or council buying laptops or software under another EU law, or a regulator writing "
                          "sector rules, asks whether meeting the accessibility Act's product and service rules counts as "
                          "compliance there too",
    "Annex I Section VII": "a designer finds no specific rule for a new feature and asks how to prove it still works for "
                           "someone blind, partly sighted, colour blind, deaf, unable to speak, with tremor, short reach or "
                           "learning difficulties",
    "Annex II Section I": "a manufacturer wants practical ideas: a headphone jack on a cash machine, tactile keypad marks, "
                          "braille manuals, bigger touch buttons for shaky hands, password instead of fingerprint, braille "
                          "display connection, subtitles from a TV box",
    "Annex II Section II": "a phone maker asks what good accessible packaging and printed setup guides look like: a box that "
                           "says the handset has accessibility features, braille print, screen-readable files, diagrams "
                           "explained in words",
    "Annex II Section III": "a service provider wants concrete ideas for its website, app and documents: alt text for images, "
                            "keyboard-only navigation, enough reading time, captioned how-to videos, braille copies, an "
                            "accessible memory stick of information",
    "Annex II Section IV": "examples for a telecom offering sign language video and real-time text, a TV platform a blind "
                           "viewer can browse, an e-book app reading aloud for dyslexic readers, a shop letting blind buyers "
                           "pay by voice",
    "Annex III": "a hotel, bank branch, station or shop owner asks whether the premises count: ramps, step-free "
                 "entry, lifts, signage, accessible toilets, escape routes for wheelchair users, customer desks "
                 "and machines inside",
    "Annex IV": "a small electronics maker or importer asks how to self-certify before selling in the EU: what "
                "goes in the technical file, keeping production consistent, fixing the CE mark, signing the "
                "declaration, appointing a representative",
    "Annex V": "an online store, bank or ticketing platform asks what to put in its terms or an accessibility "
               "statement: describing the service, how it works, which requirements it meets and how compliance "
               "is checked over time",
    "Annex VI": "a small shop, start-up or manufacturer thinks accessibility is too expensive and asks how to "
                "weigh staff, training, design and testing costs against turnover and the benefit to disabled "
                "customers to claim an exemption",
}

__all__ = ["SITUATION_NOTES"]
