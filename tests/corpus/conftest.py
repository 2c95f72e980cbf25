from __future__ import annotations

import pytest

from tests.corpus_support import require_corpus


@pytest.fixture(scope="session")
def shared_corpus():
    return require_corpus()
