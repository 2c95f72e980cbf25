"""What a chat process loads at its init so that no question waits for it: the embedding model
(search, recall, the topic gate and the support check share its one session), the topic gate's
example vectors when the offline answerer answers, and the question bank's words. Under SnapStart
all of it is in the snapshot; under `make run` the server is ready once it is done.

A part that cannot load is logged and left to load (and fail) where it is used: the search then
answers `unavailable` with its reason, and a start never fails for it."""
from __future__ import annotations

import logging
import time

from groundchat.config import Settings
from groundchat.search.embeddings import EmbeddingError, preload

log = logging.getLogger("groundchat.warm_up")


def warm_up(settings: Settings) -> dict[str, float]:
    """Loads what the first answer would; returns each part's time in ms (absent when skipped)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    try:
        preload(settings.embedding_model)
    except EmbeddingError as exc:
        log.warning("embedding model unavailable: %s", exc)
        return timings
    timings["model"] = _ms(started)
    if settings.model == "offline":
        from groundchat.offline.topic_neighbours import local_topic_neighbours

        topic = local_topic_neighbours(settings.embedding_model)
        if topic is not None:
            started = time.perf_counter()
            topic.margin("warm up")  # embeds the gate's examples once, as the first question would
            timings["topic_examples"] = _ms(started)
    started = time.perf_counter()
    from groundchat.search.question_words import bank_words

    bank_words()
    timings["question_words"] = _ms(started)
    hand_back_freed_memory()
    log.debug("warmed up at init: %s", {k: round(v) for k, v in timings.items()})
    return timings


def hand_back_freed_memory() -> bool:
    """Returns the heap glibc keeps after frees to the system (malloc_trim). Loading the model, its
    tokenizer and the examples' vectors, and under `make run` the ingest before the server starts,
    free far more than they keep; glibc holds the freed pages for reuse, and the process would carry
    them as resident memory for its life (and into a SnapStart snapshot). False where there is no
    glibc (macOS, musl): nothing to do there."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        trim = getattr(libc, "malloc_trim", None)
    except OSError:
        return False
    if trim is None:
        return False
    trim(0)
    # From now on a block over 128 KiB (the model's tensors, the search's score arrays) is mapped
    # and unmapped on its own. Left dynamic, glibc raises the threshold after the first such free
    # and those blocks come from the heap, which keeps them once freed: the chat's first answer
    # then added 90 MiB, 60-70 of them free. Set here, after the loading, not at the process's start
    # (the template's MALLOC_MMAP_THRESHOLD_ does that for the chat function, which never ingests):
    # under `make run` the ingest before it, whose large batches map and unmap their every tensor
    # with it, took minutes longer.
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    return True


_M_MMAP_THRESHOLD = -3  # glibc's malloc.h
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value, kept fixed


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
