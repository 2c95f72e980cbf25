"""An OpenID provider stand-in on 127.0.0.1 (a random port): discovery, /authorize, /token, /jwks
and /logout, strict where a real provider is strict, for tests and for trying the OIDC sign-in
locally.

- `/authorize` signs in `user` without asking (or answers `?error=access_denied` when `deny` is
  set), only for the registered client and redirect URI, and only with an S256 code challenge.
- `/token` redeems a code once, for the client and redirect URI it was issued to, and only with
  the code verifier whose S256 hash is the challenge; it issues RS256 ID tokens carrying the nonce,
  and refresh tokens; `grant_type=refresh_token` issues a new ID token for the same person.
- `/logout` (the end-session endpoint; Cognito's `logout_uri` is accepted too) sends the browser
  back to a registered sign-out address.

Every token request is recorded in `token_requests`; `down()` makes every endpoint answer 503.
Nothing here is for production: it signs in whoever asks.
"""
from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from groundchat_cli.serving import serve_in_thread

CLIENT_ID = "stub-client"
KEY_ID = "stub-key-1"


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    code_challenge: str
    nonce: str | None
    user: dict[str, Any]


@dataclass
class StubOidcProvider:
    """Start with `start()` (or `with`), stop with `stop()`. `host` is the name the browser and
    the app use for it: "localhost" makes it another site than an app on 127.0.0.1."""

    redirect_uris: list[str]
    sign_out_uris: list[str] = field(default_factory=list)
    client_id: str = CLIENT_ID
    client_secret: str = ""
    user: dict[str, Any] = field(default_factory=lambda: {"sub": "oidc-user-1", "email": "ada@example.com"})
    id_token_seconds: int = 300
    end_session: bool = True
    deny: bool = False
    host: str = "127.0.0.1"
    token_requests: list[dict[str, str]] = field(default_factory=list)
    sign_outs: list[dict[str, str]] = field(default_factory=list)
    is_down: bool = False
    port: int = 0
    key: Any = None
    _codes: dict[str, _Grant] = field(default_factory=dict)
    _refresh_tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    @property
    def issuer(self) -> str:
        return f"http://{self.host}:{self.port}"

    # ---- running ----

    def start(self) -> "StubOidcProvider":
        self.key = self.key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._server, self._thread, _ = serve_in_thread(self._app(), self.port or 0, name="oidc-provider-stub")
        self.port = self._server.config.port
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(5)

    def down(self) -> None:
        self.is_down = True

    def __enter__(self) -> "StubOidcProvider":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- tokens ----

    def id_token(self, nonce: str | None = None, user: dict[str, Any] | None = None, **overrides: Any) -> str:
        """An ID token as /token issues it; `overrides` change or add claims (a test's forgeries)."""
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": self.client_id, "iat": now, "auth_time": now,
                  "exp": now + self.id_token_seconds, "token_use": "id", **(user or self.user)}
        if nonce is not None:
            claims["nonce"] = nonce
        claims.update(overrides)
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": KEY_ID})

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": KEY_ID, "alg": "RS256", "use": "sig"}]}

    def discovery(self) -> dict[str, Any]:
        doc = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
        }
        if self.end_session:
            doc["end_session_endpoint"] = f"{self.issuer}/logout"
        return doc

    # ---- the endpoints ----

    def _app(self) -> FastAPI:
        app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

        @app.middleware("http")
        async def maybe_down(request: Request, call_next):
            if self.is_down:
                return PlainTextResponse("the provider is down (stub)", status_code=503)
            return await call_next(request)

        @app.get("/.well-known/openid-configuration")
        def discovery() -> JSONResponse:
            return JSONResponse(self.discovery())

        @app.get("/jwks")
        def jwks() -> JSONResponse:
            return JSONResponse(self.jwks())

        @app.get("/authorize")
        def authorize(request: Request) -> Response:
            q = request.query_params
            # Never redirect to an address the client did not register: answer here instead.
            if q.get("client_id") != self.client_id or q.get("redirect_uri") not in self.redirect_uris:
                return PlainTextResponse("unknown client or redirect_uri", status_code=400)
            back = q["redirect_uri"]

            def redirect(**params: str) -> RedirectResponse:
                if q.get("state") is not None:
                    params["state"] = q["state"]
                return RedirectResponse(f"{back}?{urlencode(params)}", status_code=302)

            if q.get("response_type") != "code" or "openid" not in (q.get("scope") or "").split():
                return redirect(error="invalid_request", error_description="response_type=code and scope openid are required")
            if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
                return redirect(error="invalid_request", error_description="PKCE with S256 is required")
            if self.deny:
                return redirect(error="access_denied", error_description="The user said no")
            code = secrets.token_urlsafe(24)
            self._codes[code] = _Grant(self.client_id, back, q["code_challenge"], q.get("nonce"), dict(self.user))
            return redirect(code=code)

        @app.post("/token")
        async def token(request: Request) -> JSONResponse:
            form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
            self.token_requests.append(form)
            client_id = form.get("client_id")
            if self.client_secret:
                expected = "Basic " + base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
                if request.headers.get("authorization") != expected:
                    return _oauth_error("invalid_client", "client authentication failed", 401)
                client_id = self.client_id
            if client_id != self.client_id:
                return _oauth_error("invalid_client", "unknown client", 401)
            if form.get("grant_type") == "authorization_code":
                grant = self._codes.pop(form.get("code", ""), None)  # one use, even when refused below
                if grant is None:
                    return _oauth_error("invalid_grant", "unknown or used code")
                if form.get("redirect_uri") != grant.redirect_uri:
                    return _oauth_error("invalid_grant", "redirect_uri differs from the authorization request")
                if _s256(form.get("code_verifier", "")) != grant.code_challenge:
                    return _oauth_error("invalid_grant", "code_verifier does not match the code_challenge")
                refresh = secrets.token_urlsafe(32)
                self._refresh_tokens[refresh] = grant.user
                return self._tokens(grant.user, grant.nonce, refresh)
            if form.get("grant_type") == "refresh_token":
                user = self._refresh_tokens.get(form.get("refresh_token", ""))
                if user is None:
                    return _oauth_error("invalid_grant", "unknown refresh token")
                return self._tokens(user, None, None)
            return _oauth_error("unsupported_grant_type", "only authorization_code and refresh_token")

        @app.get("/logout")
        def logout(request: Request) -> Response:
            q = dict(request.query_params)
            self.sign_outs.append(q)
            back = q.get("post_logout_redirect_uri") or q.get("logout_uri")
            if back not in self.sign_out_uris:
                return PlainTextResponse("unregistered sign-out address", status_code=400)
            return RedirectResponse(back, status_code=302)

        return app

    def _tokens(self, user: dict[str, Any], nonce: str | None, refresh: str | None) -> JSONResponse:
        body = {"id_token": self.id_token(nonce, user), "access_token": secrets.token_urlsafe(24),
                "token_type": "Bearer", "expires_in": self.id_token_seconds}
        if refresh:
            body["refresh_token"] = refresh
        return JSONResponse(body, headers={"cache-control": "no-store"})


def _oauth_error(error: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status)
