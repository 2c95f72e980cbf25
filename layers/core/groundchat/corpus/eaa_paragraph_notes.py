"""What each paragraph of the European Accessibility Act's articles settles, in everyday words.

An article has one note for the whole of it (`PLAIN_NOTES`, corpus/eaa_plain.py), which all its
paragraphs share, so to the search they looked alike: a question about where the maker's address
goes on a product too small to carry it found Article 7, not the paragraph that answers it. These
notes say what each paragraph in particular settles (the duty, the exception, the deadline, who does
what), in the words people use. Written from each paragraph's text, stating no more than it says;
never shown or cited, only searched. Article 3's definitions have none: each is found by its term.
"""
from __future__ import annotations

PARAGRAPH_NOTES: dict[str, str] = {
    "Article 1": "the Act's stated aim: bring countries' accessibility laws into line so that differing national "
                 "rules neither create nor keep obstacles to trading covered products and services across the EU "
                 "single market",
    "Article 2(1)": "which products are covered when put on sale after 28 June 2025: consumer computers and their "
                    "operating systems, payment terminals, ATMs, ticket and check-in machines, information kiosks, "
                    "phones, TV devices, e-readers",
    "Article 2(2)": "which consumer services are covered from 28 June 2025: phone and messaging, TV and streaming "
                    "access, transport websites, apps, e-tickets and travel info, banking, e-books, online shopping; "
                    "local and regional transport: kiosks only",
    "Article 2(3)": "the Act also covers how emergency calls and messages to the EU-wide 112 number are answered",
    "Article 2(4)": "website and app content left out: recorded audio, video and office files posted before 28 June "
                    "2025, maps with accessible key navigation info, third-party content the business does not fund, "
                    "make or control, frozen archives",
    "Article 2(5)": "the Act leaves untouched the EU copyright rules that let accessible copies of books be made for "
                    "blind and print-disabled readers (Marrakesh Treaty rules: Directive 2017/1564, Regulation "
                    "2017/1563)",
    "Article 4(1)": "the core duty: countries must ensure businesses (economic operators) put on sale only products, "
                    "and offer only services, that meet Annex I, apart from the Article 14 exceptions for excessive "
                    "cost or fundamental change",
    "Article 4(2)": "which Annex I sections products must meet: every product meets Section I; every product other "
                    "than self-service terminals like ATMs also meets Section II on accessible packaging and "
                    "instructions",
    "Article 4(3)": "which Annex I sections services must meet: all services meet the extra service-specific rules of "
                    "Section IV; all except city, suburban and regional transport also meet the general service rules "
                    "of Section III",
    "Article 4(4)": "an optional national choice: a country may require that the premises customers use to access "
                    "covered services, such as bank branches or stations (built environment), meet Annex III so "
                    "disabled people can use them",
    "Article 4(5)": "very small businesses (fewer than 10 staff, microenterprises) that provide services are exempt "
                    "from the service accessibility requirements and from every duty tied to meeting them",
    "Article 4(6)": "countries must give very small businesses guidance and practical tools to help them apply the "
                    "national law implementing the Act, developed together with the groups concerned",
    "Article 4(7)": "countries may point businesses to Annex II, a list of illustrative example solutions that can "
                    "help them meet the Annex I accessibility requirements",
    "Article 4(8)": "countries must make sure the emergency call centres (PSAP) answering 112 calls meet the "
                    "emergency-specific rules of Annex I Section V, organised to suit their national emergency system",
    "Article 4(9)": "the Commission may add binding detail to Annex I through delegated acts where a requirement only "
                    "works once spelled out in EU law, for example interoperability",
    "Article 5": "transport services that already meet the accessible information duties of the passenger rights "
                 "regulations and rail interoperability rules count as meeting the matching Act requirements; any "
                 "extra Act requirements still apply fully",
    "Article 6": "a country may not use accessibility reasons to stop or hinder selling compliant products or "
                 "offering compliant services within its borders (free movement)",
    "Article 7(1)": "before selling a product, the manufacturer must make sure it was designed and built to satisfy "
                    "every accessibility requirement that applies to it",
    "Article 7(2)": "the manufacturer prepares the technical file under Annex IV, runs the conformity check itself or "
                    "has it run, and once compliance is shown signs a declaration of conformity and adds the CE mark",
    "Article 7(3)": "how long to keep the paperwork: the manufacturer holds on to the technical file and declaration "
                    "of conformity for 5 years after the product first goes on sale",
    "Article 7(4)": "in series production the manufacturer needs procedures so every unit keeps complying, taking "
                    "account of design changes and of updates to the standards or specifications it declared "
                    "conformity against",
    "Article 7(5)": "each product needs an identifier such as a model, batch or serial number; if the product is too "
                    "small or unsuited, it goes on the packaging or an enclosed leaflet",
    "Article 7(6)": "the manufacturer's name or brand and a single contact address go on the product, or if "
                    "impossible (no room) on the packaging or an enclosed document, in a language users and "
                    "authorities understand",
    "Article 7(7)": "the product comes with instructions and safety info in a language customers easily understand, "
                    "as each country decides; instructions, information and labels must be clear and easy to "
                    "understand",
    "Article 7(8)": "a manufacturer who thinks a product it sold does not comply must fix or withdraw it at once, "
                    "tell the authorities where it was sold, and keep a register of non-compliant products and "
                    "complaints",
    "Article 7(9)": "when a national authority asks with reasons, the manufacturer must hand over all information and "
                    "documents proving compliance, in a language the authority understands, and work with it to fix "
                    "non-compliance",
    "Article 8(1)": "a manufacturer may name an agent in the EU (authorised representative) in writing, but cannot "
                    "hand over its own design duties or the writing of the technical file",
    "Article 8(2)": "the agent does what its mandate says and must at least be allowed to hold the declaration and "
                    "technical file for authorities for 5 years, show proof of compliance on request, help remedy "
                    "faults",
    "Article 9(1)": "an importer bringing goods from outside the EU may put on sale only products meeting the "
                    "accessibility rules",
    "Article 9(2)": "before selling, the importer checks the manufacturer did its own conformity check (Annex IV), "
                    "wrote the technical file, added CE mark and papers, and put an identifying number and contact "
                    "details on it",
    "Article 9(3)": "an importer who suspects a product falls short on accessibility must hold it back until fixed "
                    "and, if it really fails, warn the manufacturer and the authorities checking products on sale",
    "Article 9(4)": "the importer's name or brand and a contact address go on the product, or if there is no room, on "
                    "the box or in a leaflet, in a language users and authorities understand",
    "Article 9(5)": "the importer makes sure the product comes with user instructions and safety notes that buyers in "
                    "that country can read in their language, as each country decides",
    "Article 9(6)": "while an importer is responsible for a product, the way it is warehoused or shipped must not "
                    "leave it failing the accessibility requirements",
    "Article 9(7)": "the importer holds on to the product's declaration of conformity for authorities for 5 years and "
                    "makes sure the technical file can be shown to them when they ask",
    "Article 9(8)": "an importer that finds a product it already sold does not comply must fix or withdraw it at "
                    "once, tell authorities in each country where it was sold, and log non-compliant products and "
                    "complaints",
    "Article 9(9)": "when an authority gives reasons and asks, the importer hands over information and documents "
                    "proving the product complies, in a language that authority understands, and works with it to "
                    "remedy faults",
    "Article 10(1)": "a distributor, reseller or shop selling a product must take reasonable care over the Act's "
                     "requirements (due care)",
    "Article 10(2)": "before selling, a distributor checks the CE mark, the accompanying papers, user instructions and "
                     "safety notes in the local language, and that manufacturer and importer put an identifying number "
                     "and contact details on it",
    "Article 10(3)": "a distributor who suspects a product falls short on accessibility must not sell it until fixed "
                     "and, if it really fails, warn the manufacturer or importer and the authorities checking products "
                     "on sale",
    "Article 10(4)": "while a distributor is responsible for a product, the way it is warehoused or shipped must not "
                     "leave it failing the accessibility requirements",
    "Article 10(5)": "a distributor that finds a product it already sold does not comply must see that it is fixed or "
                     "withdrawn, and tell authorities at once in each country where it was sold, with details",
    "Article 10(6)": "when an authority gives reasons and asks, a distributor hands over information and documents "
                     "proving the product complies and works with the authority to remedy faults",
    "Article 11": "an importer or distributor that sells a product under its own name or brand (white label), or "
                  "changes it in a way that may affect compliance, takes on every manufacturer duty",
    "Article 12(1)": "when the authorities checking products on sale ask, manufacturers, agents, importers and "
                     "distributors must say which business supplied them a product and which business they supplied it "
                     "to",
    "Article 12(2)": "those supplier and customer details must be available for 5 years after a business received a "
                     "product and for 5 years after it passed it on",
    "Article 12(3)": "the Commission may lengthen the 5 year record keeping period for particular products by "
                     "delegated act, beyond five years and in line with how long the product stays in economic use",
    "Article 13(1)": "the basic duty of a service provider: its service must be designed and delivered so that it "
                     "meets the Act's accessibility requirements",
    "Article 13(2)": "a service provider publishes information (Annex V, often called an accessibility statement) "
                     "explaining how its service is accessible, in writing and spoken form, accessible to disabled "
                     "people, kept while the service runs",
    "Article 13(3)": "a service provider needs processes to keep its service accessible over time, taking account of "
                     "changes to the service, to the requirements, and to standards or specifications it relies on",
    "Article 13(4)": "if a service fails the requirements, the provider must fix it and tell authorities at once in "
                     "every country where it offers the service, explaining the fault and what it did",
    "Article 13(5)": "when an authority gives reasons and asks, a service provider hands over information proving its "
                     "service complies and works with the authority to put it right",
    "Article 14(1)": "the requirements bind only as far as meeting them neither changes what the product or service "
                     "basically is (fundamental alteration) nor costs the business too much (disproportionate burden)",
    "Article 14(2)": "a business wanting to use the exception must first assess whether meeting the requirements would "
                     "change its product or service fundamentally or cost too much, using the Annex VI criteria",
    "Article 14(3)": "the business writes down that assessment, keeps the results for 5 years after it last sold the "
                     "product or offered the service, and gives authorities a copy when they ask",
    "Article 14(4)": "very small businesses (fewer than 10 staff) selling products need not write the assessment down, "
                     "but if they use the exception they must give the facts when authorities ask",
    "Article 14(5)": "a service provider claiming complying costs too much must redo that assessment for each kind of "
                     "service when the service changes, when authorities ask, and at least every 5 years",
    "Article 14(6)": "a business that gets outside money, public or private, meant to improve accessibility cannot "
                     "claim that complying would cost it too much",
    "Article 14(7)": "the Commission may detail the Annex VI cost criteria by delegated act, weighing gains for "
                     "disabled people and people with functional limitations; first act due 28 June 2020, applying no "
                     "earlier than 28 June 2025",
    "Article 14(8)": "a business using the exception for a product or service must tell the authorities in the country "
                     "where it sells or offers it; very small businesses (microenterprises) are spared this",
    "Article 15(1)": "meeting EU harmonised standards whose references are listed in the Official Journal counts as "
                     "meeting the accessibility requirements, for the parts those standards cover (presumption of "
                     "conformity)",
    "Article 15(2)": "the Commission must ask European standards bodies to write harmonised standards covering product "
                     "accessibility, with its first draft request due to the committee of countries by 28 June 2021",
    "Article 15(3)": "fallback when no harmonised standard is published and standards bodies stall or refuse the work, "
                     "or an existing specification meets EU standardisation criteria: the Commission may set technical "
                     "specifications by implementing act",
    "Article 15(4)": "products and services that follow the Commission's technical specifications are likewise "
                     "presumed to comply, to the extent those specifications cover the accessibility requirements",
    "Article 16(1)": "the declaration of conformity must say the product has been proven to satisfy the accessibility "
                     "rules, and list any requirement left out under the fundamental change or excessive cost "
                     "exception (Article 14)",
    "Article 16(2)": "the declaration uses the EU's standard model, holds the items listed in Annex IV, stays up to "
                     "date and is translated into the selling country's language; technical papers must not overburden "
                     "small businesses",
    "Article 16(3)": "a product covered by several EU laws that each demand a declaration of conformity gets one "
                     "single combined declaration naming all those laws and where they were published",
    "Article 16(4)": "when it issues the declaration of conformity, a manufacturer takes on responsibility that the "
                     "product complies with the Act",
    "Article 17": "the CE mark on accessible products follows the general EU rules for CE marking set out in "
                  "Regulation 765/2008, Article 30",
    "Article 18(1)": "the CE mark must be visible, readable and impossible to rub off, on the product or its rating "
                     "plate; if the product is too small or unsuitable, put it on the packaging and accompanying "
                     "papers",
    "Article 18(2)": "the CE mark has to be on the product before it is first put on sale in the EU",
    "Article 18(3)": "countries must use their existing systems to make sure CE marking is applied correctly and act "
                     "against anyone who misuses the mark",
    "Article 19(1)": "the general EU rules on market surveillance and on checking products entering the EU (Regulation "
                     "765/2008) also apply to products covered by this Act",
    "Article 19(2)": "when a business claims an exception for fundamental change or too high a cost (Article 14), "
                     "authorities check it did the assessment, review it against the Annex VI criteria, and check "
                     "compliance",
    "Article 19(3)": "consumers can ask the authorities for what they know about a business's compliance and its "
                     "cost-or-change exception assessment, and get it in an accessible format unless it is "
                     "confidential",
    "Article 20(1)": "if authorities suspect a product falls short, they evaluate it fully with the business's "
                     "cooperation, order it fixed within a reasonable deadline, and only if it is not fixed, order it "
                     "taken off sale",
    "Article 20(2)": "if authorities think the problem reaches beyond their own country, they tell the Commission and "
                     "other EU countries what they found and what they ordered the business to do",
    "Article 20(3)": "the business must fix every affected unit it has sold anywhere in the EU, not just in the "
                     "country whose authority found the problem",
    "Article 20(4)": "if the business misses the deadline to fix the product, authorities temporarily ban or restrict "
                     "its sale or withdraw it in their country, and tell the Commission and other countries straight "
                     "away",
    "Article 20(5)": "contents of the alert to other countries: product identity and origin, what fails and which "
                     "requirements, the measure and its duration, the business's arguments, and whether the product or "
                     "a standard is to blame",
    "Article 20(6)": "other EU countries must promptly report their own measures and any extra information on the "
                     "faulty product, and object if they disagree with the first country's measure",
    "Article 20(7)": "a country's temporary measure against a product counts as justified if neither another country "
                     "nor the Commission objects within three months of being notified",
    "Article 20(8)": "countries must make sure suitable restrictions, such as pulling the product off their market, "
                     "are taken quickly against the faulty product",
    "Article 21(1)": "if a country's measure against a product is disputed or seems to break EU law, the Commission "
                     "consults the countries and businesses, evaluates it, and decides whether it is justified (Union "
                     "safeguard procedure)",
    "Article 21(2)": "if the Commission finds the measure justified, every EU country must pull the product from its "
                     "market and report back; if unjustified, the country that took the measure must lift it",
    "Article 21(3)": "when a justified measure shows the fault lies in a harmonised standard, the Commission starts "
                     "the EU procedure for objecting to that standard (Regulation 1025/2012, Article 11)",
    "Article 21(4)": "when a justified measure shows the fault lies in the Commission's technical specifications, the "
                     "Commission must quickly amend or scrap those specifications by implementing act",
    "Article 22(1)": "a country orders the business to correct formal faults: CE mark missing or misused, declaration "
                     "of conformity absent or wrong, technical file lacking, manufacturer or importer contact details "
                     "missing or false (formal non-compliance)",
    "Article 22(2)": "if the paperwork fault is not put right, the country must restrict or ban sale of the product or "
                     "pull it off the market",
    "Article 23(1)": "countries must set up and regularly update procedures to check that services comply, including "
                     "cost-or-change exception claims, follow up customer complaints about inaccessible services, and "
                     "verify businesses fixed the problems",
    "Article 23(2)": "each country names the authorities that check services and tells the public who they are, what "
                     "they do and what they decided, with this information in accessible formats on request",
    "Article 24(1)": "for covered products and services, the Annex I requirements are the compulsory accessibility "
                     "requirements that public buyers apply under the EU procurement directives 2014/24 and 2014/25",
    "Article 24(2)": "features meeting Annex I as Section VI describes are presumed to satisfy accessibility duties "
                     "under other EU laws for those features, unless that other law says otherwise",
    "Article 25": "following the harmonised standards or Commission technical specifications also counts as meeting "
                  "the Article 24 accessibility duties under other EU laws, insofar as they cover the requirements",
    "Article 26(1)": "the Commission may make delegated acts only on the terms this article lays down",
    "Article 26(2)": "how long the Commission holds its delegated powers: open-ended for detailing Annex I "
                     "requirements, five years starting 27 June 2019 for record-keeping periods and disproportionate "
                     "burden criteria, renewed automatically unless Parliament or Council objects",
    "Article 26(3)": "the European Parliament or Council can take back the Commission's delegated powers at any time; "
                     "a revocation leaves delegated acts that already apply valid",
    "Article 26(4)": "the Commission must first hear experts named by each EU country before it adopts any delegated "
                     "act, following the 2016 Better Law-Making agreement",
    "Article 26(5)": "the Commission sends each new delegated act to Parliament and Council at the same moment, as "
                     "soon as it is adopted",
    "Article 26(6)": "a delegated act only takes effect if neither Parliament nor Council objects within two months "
                     "(extendable by two more), or both say early they have no objection",
    "Article 27(1)": "a committee under the comitology Regulation 182/2011 assists the Commission",
    "Article 27(2)": "where the Act refers to this paragraph, the procedure in Article 5 of Regulation 182/2011 "
                     "(examination procedure) applies",
    "Article 28": "who sits on the Commission's working group (regulators, disability organisations and other "
                  "stakeholders) and its tasks: sharing good practice, consistent application, watching "
                  "disproportionate burden claims, advising",
    "Article 29(1)": "each country must put in place adequate, working ways to make businesses actually obey the "
                     "accessibility rules",
    "Article 29(2)": "a customer can sue in court or complain to an administrative body, and public bodies, "
                     "associations or organisations with a legitimate interest can act for or support them with their "
                     "consent",
    "Article 29(3)": "these enforcement rules do not cover public tenders run under the EU procurement directives "
                     "2014/24 and 2014/25",
    "Article 30(1)": "each country sets its own penalties for breaking its national accessibility law and makes sure "
                     "they are applied",
    "Article 30(2)": "fines and sanctions must be effective, proportionate and deterrent, and the business must also "
                     "be made to fix the non-compliance",
    "Article 30(3)": "each country must quickly tell the Commission its penalty rules and any later changes to them",
    "Article 30(4)": "how big the penalty is depends on how serious the breach is, how many non-compliant products or "
                     "services, and how many people were affected",
    "Article 30(5)": "these penalty rules do not cover public tenders run under the EU procurement directives 2014/24 "
                     "and 2014/25",
    "Article 31(1)": "countries had to pass and publish the national laws needed to comply (transposition) by 28 June "
                     "2022 and send them straight to the Commission",
    "Article 31(2)": "the national accessibility rules start to apply to businesses from 28 June 2025",
    "Article 31(3)": "countries may delay until 28 June 2027 the duty to answer 112 emergency calls accessibly",
    "Article 31(4)": "national laws implementing the Act must mention the Directive, in the text or when officially "
                     "published; each country decides how",
    "Article 31(5)": "countries must send the Commission the wording of their main national laws in the area the Act "
                     "covers",
    "Article 31(6)": "countries that choose to apply accessibility rules to buildings where services are offered "
                     "(Annex III) must send those laws to the Commission and report progress",
    "Article 32(1)": "service providers may keep using products they already used lawfully until 28 June 2030, and "
                     "service contracts signed before 28 June 2025 run unchanged until they end, five years at most",
    "Article 32(2)": "countries may let old ticket machines, ATMs and check-in kiosks in use before 28 June 2025 stay "
                     "until worn out, up to 20 years from first use",
    "Article 33(1)": "the Commission reports on how the Act is working by 28 June 2030, then every five years, to "
                     "Parliament, Council and EU advisory committees",
    "Article 33(2)": "what the reports look at: progress in accessibility, innovation barriers, impact on businesses "
                     "and disabled people, buildings, disproportionate burden claims, micro-business exemptions, "
                     "adding or removing products and services, possible law changes",
    "Article 33(3)": "countries must give the Commission in good time the information it needs to write its reports on "
                     "the Act",
    "Article 33(4)": "the Commission's reports must consider what businesses, NGOs and disability organisations think",
    "Article 34": "the Directive came into effect 20 days after it was published in the EU Official Journal",
    "Article 35": "the formal addressees of the Directive are the EU countries themselves (Member States), the "
                  "governments it is sent to",
}

__all__ = ["PARAGRAPH_NOTES"]
