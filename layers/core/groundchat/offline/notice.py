"""What the offline answerer says of itself before the first question: that it is answering, what it
can and cannot do, and the one setting that brings a language model. The page (above the form), the
`groundchat try` command and the JSON answer's debug all show these same words."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.config import Settings

OFFLINE_NOTICE = (
    "The offline answerer is answering: a deterministic stand-in, not a language model. It can compare the "
    "benchmark's context levels and models, list and open runs, rank the axe rules broken, give the WCAG "
    "criterion behind an axe rule, and quote WCAG 2.2 and the European Accessibility Act from a search, each "
    "with its source. It cannot reason past those look-ups, write prose, code or advice of its own, or change "
    "any data. To have a language model answer, set GROUNDCHAT_MODEL (bedrock:<model id> or "
    "openai:<model id>) and start the app again.")


def answerer_notice(settings: Settings) -> str | None:
    """The notice when the offline answerer is the configured model, else None."""
    from groundchat.models.adapters import parse_model_setting

    return OFFLINE_NOTICE if parse_model_setting(settings.model)[0] == "offline" else None


__all__ = ["OFFLINE_NOTICE", "answerer_notice"]
