from __future__ import annotations

from groundchat.search.embedding_windows import windows


def _words(texts):
    return [len(t.split()) for t in texts]


def test_a_text_within_the_budget_is_one_window_itself():
    text = "Annex I Section IV\nServices must be perceivable. They must be operable."
    assert windows(text, _words, 50) == [text]


def test_windows_repeat_the_title_take_whole_sentences_in_order_and_stay_within_the_budget():
    sentences = [f"Point {i} says {'very ' * (i % 4)}much about duty {i}." for i in range(30)]
    text = "Annex I Section IV (services)\n" + " ".join(sentences[:15]) + "\n" + " ".join(sentences[15:])
    out = windows(text, _words, 40)
    assert len(out) > 3
    title_words = 5
    for window in out:
        title, _, body = window.partition("\n")
        assert title == "Annex I Section IV (services)"
        assert title_words + len(body.split()) <= 40
    # Every sentence exactly once, in the order of the text: nothing lost, nothing torn.
    bodies = " ".join(w.partition("\n")[2] for w in out)
    assert bodies == " ".join(sentences)


def test_clauses_of_a_list_end_a_piece_as_sentences_do():
    text = "Article 4\nproducts shall: (a) be perceivable; (b) be operable; (c) be understandable; (d) be robust."
    out = windows(text, _words, 6)
    assert [w.partition("\n")[2] for w in out] == [
        "products shall:", "(a) be perceivable;", "(b) be operable;", "(c) be understandable;", "(d) be robust."]


def test_a_sentence_over_the_budget_is_a_window_of_its_own_and_is_not_cut():
    long_sentence = " ".join(["word"] * 30) + "."
    text = f"Title\nShort one. {long_sentence} Short two."
    out = windows(text, _words, 10)
    assert out == ["Title\nShort one.", f"Title\n{long_sentence}", "Title\nShort two."]


def test_a_text_of_one_line_has_no_title_to_repeat():
    text = "First sentence here. Second sentence here. Third sentence here."
    assert windows(text, _words, 6) == ["First sentence here. Second sentence here.", "Third sentence here."]
