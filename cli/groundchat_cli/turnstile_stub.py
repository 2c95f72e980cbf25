"""A Turnstile stand-in on 127.0.0.1: the widget's script and the siteverify endpoint, for tests
and for `groundchat serve --public`. What it says is set on the object while it runs:

- `answer`: "yes" (the token passes), "no" (refused: `invalid-input-response`), "down" (HTTP 503),
  "error" (200 with `internal-error`), "slow" (answers after `slow_seconds`, past any sane timeout);
- `widget`: "works" (the script yields a token), "fails" (it calls the error callback), "missing"
  (the script is a 404).

Like the real verifier, each token is good once (a second check gets `timeout-or-duplicate`) and
a wrong secret gets `invalid-input-secret`. Every check is recorded in `checks`."""
from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from groundchat_cli.serving import serve_in_thread

SITE_KEY = "stub-site-key"
SECRET = "stub-secret-0123456789"

WIDGET_SCRIPT = r"""(function () {
  "use strict";
  var mode = __MODE__, siteKey = __SITE_KEY__, widgets = {}, count = 0;
  function issue(w) {
    setTimeout(function () {
      if (!widgets[w.id]) return;
      if (mode !== "works" || w.opts.sitekey !== siteKey) {
        w.box.textContent = "The human check failed (test widget).";
        if (w.opts["error-callback"]) w.opts["error-callback"]("stub-" + (mode !== "works" ? mode : "bad-site-key"));
        return;
      }
      w.token = "stub." + Date.now().toString(36) + "." + Math.random().toString(36).slice(2);
      w.box.textContent = "You are verified as human (test widget).";
      if (w.opts.callback) w.opts.callback(w.token);
    }, 30);
  }
  window.turnstile = {
    render: function (container, opts) {
      var host = typeof container === "string" ? document.querySelector(container) : container;
      var box = document.createElement("p");
      box.className = "stub-turnstile";
      box.textContent = "Checking that you are human (test widget)…";
      host.appendChild(box);
      var id = "stub-" + (++count);
      widgets[id] = { id: id, box: box, opts: opts || {}, token: null };
      issue(widgets[id]);
      return id;
    },
    reset: function (id) { var w = widgets[id]; if (w) { w.token = null; w.box.textContent = "Checking again (test widget)…"; issue(w); } },
    getResponse: function (id) { var w = widgets[id]; return w ? w.token || undefined : undefined; },
    isExpired: function () { return false; },
    remove: function (id) { var w = widgets[id]; if (w) { w.box.remove(); delete widgets[id]; } }
  };
  // As the real loader does with ?onload=NAME: call it once the API exists.
  var src = document.currentScript && document.currentScript.src;
  var named = src && /[?&]onload=([A-Za-z_$][\w$]*)/.exec(src);
  if (named && typeof window[named[1]] === "function") window[named[1]]();
})();
"""


@dataclass
class TurnstileStub:
    answer: str = "yes"
    widget: str = "works"
    slow_seconds: float = 10.0
    site_key: str = SITE_KEY
    secret: str = SECRET
    checks: list[dict] = field(default_factory=list)
    url: str = ""
    _seen: set[str] = field(default_factory=set)
    _server: object = None
    _thread: threading.Thread | None = None

    @property
    def verify_url(self) -> str:
        return f"{self.url}/turnstile/v0/siteverify"

    @property
    def script_url(self) -> str:
        return f"{self.url}/turnstile/v0/api.js?render=explicit"

    def settings_env(self) -> dict[str, str]:
        """The GROUNDCHAT_ variables that point the chat at this stub."""
        return {"GROUNDCHAT_TURNSTILE_SITE_KEY": self.site_key, "GROUNDCHAT_TURNSTILE_SECRET": self.secret,
                "GROUNDCHAT_TURNSTILE_VERIFY_URL": self.verify_url, "GROUNDCHAT_TURNSTILE_SCRIPT_URL": self.script_url}

    # ---- the two endpoints --------------------------------------------------------------------

    async def _verify(self, body: bytes, content_type: str) -> tuple[int, dict]:
        if content_type.startswith("application/json"):
            form = json.loads(body or b"{}")
        else:
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        token, secret = str(form.get("response", "")), str(form.get("secret", ""))
        self.checks.append({"token": token, "remoteip": form.get("remoteip"), "answer": self.answer})
        if self.answer == "down":
            return 503, {"error": "the stub is down"}
        if self.answer == "slow":
            await asyncio.sleep(self.slow_seconds)
        if self.answer == "error":
            return 200, {"success": False, "error-codes": ["internal-error"]}
        if secret != self.secret:
            return 200, {"success": False, "error-codes": ["invalid-input-secret"]}
        if not token:
            return 200, {"success": False, "error-codes": ["missing-input-response"]}
        if token in self._seen:
            return 200, {"success": False, "error-codes": ["timeout-or-duplicate"]}
        self._seen.add(token)
        if self.answer == "no":
            return 200, {"success": False, "error-codes": ["invalid-input-response"]}
        return 200, {"success": True, "error-codes": [], "challenge_ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "hostname": "127.0.0.1"}

    def _script(self) -> str:
        return WIDGET_SCRIPT.replace("__MODE__", json.dumps(self.widget)).replace("__SITE_KEY__", json.dumps(self.site_key))

    def app(self):
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def siteverify(request: Request) -> Response:
            status, body = await self._verify(await request.body(), request.headers.get("content-type", ""))
            return JSONResponse(body, status_code=status)

        async def script(request: Request) -> Response:
            if self.widget == "missing":
                return Response("not here", status_code=404)
            return Response(self._script(), media_type="text/javascript")

        return Starlette(routes=[Route("/turnstile/v0/siteverify", siteverify, methods=["POST"]),
                                 Route("/turnstile/v0/api.js", script, methods=["GET"])])

    # ---- running it ---------------------------------------------------------------------------

    def start(self, port: int = 0) -> "TurnstileStub":
        self._server, self._thread, self.url = serve_in_thread(self.app(), port, name="turnstile-stub")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True  # type: ignore[attr-defined]
            if self._thread is not None:
                self._thread.join(5)
            self._server = None

    def __enter__(self) -> "TurnstileStub":
        return self.start() if not self.url else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
