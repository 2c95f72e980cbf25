"""Everyday words get the texts' words beside them; nothing is replaced, nothing added for free."""
import pytest

from groundchat.search.vocabulary import with_texts_words


def test_everyday_words_get_the_texts_terms_added():
    assert with_texts_words("what are the fines?") == "what are the fines? (penalties)"
    assert with_texts_words("our focus ring is gone") == "our focus ring is gone (focus visible keyboard focus indicator)"
    assert "text alternative" in with_texts_words("do icons need alt text")
    assert "color" in with_texts_words("links only differ in colour")


def test_a_question_already_in_the_texts_words_is_unchanged():
    assert with_texts_words("What is the contrast ratio for large text?") == "What is the contrast ratio for large text?"


def test_each_added_term_appears_once():
    expanded = with_texts_words("fines, sanctions and more fines")
    assert expanded.count("penalties") == 1


def test_who_a_business_is_in_the_acts_terms():
    assert "obligations of manufacturers" in with_texts_words("we make laptops, what must we do?")
    assert "obligations of service providers" in with_texts_words("our banking app fails with a screen reader")
    assert "obligations of service providers" not in with_texts_words("which app rules apply?")
    # Who checks: products and services are checked by different procedures; both are named.
    assert "market surveillance authorities compliance of services" in with_texts_words("who checks that shops comply?")
    assert "alternative dispute resolution" in with_texts_words("is there an out-of-court way to settle this?")


def test_a_help_desk_and_an_app_are_named_as_the_act_names_them():
    assert "support services" in with_texts_words("what about our help desk?")
    assert "mobile applications" in with_texts_words("does our app need to comply?")
    assert "support services" not in with_texts_words("what about our website?")


def test_what_the_act_requires_is_asked_in_its_words():
    assert "accessibility requirements Annex I" in with_texts_words("What does the Act require of online shops?")
    assert "accessibility requirements" not in with_texts_words("Which products are covered?")


def test_how_developers_describe_failures_is_asked_in_wcags_words():
    assert "text alternative" in with_texts_words("the screen reader reads IMG_4032.jpg on every product")
    assert "non-text contrast" in with_texts_words("the borders of our inputs are pale grey")
    assert "status messages" in with_texts_words("should '12 results' be announced without moving focus?")
    assert "link purpose" in with_texts_words("are 'read more' links ok?")
    assert "pause stop hide" in with_texts_words("our homepage carousel auto-rotates")
    # Nothing of these for a question that names none of them.
    plain = with_texts_words("what contrast do body text and its background need?")
    assert "non-text contrast" not in plain and "status messages" not in plain


def test_a_business_asking_whether_the_act_reaches_it_is_asked_as_its_scope():
    assert "scope applies" in with_texts_words("are plane seat screens caught by the EAA?")
    assert "scope applies" in with_texts_words("which bits of our operation does this law touch? does it reach us?")
    assert "scope applies" not in with_texts_words("the touch targets are small")


@pytest.mark.parametrize(("question", "terms"), [
    ("our bank app logs you out after 10 minutes idle", "timing adjustable"),
    ("the session expires while she types", "timing adjustable"),
    ("the quiz says: when you hear the beep, click go", "sensory characteristics"),
    ("voice control users can't say the button's name", "label in name"),
    ("is a site map needed on a five page site?", "multiple ways"),
    ("show the password rules before people type?", "labels or instructions"),
])
def test_sessions_cues_voice_control_and_ways_to_find_pages_are_asked_in_wcags_words(question, terms):
    assert terms in with_texts_words(question)


def test_a_login_form_or_a_logo_is_not_a_session_that_logs_people_out():
    assert "timing adjustable" not in with_texts_words("our login form and our logo")


def test_long_winded_text_is_asked_as_reading_level():
    assert "reading level" in with_texts_words("our policy pages are long winded, sentences go on forever")


@pytest.mark.parametrize("question", [
    "how does the European Accessibility Act define persons with disabilities?",
    "what counts as a microenterprise?",
    "what does 'consumer' mean in the EAA?",
])
def test_asking_what_a_word_means_asks_for_its_definition(question):
    added = with_texts_words(question).removeprefix(question)
    assert "definition" in added.strip(" ()").split("; ")


def test_a_question_not_about_meaning_gets_no_definition():
    assert "definition" not in with_texts_words("does our shop have to caption its videos?")


@pytest.mark.parametrize(("question", "terms"), [
    ("whats the actual point of the EAA? what problem is it trying to fix", "purpose subject matter objective"),
    ("we're tendering for office printers; can we borrow the act's requirements?", "public procurement contracting authorities"),
    ("our shop is giving e-readers away as a promo. does that count?", "making available on the market supply free of charge"),
    ("one requirement is too costly for us", "disproportionate burden fundamental alteration"),
])
def test_what_the_act_is_for_tenders_giveaways_and_costly_requirements_are_asked_in_its_words(question, terms):
    assert terms in with_texts_words(question)


def test_a_point_in_a_list_or_a_free_trial_is_not_the_acts_purpose_or_a_giveaway():
    assert "purpose" not in with_texts_words("which annex point covers checkout?")
    assert "free of charge" not in with_texts_words("is the free tier of the benchmark enough?")


def test_tooltips_and_click_only_widgets_are_asked_in_wcags_words():
    assert "content on hover or focus" in with_texts_words("a hint bubble pops up over the next field")
    assert "keyboard operable" in with_texts_words("options are divs with onclick; tabbing skips right over them")


def test_a_local_authority_is_a_public_body_not_the_one_that_checks():
    assert "market surveillance" not in with_texts_words("we build the tax return form for a local authority")
    assert "market surveillance" in with_texts_words("which authority checks our products?")
