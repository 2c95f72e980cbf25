"""What a reader sees of a search's debug record: how it worked, never an error's text."""
from groundchat.chat.reader_debug import for_reader


def test_the_named_texts_lead_is_shown_and_its_error_is_not():
    shown = for_reader({"legs": {}, "named_text": {"source": "eaa", "lead": ["aaaa1111", "bbbb2222"]}})
    assert shown["named_text"] == {"source": "eaa", "lead": ["aaaa1111", "bbbb2222"]}
    failed = for_reader({"legs": {}, "named_text": {"source": "eaa", "error": "ConnectionError: https://vpc-x.es.amazonaws.com"}})
    assert failed["named_text"] == {"source": "eaa", "failed": True}
    assert "amazonaws" not in str(failed)


def test_a_record_without_a_named_text_shows_none():
    assert "named_text" not in for_reader({"legs": {}, "fusion": "scores+rrf"})
    assert for_reader(None) is None
