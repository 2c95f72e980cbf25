"""What each recital of the European Accessibility Act explains, in everyday words.

The recitals say why the Act says what it says: why very small firms are let off, why a fine does
not replace complying, why the rules are goals rather than technical specifications. People ask
exactly that ("why can't a company just pay the penalty?"), in words the recitals do not use. These
notes do for the recitals what `PLAIN_NOTES` (corpus/eaa_plain.py) does for the articles and annex
sections: one line per recital in the words people use, with the Act's own term in brackets where
people use it too. Written from each recital's text, stating no more than it says; never shown or
cited, only searched (the keyword heading and the embedding text of the recital, corpus/index_text.py).
"""
from __future__ import annotations

RECITAL_NOTES: dict[str, str] = {
    "Recital 1": "why the Act exists: one common set of accessibility rules across EU countries so accessible "
                 "products and services can be sold everywhere without clashing national rules, making them easier "
                 "to find and information easier to reach",
    "Recital 2": "why accessibility matters: many people want accessible products and services, the number of "
                 "disabled people is set to grow sharply, accessibility helps them live independently and join in, "
                 "and more women than men in the EU have a disability",
    "Recital 3": "who counts as disabled: the UN disability rights convention (UN CRPD) definition, long-lasting "
                 "impairments of body, mind, learning or senses that with barriers stop equal participation; the "
                 "Act aims for everyday products and services designed or adapted for their needs",
    "Recital 4": "who else gains from the Act: older people, pregnant women, travellers carrying bags and anyone "
                 "with a lasting or temporary limitation (persons with functional limitations) who, because of "
                 "barriers, find products and services harder to reach or use",
    "Recital 5": "why EU-wide rules are needed: differing national accessibility laws block trade in products and "
                 "services across borders and distort competition, may grow apart further after the UN convention, "
                 "and hit small and medium-sized businesses hardest",
    "Recital 6": "why differing national rules hurt business: freelancers, small firms and very small businesses "
                 "(fewer than 10 staff) avoid selling abroad because national, regional or local requirements vary "
                 "in scope and detail, adding costs for each country's market",
    "Recital 7": "why disabled customers pay more: accessible products, services and assistive devices cost a lot "
                 "because few suppliers compete, and patchwork national rules make it harder for countries to "
                 "learn from each other",
    "Recital 8": "why the rules are aligned at EU level: to end the patchwork, let businesses produce at scale, "
                 "make selling and moving between countries easier, and let companies spend on innovation rather "
                 "than on coping with different laws",
    "Recital 9": "evidence that common EU accessibility rules work: earlier EU laws on lifts (elevators) and in "
                 "transport already showed the benefits for trade",
    "Recital 10": "the EU promised in a declaration attached to the Amsterdam Treaty to consider disabled people's "
                  "needs when it makes single market laws",
    "Recital 11": "the link to the EU's digital single market plan: online shopping across borders is still rare, "
                  "and e-content, phone and messaging services and TV or streaming must be fully usable by disabled "
                  "people, so accessibility rules are aligned online",
    "Recital 12": "the UN disability rights convention (UN CRPD) is part of EU law since the EU joined it, so the "
                  "EU and all its countries are bound by it",
    "Recital 13": "what the UN disability rights convention asks: equal access for disabled people to buildings, "
                  "transport, information, communication technology and public services in towns and countryside, "
                  "and a UN committee's call for enforceable laws with deadlines to track progress",
    "Recital 14": "the UN disability rights convention asks governments to support research into and use of new "
                  "technology for disabled people, such as mobility aids, gadgets and assistive tech, with priority "
                  "for affordable options",
    "Recital 15": "why the EU acted: after the UN convention took effect, countries needed new accessibility laws, "
                  "and without EU action those national laws would drift further apart",
    "Recital 16": "the Act gives shared EU rules so countries can meet their UN disability convention duties on "
                  "accessibility in the same way, helping them keep national promises",
    "Recital 17": "the EU's disability strategy for 2010 to 2020 named accessibility one of its eight action areas "
                  "and a basic condition for taking part in society, aiming to make products and services "
                  "accessible",
    "Recital 18": "how it was decided which products and services the Act covers: a review during the impact "
                  "assessment picked those that matter to disabled people and where countries have or will likely "
                  "adopt clashing national rules",
    "Recital 19": "devices customers use to get a covered service, such as machines or terminals they interact "
                  "with, must themselves meet the Act's accessibility requirements",
    "Recital 20": "outsourcing does not remove duties: a service provider stays responsible for accessibility when "
                  "a contractor runs all or part of the service, and must keep training staff on accessible "
                  "products and services, including information, advice and advertising",
    "Recital 21": "accessibility rules should be brought in with the least possible burden for businesses and for "
                  "countries",
    "Recital 22": "why accessibility requirements are set out for products and services sold in the EU: so covered "
                  "products and services can move freely between countries",
    "Recital 23": "how the requirements are written: mandatory and based on what must be achieved (functional "
                  "goals) stated as general aims, precise enough to be binding and checked for compliance, yet "
                  "flexible enough to allow innovation",
    "Recital 24": "what the functional performance criteria are for: a fallback only in specific cases when no "
                  "requirement covers a function or feature; an alternative technical solution must still meet the "
                  "requirement and give equal or better accessibility",
    "Recital 25": "which computers are covered: consumer general purpose devices such as desktops, laptops, "
                  "smartphones and tablets, including their operating systems; not computers built into other "
                  "electronics, nor separate parts like motherboards or memory chips",
    "Recital 26": "which terminals are covered: payment terminals and self-service machines used for covered "
                  "services, hardware and software, such as cash machines (ATMs), ticket machines, queue ticket "
                  "dispensers in banks, check-in kiosks and interactive information screens",
    "Recital 27": "why information kiosks and touch screens built into trains, planes, ships, buses or other "
                  "vehicles are left out: the vehicles themselves fall outside the Act",
    "Recital 28": "why phone and messaging services, 112 emergency calls included, are covered: national rules "
                  "differed; one EU set saves providers money, helps disabled people at home and abroad; real time "
                  "text besides voice, total conversation if offering video; countries may name a relay service",
    "Recital 29": "how the Act's rules for phone and internet services and their devices fit with the EU telecoms "
                  "code (Directive 2018/1972), which already gives disabled users equal access, choice, affordable "
                  "internet and calls, and special equipment",
    "Recital 30": "which consumer devices for calls, messaging and going online are covered: smartphones and other "
                  "computing devices people mainly use to reach those services, also the router or modem needed to "
                  "set up the connection",
    "Recital 31": "what access to TV and streaming (audiovisual media services) means: accessible content that "
                  "works with assistive technology, via websites, apps, set-top boxes, media players and smart TVs; "
                  "programmes themselves follow the audiovisual media rules (Directive 2010/13/EU), but programme "
                  "guides (EPGs) fall under this Act",
    "Recital 32": "what travel information airlines, bus, train and ferry companies must make accessible for "
                  "disabled passengers: timetables and live updates on websites, apps, screens and ticket machines, "
                  "before and during the trip, cancellations and delays, possibly fares and special offers",
    "Recital 33": "which parts of passenger travel by plane, bus, train and boat are covered: websites and apps run "
                  "by transport companies or for them, e-tickets and online ticket booking, ticket machines and "
                  "check-in kiosks",
    "Recital 34": "which passenger transport services are covered follows the existing EU passenger rights rules; "
                  "for transport left outside the Act, countries should urge operators to meet its accessibility "
                  "requirements anyway",
    "Recital 35": "why websites of city, suburban and regional public transport get no extra rules: public "
                  "operators already must have accessible sites (Directive 2016/2102), very small firms (fewer than "
                  "10 staff) are exempt, and most private operators selling tickets online are covered as online "
                  "shops",
    "Recital 36": "how the Act fits with EU passenger rights rules for air, rail, bus and boat travel (Regulations "
                  "261/2004, 1107/2006, 1371/2007, 1177/2010, 181/2011) and rail interoperability acts: their "
                  "accessibility duties stay unchanged for consistency and the Act adds to them, helping disabled "
                  "passengers",
    "Recital 37": "where transport rules reach beyond the EU: operators only answer for what they offer inside the "
                  "EU; EU airlines also on flights from abroad into the EU, and every airline on flights leaving "
                  "the EU",
    "Recital 38": "cities are encouraged to build barrier-free public transport into their city mobility plans "
                  "(SUMPs) and to publish examples of good practice on accessible transport and mobility regularly",
    "Recital 39": "why online and mobile banking and other consumer financial services are covered: EU banking law "
                  "protects and informs customers but sets no accessibility rules; disabled customers should use "
                  "these services across the EU, decide fully informed, be protected like everyone else; fair "
                  "competition between banks",
    "Recital 40": "why logging in and proving who you are, electronic signatures and payments must also be "
                  "accessible in banking services: customers need them to complete banking transactions",
    "Recital 41": "why e-books are covered: precise coding and structure make files usable with e-readers and "
                  "screen readers; comics, children's and art books too; differing national rules would hurt "
                  "publishers and readers; publishers and distributors count as service providers; copyright "
                  "barriers handled elsewhere (Marrakesh)",
    "Recital 42": "what counts as an online shop (e-commerce service): selling to consumers remotely via websites "
                  "and apps, electronically, when the customer asks for it; why shared accessibility rules matter "
                  "as online shopping grows and is highly technical",
    "Recital 43": "the online shop requirements apply to selling anything online, any product or service, even "
                  "items the Act also covers separately",
    "Recital 44": "the accessibility rules for answering emergency calls (112) do not change how countries organise "
                  "their emergency services, which stays entirely their own decision",
    "Recital 45": "how emergency calls by disabled people fit with the EU telecoms code: access to emergency "
                  "services equal to others, also when travelling abroad, ideally without registering first; "
                  "countries may use a relay service until emergency call centres handle internet-based calls; "
                  "existing rights not reduced",
    "Recital 46": "how the Act relates to the public sector web accessibility rules (Directive 2016/2102): similar "
                  "exceptions; ticket sales and online shops run by public bodies must also meet this Act, so "
                  "buying online is accessible from public or private sellers; aligned requirements, different "
                  "checking and enforcement",
    "Recital 47": "the four accessibility principles for websites and apps, known from WCAG as POUR: content people "
                  "can perceive, operate and understand, robust enough to work with many browsers and assistive "
                  "technologies such as screen readers; they also apply under this Act",
    "Recital 48": "countries must not block or restrict selling products and services that meet the Act's "
                  "accessibility requirements on accessibility grounds: free movement across the EU",
    "Recital 49": "why countries may require the buildings and places where covered services are offered to be "
                  "accessible too, following Annex III: common rules for buildings help services and disabled "
                  "people move between countries",
    "Recital 50": "accessibility means removing and preventing barriers, ideally by designing for everyone from the "
                  "start (universal design, design for all), following the UN disability convention (CRPD) and its "
                  "General Comment 2; assistive devices and individual adjustments (reasonable accommodation) still "
                  "allowed where needed or required",
    "Recital 51": "products and services under the Act are not automatically medical devices under the medical "
                  "devices rules (Directive 93/42/EEC), though some assistive technologies that are medical devices "
                  "may fall under them",
    "Recital 52": "why common rules help small and medium-sized businesses (SMEs) and very small firms (fewer than "
                  "10 staff): they provide most EU jobs but face obstacles developing products and services, "
                  "especially across borders; harmonised national rules ease their work while keeping protections",
    "Recital 53": "which small and medium-sized firms (SMEs) and very small businesses (fewer than 10 staff) get "
                  "the lighter treatment: only those truly meeting the EU's official SME definition (Recommendation "
                  "2003/361/EC) and court rulings, so firms cannot get around the size rules",
    "Recital 54": "why the Act is built on the EU's common framework for selling products (Decision 768/2008/EC): "
                  "many of these products already fall under other EU product laws, so rules stay consistent, while "
                  "allowing for what is special about accessibility",
    "Recital 55": "every business in the supply chain (makers, importers, distributors, retailers) may only sell "
                  "products that meet the Act, and service providers likewise; duties are shared out clearly and "
                  "fairly according to each one's role",
    "Recital 56": "why each business answers for compliance according to its place in the supply chain: to keep "
                  "accessibility strongly protected and competition fair across the EU single market",
    "Recital 57": "the same duties apply to businesses and bodies from the public sector (state-run or publicly "
                  "owned) as to private companies",
    "Recital 58": "why the manufacturer does the full conformity check of a product: it knows the design and "
                  "production best and carries responsibility for compliance, while national authorities checking "
                  "products on sale (market surveillance) verify they meet EU law",
    "Recital 59": "importers and distributors must cooperate actively with national authorities checking products "
                  "on the market, giving them all the information they need about a product",
    "Recital 60": "importers bringing products from outside the EU must make sure those products meet the Act, in "
                  "particular that their maker carried out the proper conformity checks",
    "Recital 61": "an importer must show on the product its name or registered brand and a postal address where it "
                  "can be reached, when putting the product on the EU market",
    "Recital 62": "distributors and retailers must make sure the way they deal with a product while it is in their "
                  "hands does not spoil its accessibility compliance",
    "Recital 63": "when a seller counts as the manufacturer and takes on its duties: selling a product under its "
                  "own name or brand (white label), or changing a product already on sale in a way that may affect "
                  "compliance",
    "Recital 64": "why accessibility requirements apply only so far as they are not too costly or hard for the "
                  "business (disproportionate burden) and do not force a fundamental change to the product or "
                  "service; authorities need ways to check such exemption claims",
    "Recital 65": "why the Act puts small and medium-sized firms (SMEs) first ('think small first'): light "
                  "conformity checks and safeguards rather than blanket exemptions, limited paperwork, and "
                  "authorities acting in proportion to firm size and small-batch or one-off production",
    "Recital 66": "when a business may meet requirements only partly because full compliance would cost too much "
                  "(disproportionate burden): justified exceptional cases only, otherwise as accessible as "
                  "possible; excess cost weighed against benefit to disabled users; being short of time, know-how "
                  "or priority is no excuse",
    "Recital 67": "how a business judges whether compliance would cost too much: using the criteria in Annex VI, "
                  "writing the assessment down, and service providers redoing it no less often than every five "
                  "years",
    "Recital 68": "a business relying on the too-costly (disproportionate burden) or fundamental-change exception "
                  "must tell the authorities, and hands over its assessment and evidence showing why the product or "
                  "service falls short of full accessibility only when they ask",
    "Recital 69": "self-service terminals such as ticket machines and ATMs: if making every one accessible would "
                  "cost a service provider too much, it must still go as far as it can, e.g. partial accessibility "
                  "on all machines or some fully accessible ones",
    "Recital 70": "why very small businesses (fewer than 10 staff, small turnover) that provide services are "
                  "exempt: compliance and paperwork take a bigger share of their money and people, and even "
                  "assessing the cost would itself be too heavy a burden",
    "Recital 71": "very small businesses (fewer than 10 staff) that make, import or sell products covered by the "
                  "Act get lighter requirements and duties, to cut their paperwork",
    "Recital 72": "all very small businesses (fewer than 10 staff), even exempt ones, are encouraged to make, "
                  "import, sell or provide accessible goods and services so they become more competitive and grow; "
                  "countries should give them guidance and tools for applying the national laws implementing the "
                  "Act",
    "Recital 73": "every business must act responsibly and fully follow the law when it sells products or offers "
                  "services on the EU market",
    "Recital 74": "why products and services following harmonised European standards are presumed to comply, making "
                  "the conformity check easier; the Commission has already asked standards bodies for accessibility "
                  "standards (mandates M/376, behind EN 301 549, M/473 and M/420)",
    "Recital 75": "standards can be challenged: EU Regulation 1025/2012 has a procedure to formally object to a "
                  "harmonised standard thought not to meet the Act's accessibility requirements",
    "Recital 76": "how European standards should be made (market-led, by consensus, in the public interest) and "
                  "when the Commission may instead set technical specifications itself: only with no harmonised "
                  "standard, e.g. the standards process is stuck or too slow, after first trying standardisation",
    "Recital 77": "the Commission should, where it can, bring European disability organisations and other "
                  "interested parties into drafting accessibility standards and technical specifications, so they "
                  "are made efficiently",
    "Recital 78": "why a product has one combined EU declaration of conformity covering all EU laws that apply to "
                  "it: authorities checking products find the information in one place, and businesses have less "
                  "paperwork, as it can bundle the separate declarations",
    "Recital 79": "how a product's compliance is checked: the maker's own in-house production check (Module A) lets "
                  "businesses show, and authorities confirm, that products meet the accessibility rules without an "
                  "excessive burden",
    "Recital 80": "authorities checking products on sale and services also review the business's own assessments, "
                  "including claims that complying would fundamentally change the product or service or cost too "
                  "much, and they work with disabled people and their organisations",
    "Recital 81": "where a service provider puts the information showing its service meets the accessibility rules: "
                  "in its general terms and conditions document or an equivalent, alongside EU consumer rights law",
    "Recital 82": "what the CE mark on a product means: the visible result of the whole compliance checking "
                  "process, under the general EU rules on CE marking; makers should also tell customers affordably "
                  "how accessible their products are",
    "Recital 83": "a manufacturer that puts the CE mark on its product thereby states it meets every accessibility "
                  "requirement that applies to it and accepts full responsibility for that",
    "Recital 84": "countries must run strong, effective checks on products sold in their territory (market "
                  "surveillance) and give the authorities doing those checks enough powers and resources",
    "Recital 85": "countries check that services covered by the Act comply, and act on customer complaints or "
                  "reports about inaccessible services to make sure the business has fixed the problem",
    "Recital 86": "the Commission may, after consulting those concerned, issue voluntary guidance to help the "
                  "authorities checking products and those checking services work together; the Commission and "
                  "countries may pool authorities' resources and know-how",
    "Recital 87": "authorities checking products and services also check how businesses applied the criteria for "
                  "claiming that complying costs too much (Annex VI, disproportionate burden); countries may name a "
                  "specialised body to do these checks, possibly only for this Act",
    "Recital 88": "why there is a safeguard procedure: when countries disagree about one country's action against a "
                  "product failing the accessibility rules, affected parties are told beforehand and authorities "
                  "can act sooner, working with the businesses involved",
    "Recital 89": "if the other countries and the Commission accept that a country's action against a non-compliant "
                  "product is justified, the Commission has no further role, unless the failure stems from flaws in "
                  "harmonised standards or the Commission's technical specifications",
    "Recital 90": "public buying (public procurement): EU procurement law already asks public buyers to consider "
                  "accessibility for disabled people; the Act's requirements bind only products and services it "
                  "covers, but may serve other EU laws, and authorities may demand more than Annex I",
    "Recital 91": "the Act does not change whether accessibility rules in other EU laws are mandatory or optional: "
                  "that stays as those laws set it",
    "Recital 92": "which public purchases the Act applies to: only procurement procedures where the call for "
                  "tenders went out, or the public buyer started the process, after the Act began to apply",
    "Recital 93": "why the Commission can add detail by delegated acts: requirements that only work once specified "
                  "in binding EU rules, how long businesses must be able to name suppliers and customers, criteria "
                  "for disproportionate burden; with expert consultation and equal access for Parliament and "
                  "Council",
    "Recital 94": "the Commission is given implementing powers to adopt technical specifications so the Act is "
                  "applied the same way everywhere, under the EU rules on committee control (Regulation 182/2011)",
    "Recital 95": "countries must have effective ways to enforce the Act, such as later checks by authorities that "
                  "a business's claimed exemption from the accessibility rules is justified; accessibility "
                  "complaints must be decided fairly and within a reasonable time",
    "Recital 96": "why there is a working group: the Commission gathers national authorities and people concerned, "
                  "including disabled people and their organisations, to share information and good practice, give "
                  "advice, apply the rules consistently and watch how the cost and fundamental-change exemptions "
                  "are used",
    "Recital 97": "the Act's enforcement and penalty rules do not apply to public procurement procedures, because "
                  "EU procurement law already has its own remedies; countries must still make EU law effective",
    "Recital 98": "why a company cannot just pay the fine instead of making its products or services accessible: "
                  "penalties must fit the seriousness and circumstances of the breach so they never replace "
                  "actually complying",
    "Recital 99": "countries must offer out-of-court ways to settle disputes (alternative dispute resolution) about "
                  "a product or service not complying with the Act, before anyone goes to a court or administrative "
                  "body",
    "Recital 100": "when countries notify the laws that turn the Act into national law, they should also send "
                   "documents explaining which national provision matches which part of the Directive (explanatory "
                   "documents)",
    "Recital 101": "transition periods and why: services may keep using products already on the market before the "
                   "Act applied for five years unless replaced; costly, long-lived self-service terminals like ATMs "
                   "and ticket machines until worn out, at most 20 years",
    "Recital 102": "the accessibility rules cover products put on sale and services offered once the national laws "
                   "apply (28 June 2025), which also includes secondhand or used goods brought in from outside the "
                   "EU and sold after that date",
    "Recital 103": "the Act respects the EU Charter of Fundamental Rights, in particular disabled people's rights to "
                   "independence, inclusion in society and at work, and taking part in community life (Charter rules "
                   "on non-discrimination, older people and disability)",
    "Recital 104": "why the EU rather than each country makes these rules: removing barriers to selling accessible "
                   "products and services across borders needs the same rules everywhere (subsidiarity), and the Act "
                   "goes no further than needed (proportionality)",
}

__all__ = ["RECITAL_NOTES"]
