"""Callers come only from verified tokens: dev HS256 locally, OIDC RS256 by JWKS in AWS."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from groundchat.auth.tokens import DEV_AUDIENCE, DEV_ISSUER, TokenVerifier, issue_dev_token


def test_dev_token_round_trip(settings):
    token = issue_dev_token(settings, "alice")
    assert TokenVerifier(settings).verify(token).id == "alice"
    assert TokenVerifier(settings).caller_from_header(f"Bearer {token}").id == "alice"


@pytest.mark.parametrize("header", [None, "", "Basic abc", "Bearer", "Bearer garbage"])
def test_missing_or_malformed_header_is_no_caller(settings, header):
    assert TokenVerifier(settings).caller_from_header(header) is None


def test_expired_wrong_secret_and_unsigned_tokens_are_refused(settings):
    now = int(time.time())
    claims = {"sub": "alice", "iss": DEV_ISSUER, "aud": DEV_AUDIENCE, "iat": now - 100, "exp": now - 10}
    expired = jwt.encode(claims, settings.dev_secret, algorithm="HS256")
    forged = jwt.encode({**claims, "exp": now + 600}, "another-secret-of-sufficient-length-000", algorithm="HS256")
    unsigned = jwt.encode({**claims, "exp": now + 600}, None, algorithm="none")
    verifier = TokenVerifier(settings)
    for token in (expired, forged, unsigned):
        assert verifier.caller_from_header(f"Bearer {token}") is None


class _JWKS:
    def __init__(self):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        self.body = json.dumps({"keys": [{**jwk, "kid": "k1", "alg": "RS256", "use": "sig"}]}).encode()
        self.hits = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.hits += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(outer.body)

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/.well-known/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def token(self, **overrides):
        now = int(time.time())
        claims = {"sub": "user-123", "iss": "https://issuer.test", "aud": "client-1", "iat": now, "exp": now + 600, **overrides}
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": "k1"})


@pytest.fixture
def oidc(settings, monkeypatch):
    jwks = _JWKS()
    monkeypatch.setattr(settings, "auth_mode", "oidc")
    monkeypatch.setattr(settings, "oidc_issuer", "https://issuer.test")
    monkeypatch.setattr(settings, "oidc_audience", "client-1")
    monkeypatch.setattr(settings, "oidc_jwks_url", jwks.url)
    yield jwks
    jwks.server.shutdown()


def test_oidc_token_verified_by_jwks_and_keys_cached(settings, oidc):
    verifier = TokenVerifier(settings)
    assert verifier.verify(oidc.token()).id == "user-123"
    assert verifier.verify(oidc.token(sub="user-456")).id == "user-456"
    assert oidc.hits == 1  # the key set is fetched once and cached


@pytest.mark.parametrize("overrides", [{"iss": "https://evil.test"}, {"aud": "someone-else"}, {"exp": int(time.time()) - 5}])
def test_oidc_wrong_issuer_audience_or_expired_is_refused(settings, oidc, overrides):
    assert TokenVerifier(settings).caller_from_header(f"Bearer {oidc.token(**overrides)}") is None


def test_oidc_alg_is_pinned_against_hs256_confusion(settings, oidc):
    from cryptography.hazmat.primitives import serialization

    public_pem = oidc.key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    now = int(time.time())
    claims = {"sub": "mallory", "iss": "https://issuer.test", "aud": "client-1", "exp": now + 600}
    # Signing with the public key as an HMAC secret (built by hand: PyJWT refuses to make one).
    import base64
    import hashlib
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing_input = f"{b64(json.dumps({'alg': 'HS256', 'typ': 'JWT', 'kid': 'k1'}).encode())}.{b64(json.dumps(claims).encode())}"
    signature = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    forged = f"{signing_input}.{b64(signature)}"
    assert TokenVerifier(settings).caller_from_header(f"Bearer {forged}") is None
