"""What each point of the Act's long annex sections is about, in everyday words.

A long annex section is cited point by point (corpus/annex_points.py). The section's own note
(corpus/eaa_plain.py) names everything the section covers, so on each of its passages it says the
same thing: "online banking … e-books … online shops" on the passage about e-books as on the one
about banking, and a question about an online shop matched every passage of Section IV alike. A
passage of points takes the notes of its points instead, and the section's note stays on its opening.

Keyed by the section and the point as the converter labels it ("Annex I Section IV, point (g)"); a
passage's point takes the note of the longest key it starts with, so "(g)(iii)" takes "(g)"'s.
Like every note it is written for the search, never shown or cited, and it states no more than the
point does.
"""
from __future__ import annotations

_SECTION_I = "Annex I Section I, point "
_SECTION_II = "Annex I Section II, point "
_SECTION_III = "Annex I Section III, point "
_SECTION_IV = "Annex I Section IV, point "
_SECTION_VII = "Annex I Section VII, point "

POINT_NOTES: dict[str, str] = {
    # Section I: every product.
    _SECTION_I + "1(a)": "what is printed on the device itself, its labels, instructions and warnings: by sight and by "
                         "touch or sound, in plain words, large clear type with good contrast",
    _SECTION_I + "1(b)": "the product's manual and instructions, in the box, online or on screen: a file a screen reader "
                         "can read, plain words, large type, a text description of every picture and diagram, what the "
                         "controls are, which accessibility features it has and which assistive devices work with it",
    _SECTION_I + "2": "how the device is used, its screens, buttons and controls, must work for people with disabilities",
    _SECTION_I + "2(a)": "the device communicates and is controlled through more than one sense, not only by looking or "
                         "only by listening",
    _SECTION_I + "2(b)": "a device you talk to also works without speaking: voice commands and voice assistants need another way",
    _SECTION_I + "2(c)": "screens with zoom, brightness and contrast settings",
    _SECTION_I + "2(d)": "information not given by colour alone, such as red and green lights or buttons",
    _SECTION_I + "2(e)": "beeps and sounds have a visible or tactile alternative; a clearer picture for people with poor sight",
    _SECTION_I + "2(g)": "audio with volume and speed control and less background noise, clearer sound for hard of hearing users",
    _SECTION_I + "2(h)": "controls usable without precise finger movements, by people with a tremor or one hand, one step at a time",
    _SECTION_I + "2(i)": "no need to reach far or push hard; no flashing that can trigger seizures; privacy when using "
                         "accessibility features such as speech output",
    _SECTION_I + "2(l)": "another way than fingerprint or face recognition to unlock and confirm; the same behaviour every "
                         "time and enough time to act, with time limits users can extend",
    _SECTION_I + "2(n)": "connecting screen readers, braille displays, switches, hearing aids and other assistive technology",
    _SECTION_I + "2(o)(i)": "ticket machines, kiosks, cash machines (ATMs), check-in and payment terminals: speech output, "
                            "a headphone socket, a warning and more time before a time-out, tactile keys with good "
                            "contrast, accessibility features a user can turn on alone, hearing aid support",
    _SECTION_I + "2(o)(ii)": "e-readers must be able to read the text aloud (text to speech)",
    _SECTION_I + "2(o)(iii)": "smartphones, phones and tablets used for calls and messaging: real time text, high quality "
                              "sound, video good enough for sign language, pairing with hearing aids",
    _SECTION_I + "2(o)(iv)": "TV sets, set-top boxes and streaming devices: users can find, switch on and adjust subtitles, "
                             "audio description and sign language",
    _SECTION_I + "3": "the product's help desk, call centre and technical support explain its accessibility and which "
                      "assistive technology works with it, in ways disabled customers can use",
    # Section II: products other than self-service terminals.
    _SECTION_II + "(a)": "the box and packaging: how to open, close, use and recycle it, and that the product has "
                         "accessibility features, readable by everyone, on the box where possible",
    _SECTION_II + "(b)": "instructions for installing, maintaining, storing and disposing of the product: accessible "
                         "files, plain words, large type, a text description of every picture and diagram",
    # Section III: every service.
    _SECTION_III + "(b)": "information about how the service works, its accessibility features and the devices it needs: "
                          "by sight and sound, plain words, accessible files, large type, text descriptions of pictures",
    _SECTION_III + "(c)": "the service's website and mobile app, a webshop, a booking site or a banking app, must work "
                          "for every customer: with a screen reader or the keyboard alone, zoomed, its forms, banners "
                          "and checkout included",
    _SECTION_III + "(d)": "the service's help desk, call centre and customer support explain its accessibility in ways "
                          "disabled customers can use",
    # Section IV: specific services.
    _SECTION_IV + "(a)": "phone, video call and messaging providers: real time text alongside voice calls, video calls "
                         "with text, emergency calls by text and video kept in step",
    _SECTION_IV + "(b)": "TV platforms and streaming services: an accessible programme guide, subtitles, audio "
                         "description, spoken subtitles and sign language passed on intact",
    _SECTION_IV + "(c)": "airlines, long-distance trains, coaches and ferries: information on accessible vehicles, "
                         "stations and assistance, booking and e-tickets, real time travel updates and lifts out of order",
    _SECTION_IV + "(d)": "city, suburban and regional buses, trams and metros: their ticket machines and self-service terminals",
    _SECTION_IV + "(e)": "banks and online banking: logging in, identity checks, electronic signatures, security and "
                         "payments usable by everyone, information in plain language no harder than upper intermediate (B2)",
    _SECTION_IV + "(f)": "e-books and their publishers: text in step with audio, screen readers and read aloud not "
                         "blocked, navigation and structure, accessibility metadata so buyers can find them, copy "
                         "protection (DRM) that does not block accessibility",
    _SECTION_IV + "(g)": "online shops, webshops and marketplaces: information on how accessible the products sold are, "
                         "login, identity checks, security, checkout and payment usable by everyone",
    # Section VII: functional performance, when no other requirement covers a feature.
    _SECTION_VII + "(a)": "a feature must work for blind people, without sight, and for people with low vision",
    _SECTION_VII + "(c)": "a feature must work for colour blind people, and for deaf people, without hearing",
    _SECTION_VII + "(e)": "a feature must work for hard of hearing people, and for people who cannot speak",
    _SECTION_VII + "(g)": "a feature must work for people with little strength or limited use of their hands",
    _SECTION_VII + "(h)": "controls within reach of wheelchair users and short people; no flashing that can trigger seizures",
    _SECTION_VII + "(j)": "a feature must be simple enough for people with learning or cognitive difficulties, and keep "
                          "the user's privacy",
}


def point_notes(section: str, points: list[str]) -> list[str]:
    """The notes of a passage's points, once each and in order. A point takes the note of the longest
    key it starts with ("(g)(iii)" takes "(g)"'s), except a parent's note when a sibling in the
    passage has its own: "2(e)" and "2(f)" packed together take "2(e)"'s, not also the broader "2"'s."""
    matched = [(point, _longest_key(section, point)) for point in points]
    with_own = [point for point, key in matched if key == point]
    notes: list[str] = []
    for point, key in matched:
        if key is None or (key != point and any(own.startswith(key + "(") for own in with_own)):
            continue
        note = POINT_NOTES[f"{section}, point {key}"]
        if note not in notes:
            notes.append(note)
    return notes


def _longest_key(section: str, point: str) -> str | None:
    label = point
    while label:
        if f"{section}, point {label}" in POINT_NOTES:
            return label
        label = label[: label.rfind("(")] if "(" in label else ""
    return None


__all__ = ["POINT_NOTES", "point_notes"]
