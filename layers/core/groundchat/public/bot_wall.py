"""The bot wall: a Turnstile token checked at siteverify with the secret, once, within a time limit.

Three outcomes, never merged: `human` (the token passed), `not-human` (the verifier answered and
refused it: 403), `unavailable` (the verifier did not answer in time, answered with an error, or
refused our own secret: 503). An outage fails closed, and with another status than a refusal, so a
visitor is never told they are a bot because Cloudflare is down, and a bot never gets in because
it is."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import httpx

from groundchat.json_shapes import as_list

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonValue

log = logging.getLogger("groundchat.public")

# Turnstile tokens are at most this long; a longer one is refused without a call.
MAX_TOKEN_CHARS = 2048
# Error codes that say the verifier (or our configuration of it) failed, not the visitor.
VERIFIER_FAILURES = frozenset({"internal-error", "missing-input-secret", "invalid-input-secret"})


@dataclass(frozen=True)
class HumanCheck:
    outcome: Literal["human", "not-human", "unavailable"]
    reason: str = ""


class TurnstileVerifier:
    def __init__(self, secret: str, verify_url: str, timeout_seconds: float, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.secret = secret
        self.verify_url = verify_url
        self.timeout = httpx.Timeout(timeout_seconds)
        self.transport = transport  # tests may inject one; otherwise the network

    async def verify(self, token: str, remote_ip: str | None = None) -> HumanCheck:
        if not token or len(token) > MAX_TOKEN_CHARS:
            return HumanCheck("not-human", "malformed-token")
        form = {"secret": self.secret, "response": token}
        if remote_ip:
            form["remoteip"] = remote_ip  # helps the verifier judge; sent, never stored
        try:
            async with httpx.AsyncClient(timeout=self.timeout, transport=self.transport) as client:
                answer = await client.post(self.verify_url, data=form)
        except httpx.TimeoutException:
            return self._unavailable("timeout")
        except httpx.HTTPError as exc:
            return self._unavailable(f"unreachable: {type(exc).__name__}")
        if answer.status_code != 200:
            return self._unavailable(f"http {answer.status_code}")
        try:
            body: JsonValue = answer.json()
        except ValueError:
            return self._unavailable("the answer is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("success"), bool):
            return self._unavailable("the answer has no success flag")
        if body["success"]:
            return HumanCheck("human")
        codes = [str(c) for c in as_list(body.get("error-codes"))]
        if VERIFIER_FAILURES & set(codes):
            return self._unavailable(",".join(codes))
        return HumanCheck("not-human", ",".join(codes) or "refused")

    def _unavailable(self, reason: str) -> HumanCheck:
        log.warning("human check unavailable: %s", reason)
        return HumanCheck("unavailable", reason)
