"""The OIDC sign-in's core: PKCE, sealed cookies, ID-token verification, the provider's failures,
and the settings, with the provider stood in by an httpx transport (no network)."""
from __future__ import annotations

import base64
import json
import re
import time

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from groundchat.auth import sign_in as steps
from groundchat.auth.oidc import (
    IdpUnavailable, InvalidIdToken, OidcProvider, SignInFailed, new_pkce_pair, s256_challenge,
)
from groundchat.auth.oidc_config import OidcConfig, OidcNotConfigured, forget_secret_values, resolve_oidc_config
from groundchat.auth.sessions import (
    RefreshGrant, SignInState, cross_site_reason, read_sign_in_cookie, seal, sign_in_cookie, unseal,
)

ISSUER = "https://idp.test"
CLIENT = "client-1"
SECRET = "s" * 40


def config(**overrides) -> OidcConfig:
    values = dict(issuer=ISSUER, client_id=CLIENT, redirect_url="https://chat.test/auth/callback",
                  sign_out_url="https://chat.test/chat", scopes="openid email", session_secret=SECRET, session_days=30)
    return OidcConfig(**{**values, **overrides})


class FakeIdp:
    """Discovery, keys and a token endpoint behind an httpx transport; `fail` makes it misbehave."""

    def __init__(self, issuer: str = ISSUER, end_session: bool = True):
        self.issuer = issuer
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.end_session = end_session
        self.fail: str | None = None  # "connect" | "500" | "refuse"
        self.requests: list[httpx.Request] = []
        self.token_answer: dict = {}

    def token(self, **overrides) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": CLIENT, "sub": "user-1", "email": "ada@example.com", "iat": now,
                  "exp": now + 600, **overrides}
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "k1"})

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.fail == "connect":
            raise httpx.ConnectError("connection refused", request=request)
        if self.fail == "500":
            return httpx.Response(500, text="oops")
        path = request.url.path.removeprefix(httpx.URL(self.issuer).path.rstrip("/"))
        if path == "/.well-known/openid-configuration":
            doc = {"issuer": self.issuer, "authorization_endpoint": f"{self.issuer}/oauth2/authorize",
                   "token_endpoint": f"{self.issuer}/oauth2/token", "jwks_uri": f"{self.issuer}/jwks"}
            if self.end_session:
                doc["end_session_endpoint"] = f"{self.issuer}/logout"
            return httpx.Response(200, json=doc)
        if path == "/jwks":
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
            return httpx.Response(200, json={"keys": [{**jwk, "kid": "k1", "alg": "RS256", "use": "sig"}]})
        if path == "/oauth2/token":
            if self.fail == "refuse":
                return httpx.Response(400, json={"error": "invalid_grant", "error_description": "code expired"})
            return httpx.Response(200, json=self.token_answer or {"id_token": self.token(), "refresh_token": "r-1"})
        return httpx.Response(404)

    def form(self, path: str = "/oauth2/token") -> dict[str, str]:
        """The form of the last request to `path`."""
        last = [r for r in self.requests if r.url.path == path][-1]
        return dict(httpx.QueryParams(last.content.decode()))

    def provider(self, **overrides) -> OidcProvider:
        return OidcProvider(config(issuer=self.issuer, **overrides), http=httpx.Client(transport=httpx.MockTransport(self.handle)))


@pytest.fixture
def idp() -> FakeIdp:
    return FakeIdp()


# ---- PKCE ----------------------------------------------------------------------------------------

def test_pkce_challenge_is_the_s256_of_the_verifier():
    # RFC 7636 Appendix B's example pair.
    assert s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    verifier, challenge = new_pkce_pair()
    assert 43 <= len(verifier) <= 128 and re.fullmatch(r"[A-Za-z0-9\-._~]+", verifier)
    assert challenge == s256_challenge(verifier) and "=" not in challenge
    assert new_pkce_pair()[0] != verifier


def test_the_authorization_address_carries_state_nonce_and_the_s256_challenge(idp):
    outcome = steps.start(idp.provider())
    query = httpx.URL(outcome.location).params
    assert outcome.location.startswith(f"{ISSUER}/oauth2/authorize?")
    assert query["response_type"] == "code" and query["client_id"] == CLIENT
    assert query["redirect_uri"] == "https://chat.test/auth/callback" and query["scope"] == "openid email"
    assert query["code_challenge_method"] == "S256"
    [cookie] = outcome.cookies
    sealed = read_sign_in_cookie(config(), cookie.value)
    assert query["state"] == sealed.state and query["nonce"] == sealed.nonce
    assert query["code_challenge"] == s256_challenge(sealed.code_verifier)
    assert sealed.code_verifier not in outcome.location  # the verifier never leaves this server and the browser's sealed cookie
    assert (cookie.name, cookie.path, cookie.samesite, cookie.max_age) == ("__Host-groundchat-sign-in", "/", "lax", 600)


# ---- sealed cookies ------------------------------------------------------------------------------

def test_a_tampered_or_foreign_sign_in_cookie_is_refused():
    state = SignInState(state="st", nonce="no", code_verifier="v" * 50)
    good = sign_in_cookie(config(), state).value
    assert read_sign_in_cookie(config(), good) == state
    flipped = good[:40] + ("A" if good[40] != "A" else "B") + good[41:]
    for bad in (flipped, good[:-4], "not-a-cookie", sign_in_cookie(config(session_secret="t" * 40), state).value):
        with pytest.raises(SignInFailed, match="changed or sealed by another server"):
            read_sign_in_cookie(config(), bad)
    with pytest.raises(SignInFailed, match="did not start in this browser"):
        read_sign_in_cookie(config(), None)


def test_an_old_sign_in_cookie_is_refused(monkeypatch):
    sealed = sign_in_cookie(config(), SignInState(state="st", nonce="no", code_verifier="v" * 50)).value
    later = time.time() + 601
    monkeypatch.setattr(time, "time", lambda: later)
    with pytest.raises(SignInFailed, match="older than 10 minutes"):
        read_sign_in_cookie(config(), sealed)


def test_a_refresh_cookie_cannot_pass_for_a_sign_in_cookie():
    refresh = seal(RefreshGrant(refresh_token="r", sub="u"), SECRET, "refresh")
    with pytest.raises(SignInFailed):
        unseal(SignInState, refresh, SECRET, "sign-in", 600)


# ---- the callback --------------------------------------------------------------------------------

def _started(idp) -> tuple[OidcProvider, SignInState, str]:
    provider = idp.provider()
    outcome = steps.start(provider)
    cookie = outcome.cookies[0].value
    return provider, read_sign_in_cookie(provider.config, cookie), cookie


def test_callback_sets_the_session_and_sends_the_verifier(idp):
    provider, started, cookie = _started(idp)
    idp.token_answer = {"id_token": idp.token(nonce=started.nonce), "refresh_token": "r-1"}
    outcome = steps.finish(provider, {"code": "c-1", "state": started.state}, cookie)
    assert idp.form() == {"grant_type": "authorization_code", "code": "c-1", "redirect_uri": "https://chat.test/auth/callback",
                    "code_verifier": started.code_verifier, "client_id": CLIENT}
    names = {c.name: c for c in outcome.cookies}
    assert names["__Host-groundchat-session"].value == idp.token_answer["id_token"]
    assert names["__Host-groundchat-session"].samesite == "strict" and 590 <= names["__Host-groundchat-session"].max_age <= 600
    assert unseal(RefreshGrant, names["__Secure-groundchat-refresh"].value, SECRET, "refresh", 86400).refresh_token == "r-1"
    assert names["__Secure-groundchat-refresh"].path == "/auth"
    assert names["__Host-groundchat-sign-in"].max_age == 0  # one sign-in, one use
    assert outcome.location == "/chat" and outcome.session.user == "user-1" and outcome.session.name == "ada@example.com"


def test_callback_refuses_another_state_a_provider_error_and_a_missing_code(idp):
    provider, started, cookie = _started(idp)
    with pytest.raises(SignInFailed, match="state differs"):
        steps.finish(provider, {"code": "c", "state": "someone-elses"}, cookie)
    with pytest.raises(SignInFailed, match="access_denied: The user said no"):
        steps.finish(provider, {"error": "access_denied", "error_description": "The user said no", "state": started.state}, cookie)
    with pytest.raises(SignInFailed, match="no code"):
        steps.finish(provider, {"state": started.state}, cookie)
    assert not idp.requests or all(r.url.path != "/oauth2/token" for r in idp.requests)


def test_callback_refuses_a_token_with_another_nonce(idp):
    provider, started, cookie = _started(idp)
    idp.token_answer = {"id_token": idp.token(nonce="a-replayed-nonce")}
    with pytest.raises(InvalidIdToken, match="nonce"):
        steps.finish(provider, {"code": "c", "state": started.state}, cookie)
    idp.token_answer = {"id_token": idp.token()}  # no nonce at all
    with pytest.raises(InvalidIdToken, match="nonce"):
        steps.finish(provider, {"code": "c", "state": started.state}, cookie)


def test_a_refused_code_is_a_clear_400(idp):
    provider, started, cookie = _started(idp)
    idp.fail = "refuse"
    with pytest.raises(SignInFailed) as refused:
        steps.finish(provider, {"code": "c", "state": started.state}, cookie)
    assert refused.value.status == 400
    assert refused.value.message == "the sign-in provider refused the sign-in code (invalid_grant: code expired)"


# ---- ID tokens -----------------------------------------------------------------------------------

@pytest.mark.parametrize("overrides, reason", [
    ({"exp": int(time.time()) - 60}, "expired"),
    ({"aud": "another-client"}, "audience"),
    ({"iss": "https://evil.test"}, "issuer"),
    ({"aud": [CLIENT, "another-client"], "azp": "another-client"}, "another client"),
])
def test_expired_wrong_audience_or_issuer_is_refused(idp, overrides, reason):
    provider = idp.provider()
    assert provider.verify_id_token(idp.token())["sub"] == "user-1"
    with pytest.raises(InvalidIdToken, match=f"(?i){reason}"):
        provider.verify_id_token(idp.token(**overrides))


def test_a_token_signed_by_another_key_is_refused_and_keys_are_cached(idp):
    provider = idp.provider()
    provider.verify_id_token(idp.token())
    provider.verify_id_token(idp.token(sub="user-2"))
    assert [r.url.path for r in idp.requests].count("/jwks") == 1
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode({"iss": ISSUER, "aud": CLIENT, "sub": "mallory", "iat": int(time.time()), "exp": int(time.time()) + 600},
                        forger, algorithm="RS256", headers={"kid": "k1"})
    with pytest.raises(InvalidIdToken, match="(?i)signature"):
        provider.verify_id_token(forged)


def test_hs256_signed_with_the_public_key_is_refused(idp):
    from cryptography.hazmat.primitives import serialization

    provider = idp.provider()
    pem = idp.key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    header = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "kid": "k1"}).encode()).rstrip(b"=")
    claims = base64.urlsafe_b64encode(json.dumps({"iss": ISSUER, "aud": CLIENT, "sub": "m", "iat": 1, "exp": 2**31}).encode()).rstrip(b"=")
    import hashlib
    import hmac

    signature = base64.urlsafe_b64encode(hmac.new(pem, header + b"." + claims, hashlib.sha256).digest()).rstrip(b"=")
    with pytest.raises(InvalidIdToken):
        provider.verify_id_token((header + b"." + claims + b"." + signature).decode())


# ---- the provider down ---------------------------------------------------------------------------

@pytest.mark.parametrize("failure", ["connect", "500"])
def test_a_provider_that_is_down_is_a_503_never_a_traceback(idp, failure):
    idp.fail = failure
    provider = idp.provider()
    for call in (lambda: steps.start(provider), lambda: provider.verify_id_token(idp.token()),
                 lambda: provider.exchange_code("c", "v")):
        with pytest.raises(IdpUnavailable) as down:
            call()
        assert down.value.status == 503 and "\n" not in down.value.message
        assert "cannot be reached" in down.value.message or "answered HTTP 500" in down.value.message


def test_sign_out_clears_the_cookies_even_when_the_provider_is_down(idp):
    idp.fail = "connect"
    outcome = steps.sign_out(idp.provider(), "id-token", None)
    assert {c.name for c in outcome.cookies if c.max_age == 0} == {
        "__Host-groundchat-session", "__Secure-groundchat-refresh", "__Host-groundchat-sign-in"}
    assert outcome.location is None


def test_a_discovery_document_for_another_issuer_is_not_used(idp):
    idp.issuer = "https://another-issuer.test"
    with pytest.raises(OidcNotConfigured, match="names issuer"):
        OidcProvider(config(), http=httpx.Client(transport=httpx.MockTransport(idp.handle))).discovery()


# ---- sign-out addresses --------------------------------------------------------------------------

def test_sign_out_uses_the_end_session_endpoint(idp):
    url = httpx.URL(steps.sign_out(idp.provider(), "the-id-token", None).location)
    assert (url.host, url.path) == ("idp.test", "/logout")
    assert dict(url.params) == {"client_id": CLIENT, "post_logout_redirect_uri": "https://chat.test/chat",
                                "id_token_hint": "the-id-token"}


def test_cognito_without_an_end_session_endpoint_gets_its_logout_address():
    cognito = FakeIdp(issuer="https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC", end_session=False)

    def hosted_ui(request: httpx.Request) -> httpx.Response:
        answer = cognito.handle(request)
        if request.url.path.endswith("/openid-configuration"):
            doc = answer.json()
            doc["authorization_endpoint"] = "https://groundchat-dev.auth.eu-west-1.amazoncognito.com/oauth2/authorize"
            return httpx.Response(200, json=doc)
        return answer

    provider = OidcProvider(config(issuer=cognito.issuer), http=httpx.Client(transport=httpx.MockTransport(hosted_ui)))
    assert provider.end_session_url("tok") == (
        "https://groundchat-dev.auth.eu-west-1.amazoncognito.com/logout?client_id=client-1&logout_uri=https%3A%2F%2Fchat.test%2Fchat")
    # Another provider without the endpoint: only this site's cookies are cleared.
    assert FakeIdp(end_session=False).provider().end_session_url("tok") is None


# ---- refresh -------------------------------------------------------------------------------------

def test_renewal_issues_a_new_session_for_the_same_person(idp):
    provider = idp.provider()
    sealed = seal(RefreshGrant(refresh_token="r-1", sub="user-1"), SECRET, "refresh")
    idp.token_answer = {"id_token": idp.token()}
    outcome = steps.renew(provider, sealed)
    assert idp.form() == {
        "grant_type": "refresh_token", "refresh_token": "r-1", "client_id": CLIENT}
    assert outcome.session.signed_in and outcome.session.user == "user-1"
    kept = [c for c in outcome.cookies if c.name == "__Secure-groundchat-refresh"][0]
    assert unseal(RefreshGrant, kept.value, SECRET, "refresh", 86400).refresh_token == "r-1"  # not rotated: kept
    idp.token_answer = {"id_token": idp.token(sub="someone-else")}
    with pytest.raises(SignInFailed, match="someone else") as other:
        steps.renew(provider, sealed)
    assert other.value.status == 401
    idp.fail = "refuse"
    with pytest.raises(SignInFailed) as refused:
        steps.renew(provider, sealed)
    assert refused.value.status == 401 and "invalid_grant" in refused.value.message
    with pytest.raises(SignInFailed) as nothing:
        steps.renew(provider, None)
    assert nothing.value.status == 401


def test_client_secret_goes_in_basic_auth_not_the_form(idp):
    provider = idp.provider(client_secret="sec:ret")
    provider.exchange_code("c", "v")
    request = [r for r in idp.requests if r.url.path == "/oauth2/token"][-1]
    assert request.headers["authorization"] == "Basic " + base64.b64encode(b"client-1:sec%3Aret").decode()
    assert "client_id" not in dict(httpx.QueryParams(request.content.decode()))


# ---- cross-site requests -------------------------------------------------------------------------

@pytest.mark.parametrize("method, origin, header, refused", [
    ("GET", "https://evil.test", None, False),
    ("POST", "https://chat.test", None, False),
    ("POST", "https://CHAT.test:443", None, False),
    ("POST", "https://evil.test", None, True),
    ("POST", "https://chat.test.evil.test", "1", True),  # our header does not excuse a foreign Origin
    ("DELETE", "null", None, True),
    ("POST", None, None, True),
    ("POST", None, "1", False),
    ("POST", "http://chat.test", None, True),  # another scheme is another origin
    ("POST", "https://chat.test:99999", None, True),  # a port out of range is no origin (never a 500)
    ("POST", "https://chat.test:8443", None, True),
    ("POST", "ftp://chat.test", None, True),
])
def test_cookie_signed_changes_must_come_from_this_origin(method, origin, header, refused):
    reason = cross_site_reason(method, origin, "chat.test", header, "https://chat.test")
    assert (reason is not None) is refused
    if refused:
        assert "\n" not in reason


# ---- settings ------------------------------------------------------------------------------------

def test_settings_name_what_is_missing(settings, monkeypatch):
    monkeypatch.setattr(settings, "auth_mode", "oidc")
    monkeypatch.setattr(settings, "oidc_issuer", ISSUER)
    with pytest.raises(OidcNotConfigured, match="GROUNDCHAT_OIDC_CLIENT_ID"):
        resolve_oidc_config(settings)
    monkeypatch.setattr(settings, "oidc_client_id", CLIENT)
    monkeypatch.setattr(settings, "oidc_redirect_url", "https://chat.test/somewhere")
    monkeypatch.setattr(settings, "session_secret", SECRET)
    with pytest.raises(OidcNotConfigured, match="ending in /auth/callback"):
        resolve_oidc_config(settings)
    monkeypatch.setattr(settings, "oidc_redirect_url", "https://api.test/dev/auth/callback")
    monkeypatch.setattr(settings, "session_secret", "short")
    with pytest.raises(OidcNotConfigured, match="at least 32"):
        resolve_oidc_config(settings)
    monkeypatch.setattr(settings, "session_secret", SECRET)
    resolved = resolve_oidc_config(settings)
    # Under an API stage, the chat page and the refresh cookie's path keep the stage.
    assert resolved.sign_out_url == "https://api.test/dev/chat" and resolved.app_path("/chat") == "/dev/chat"
    assert resolved.origin == "https://api.test"


def test_a_secrets_manager_secret_fills_what_the_environment_leaves_empty(settings, monkeypatch):
    import boto3
    from moto import mock_aws

    with mock_aws():
        boto3.client("secretsmanager", region_name=settings.aws_region).create_secret(
            Name="stack/sign-in", SecretString=json.dumps({
                "oidc_client_id": "from-secret", "oidc_redirect_url": "https://api.test/dev/auth/callback",
                "session_secret": "g" * 64, "unrelated": "ignored"}))
        monkeypatch.setattr(settings, "auth_mode", "oidc")
        monkeypatch.setattr(settings, "oidc_issuer", ISSUER + "/")
        monkeypatch.setattr(settings, "oidc_secret_id", "stack/sign-in")
        monkeypatch.setattr(settings, "oidc_client_id", "from-environment")
        try:
            resolved = resolve_oidc_config(settings)
        finally:
            forget_secret_values()
    assert resolved.client_id == "from-environment"  # the environment wins
    assert resolved.redirect_url == "https://api.test/dev/auth/callback" and resolved.session_secret == "g" * 64
    assert resolved.issuer == ISSUER


def test_an_unreadable_secret_is_one_line(settings, monkeypatch):
    from moto import mock_aws

    monkeypatch.setattr(settings, "auth_mode", "oidc")
    monkeypatch.setattr(settings, "oidc_issuer", ISSUER)
    monkeypatch.setattr(settings, "oidc_secret_id", "no/such/secret")
    with mock_aws():
        with pytest.raises(OidcNotConfigured, match="cannot read the sign-in secret 'no/such/secret'") as refused:
            resolve_oidc_config(settings)
    assert "\n" not in str(refused.value)


def test_the_host_header_counts_under_the_scheme_the_request_came_by():
    assert cross_site_reason("POST", "http://127.0.0.1:8000", "127.0.0.1:8000", None, None, "http") is None
    assert cross_site_reason("POST", "https://127.0.0.1:8000", "127.0.0.1:8000", None, None, "http") is not None
    assert cross_site_reason("POST", "http://127.0.0.1:8000", "127.0.0.1:99999", None, None, "http") is not None
