from groundchat.corpus.chunk import chunk_id, make_chunk


def test_id_is_a_hash_of_source_section_and_text_and_ref_its_prefix():
    a = make_chunk(source="eaa", section="Article 4(1)", title="t", text="same", url="u")
    b = make_chunk(source="eaa", section="Article 4(1)", title="other title", text="same", url="other")
    c = make_chunk(source="eaa", section="Article 4(2)", title="t", text="same", url="u")
    assert a.id == b.id == chunk_id("eaa", "Article 4(1)", "same")
    assert a.id != c.id
    assert a.ref == a.id[:8] and len(a.ref) == 8
    # The separator keeps ("ab", "c") and ("a", "bc") apart.
    assert chunk_id("docs", "ab", "c") != chunk_id("docs", "a", "bc")
