"""Everyday words get the texts' words beside them; nothing is replaced, nothing added for free."""
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
