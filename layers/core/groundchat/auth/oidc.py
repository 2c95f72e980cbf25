"""The OIDC authorization-code flow with PKCE, against any provider found by discovery.

Framework-free: the chat function's routes call these and turn the errors into pages. Every call
to the provider goes through one httpx client with a short timeout, so "the provider is down"
is always `IdpUnavailable` (503) and never a hang or a traceback. The key set is fetched with
the same client (PyJWT's PyJWKSet parses it): one place for timeouts, and tests can stand the
provider in with an httpx transport.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode, urlsplit

import httpx
import jwt
from pydantic import BaseModel, ValidationError

from groundchat.auth.oidc_config import OidcConfig, OidcNotConfigured

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue

DISCOVERY_PATH = "/.well-known/openid-configuration"
DISCOVERY_TTL_SECONDS = 3600
JWKS_TTL_SECONDS = 3600
# A token signed by a key we have not seen refetches the key set (rotation), at most this often.
JWKS_REFETCH_SECONDS = 60
HTTP_TIMEOUT_SECONDS = 5.0
CLOCK_LEEWAY_SECONDS = 10
# Pinned: the header's `alg` is never trusted to pick the verification (no HS256 with a public key).
ID_TOKEN_ALGORITHMS = ["RS256"]


class SignInFailed(Exception):
    """The flow cannot go on (bad state, refused code, invalid token): one line saying what to do."""

    def __init__(self, message: str, status: int = 400, code: str = "sign-in-failed") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


class IdpUnavailable(SignInFailed):
    """The provider cannot be reached or answered with a server error."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=503, code="sign-in-unavailable")


class InvalidIdToken(SignInFailed):
    def __init__(self, message: str) -> None:
        super().__init__(message, status=401, code="invalid-id-token")


# ---- PKCE (RFC 7636) -------------------------------------------------------------------------

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def s256_challenge(verifier: str) -> str:
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def new_pkce_pair() -> tuple[str, str]:
    """A code verifier (86 characters of the unreserved set, within 43..128) and its S256 challenge."""
    verifier = secrets.token_urlsafe(64)
    return verifier, s256_challenge(verifier)


def new_opaque_value() -> str:
    """A state or a nonce: 256 random bits."""
    return secrets.token_urlsafe(32)


# ---- the provider ----------------------------------------------------------------------------

class Discovery(BaseModel):
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    end_session_endpoint: str | None = None
    revocation_endpoint: str | None = None


class TokenSet(BaseModel):
    id_token: str
    refresh_token: str | None = None


def _said_by_provider(text: object, limit: int = 200) -> str:
    """Text the provider sent, fit for one line on a page: printable and short."""
    clean = "".join(ch for ch in str(text) if ch.isprintable())
    return clean[:limit] + ("…" if len(clean) > limit else "")


def _is_cognito(issuer: str) -> bool:
    host = urlsplit(issuer).hostname or ""
    return host.startswith("cognito-idp.") and host.endswith(".amazonaws.com")


class OidcProvider:
    """One provider and one client of it: discovery, the authorization address, the token
    endpoint (code and refresh grants), ID-token verification and the sign-out address."""

    def __init__(self, config: OidcConfig, http: httpx.Client | None = None) -> None:
        self.config = config
        self.http = http or httpx.Client(timeout=HTTP_TIMEOUT_SECONDS, follow_redirects=False)
        self._lock = threading.Lock()
        self._discovery: tuple[float, Discovery] | None = None
        self._keys: dict[str, jwt.PyJWK] = {}
        self._keys_fetched_at: float | None = None

    # -- discovery --

    def discovery(self) -> Discovery:
        with self._lock:
            if self._discovery and time.monotonic() - self._discovery[0] < DISCOVERY_TTL_SECONDS:
                return self._discovery[1]
        url = self.config.issuer + DISCOVERY_PATH
        body = self._get_json(url, "discovery document")
        try:
            found = Discovery.model_validate(body)
        except ValidationError as exc:
            missing = ", ".join(str(e["loc"][0]) for e in exc.errors())
            raise IdpUnavailable(f"the sign-in provider's discovery document at {url} lacks {missing}") from exc
        if found.issuer.rstrip("/") != self.config.issuer:
            # OpenID Connect Discovery §4.3: a document for another issuer must not be used.
            raise OidcNotConfigured(f"the discovery document names issuer {found.issuer!r}, not GROUNDCHAT_OIDC_ISSUER {self.config.issuer!r}")
        with self._lock:
            self._discovery = (time.monotonic(), found)
        return found

    def _get_json(self, url: str, what: str) -> JsonValue:
        try:
            response = self.http.get(url)
        except httpx.HTTPError as exc:
            raise IdpUnavailable(f"the sign-in provider cannot be reached ({what} at {url}: {type(exc).__name__})") from exc
        if response.status_code != 200:
            raise IdpUnavailable(f"the sign-in provider answered HTTP {response.status_code} for its {what} at {url}")
        try:
            return response.json()
        except ValueError as exc:
            raise IdpUnavailable(f"the sign-in provider's {what} at {url} is not JSON") from exc

    # -- the browser's way there and back --

    def authorization_url(self, state: str, nonce: str, code_challenge: str) -> str:
        endpoint = self.discovery().authorization_endpoint
        query = urlencode({
            "response_type": "code", "client_id": self.config.client_id, "redirect_uri": self.config.redirect_url,
            "scope": self.config.scopes, "state": state, "nonce": nonce,
            "code_challenge": code_challenge, "code_challenge_method": "S256",
        })
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"

    def end_session_url(self, id_token_hint: str | None = None) -> str | None:
        """Where the browser goes to end its session at the provider too, or None when the
        provider offers no such address (then only this site's cookies are cleared)."""
        found = self.discovery()
        if found.end_session_endpoint:
            params = {"client_id": self.config.client_id, "post_logout_redirect_uri": self.config.sign_out_url}
            if id_token_hint:
                params["id_token_hint"] = id_token_hint
            endpoint = found.end_session_endpoint
            return f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(params)}"
        if _is_cognito(self.config.issuer):
            # Cognito's discovery document has no end_session_endpoint; its domain serves /logout.
            domain = urlsplit(found.authorization_endpoint)
            query = urlencode({"client_id": self.config.client_id, "logout_uri": self.config.sign_out_url})
            return f"{domain.scheme}://{domain.netloc}/logout?{query}"
        return None

    # -- the token endpoint --

    def exchange_code(self, code: str, code_verifier: str) -> TokenSet:
        return self._token_request({"grant_type": "authorization_code", "code": code,
                                    "redirect_uri": self.config.redirect_url, "code_verifier": code_verifier},
                                   "the sign-in code")

    def refresh(self, refresh_token: str) -> TokenSet:
        return self._token_request({"grant_type": "refresh_token", "refresh_token": refresh_token}, "the refresh token")

    def _token_request(self, form: dict[str, str], what: str) -> TokenSet:
        endpoint = self.discovery().token_endpoint
        auth: httpx.BasicAuth | None = None
        if self.config.client_secret:
            # client_secret_basic, each part form-encoded first (RFC 6749 §2.3.1).
            auth = httpx.BasicAuth(quote(self.config.client_id, safe=""), quote(self.config.client_secret, safe=""))
        else:
            form = {**form, "client_id": self.config.client_id}
        try:
            # USE_CLIENT_DEFAULT: no authorization, the client has none of its own.
            response = self.http.post(endpoint, data=form, auth=auth or httpx.USE_CLIENT_DEFAULT,
                                      headers={"accept": "application/json"})
        except httpx.HTTPError as exc:
            raise IdpUnavailable(f"the sign-in provider's token endpoint cannot be reached ({type(exc).__name__})") from exc
        if response.status_code >= 500:
            raise IdpUnavailable(f"the sign-in provider's token endpoint answered HTTP {response.status_code}")
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code != 200:
            reason = _said_by_provider(body.get("error", f"HTTP {response.status_code}") if isinstance(body, dict) else response.status_code)
            detail = body.get("error_description") if isinstance(body, dict) else None
            said = f"{reason}: {_said_by_provider(detail)}" if detail else reason
            raise SignInFailed(f"the sign-in provider refused {what} ({said})")
        try:
            return TokenSet.model_validate(body)
        except ValidationError as exc:
            raise SignInFailed("the sign-in provider's token answer has no ID token (is `openid` among the scopes?)",
                               status=502, code="sign-in-provider-error") from exc

    def revoke(self, refresh_token: str) -> None:
        """Best effort at sign-out: a provider that lists a revocation endpoint forgets the token."""
        endpoint = self.discovery().revocation_endpoint
        if not endpoint:
            return
        form = {"token": refresh_token, "token_type_hint": "refresh_token", "client_id": self.config.client_id}
        auth = httpx.BasicAuth(self.config.client_id, self.config.client_secret) if self.config.client_secret else None
        try:
            self.http.post(endpoint, data=form, auth=auth or httpx.USE_CLIENT_DEFAULT)
        except httpx.HTTPError:
            pass  # the cookies are cleared either way; the token expires on its own

    # -- ID tokens --

    def _signing_key(self, token: str) -> jwt.PyJWK:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError as exc:
            raise InvalidIdToken(f"the ID token is malformed ({exc})") from exc
        now = time.monotonic()
        age = None if self._keys_fetched_at is None else now - self._keys_fetched_at
        if age is None or age > JWKS_TTL_SECONDS or (kid not in self._keys and age > JWKS_REFETCH_SECONDS):
            body = self._get_json(self.discovery().jwks_uri, "key set")
            if not isinstance(body, dict):
                raise IdpUnavailable("the sign-in provider's key set is not a JSON object")
            try:
                keys = {k.key_id: k for k in jwt.PyJWKSet.from_dict(body).keys if k.key_id}
            except jwt.PyJWTError as exc:
                raise IdpUnavailable(f"the sign-in provider's key set is unusable ({exc})") from exc
            with self._lock:
                self._keys, self._keys_fetched_at = keys, now
        key = self._keys.get(kid) if isinstance(kid, str) else None
        if key is None:
            raise InvalidIdToken("the ID token is signed with a key the provider does not publish")
        return key

    def verify_id_token(self, token: str, nonce: str | None = None) -> JsonObject:
        """The claims of an ID token this provider signed for this client, unexpired; with
        `nonce`, it must also carry that nonce (the one this browser's sign-in sent)."""
        key = self._signing_key(token)
        try:
            claims = jwt.decode(
                token, key.key, algorithms=ID_TOKEN_ALGORITHMS, audience=self.config.client_id,
                issuer=self.config.issuer, leeway=CLOCK_LEEWAY_SECONDS,
                options={"require": ["exp", "iat", "sub", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise InvalidIdToken(f"the ID token is not valid here ({exc})") from exc
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.config.client_id:
            raise InvalidIdToken("the ID token was issued to another client (azp)")
        if nonce is not None and not hmac.compare_digest(str(claims.get("nonce", "")), nonce):
            raise InvalidIdToken("the ID token's nonce is not the one this sign-in sent")
        return claims


@lru_cache(maxsize=8)
def provider_for(config: OidcConfig) -> OidcProvider:
    """One provider per configuration and process, so discovery and keys are fetched once."""
    return OidcProvider(config)
