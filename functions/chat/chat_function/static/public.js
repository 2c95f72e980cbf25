/* Public mode on the chat page: the human check an anonymous visitor passes before asking.
 *
 * In private mode this script does nothing. In public mode it renders the Turnstile widget in
 * #human-check and wraps the page's POST /api/chat for visitors (requests without a bearer token):
 * the first question carries a fresh token in the X-Human-Check header; the answer sets a
 * short-lived HttpOnly session cookie, so later questions need no new check until it runs out
 * (the server then says `human-check-required` and the question is sent again with a new token).
 * When the widget cannot give a token, the question is not sent and the page says why. */
(function () {
  "use strict";
  const HEADER = "X-Human-Check";
  const TOKEN_WAIT_MS = 20000;
  const realFetch = window.fetch.bind(window);
  const box = document.getElementById("human-check");
  let config = null;       // the status's human_check, in public mode
  let widgetId = null;
  let token = null;        // a token not yet spent
  let failure = null;      // why the widget cannot give one
  let waiting = [];        // resolvers of questions waiting for a token
  let verified = false;    // the server has (probably) set our session

  function settle() {
    const resolvers = waiting;
    waiting = [];
    for (const done of resolvers) done();
  }

  function loadScript(url) {
    return new Promise((resolve, reject) => {
      window.groundchatHumanCheckLoaded = resolve;
      const script = document.createElement("script");
      script.src = url + (url.includes("?") ? "&" : "?") + "onload=groundchatHumanCheckLoaded";
      script.async = true;
      script.onerror = () => reject(new Error("the human check's script did not load"));
      document.head.appendChild(script);
    });
  }

  function render() {
    box.hidden = false;
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", "Human check");
    widgetId = window.turnstile.render(box, {
      sitekey: config.site_key,
      action: "chat",
      callback: (fresh) => { token = fresh; failure = null; settle(); },
      "expired-callback": () => { token = null; },
      "error-callback": (code) => { token = null; failure = "the human check failed (" + code + ")"; settle(); return true; },
    });
  }

  async function start() {
    let status = {};
    try { status = await (await realFetch(window.GroundchatTranscript.url("/api/chat/status"))).json(); } catch (e) { return; }
    if (status.mode !== "public" || !status.human_check) return;
    config = status.human_check;
    document.body.classList.add("public-mode");
    const style = document.createElement("style");
    // Sharing is for signed-in owners; a visitor's conversation lasts while the page is open.
    style.textContent = "body.public-mode.visitor #share, body.public-mode.visitor #unshare { display: none; }" +
                        "#human-check { margin-top: .75rem; }";
    document.head.appendChild(style);
    try {
      await loadScript(config.script_url);
      render();
    } catch (e) {
      failure = e.message;
      box.hidden = false;
      box.textContent = "The human check could not load, so visitors cannot ask right now. Reload the page to try again.";
      settle();
    }
  }

  function nextToken() {
    if (token) return Promise.resolve(token);
    if (failure) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => { failure = failure || "the human check did not answer"; settle(); }, TOKEN_WAIT_MS);
      waiting.push(() => { clearTimeout(timer); resolve(token); });
    });
  }

  function spend() {
    // A token is good for one check: ask the widget for the next one straight away.
    token = null;
    if (widgetId !== null && window.turnstile) window.turnstile.reset(widgetId);
  }

  function refusal(status, code, message) {
    return new Response(JSON.stringify({ error: { code: code, message: message } }),
                        { status: status, headers: { "content-type": "application/json" } });
  }

  function isVisitorQuestion(input, init) {
    const url = typeof input === "string" ? input : (input && input.url) || "";
    if (!config || !init || (init.method || "GET").toUpperCase() !== "POST") return false;
    if (new URL(url, location.href).pathname !== window.GroundchatTranscript.url("/api/chat")) return false;
    const visitor = !new Headers(init.headers || {}).has("authorization");
    document.body.classList.toggle("visitor", visitor);
    return visitor;
  }

  async function errorCode(response) {
    if (response.ok) return null;
    try { return ((await response.clone().json()).error || {}).code || null; } catch (e) { return null; }
  }

  async function withToken(input, init) {
    const fresh = await nextToken();
    if (!fresh) {
      return refusal(503, "human-check-failed", "Your question was not sent: " + (failure || "the human check gave no answer") +
                     ". Reload the page to try again.");
    }
    spend();
    const headers = new Headers(init.headers || {});
    headers.set(HEADER, fresh);
    return realFetch(input, Object.assign({}, init, { headers: headers, credentials: "same-origin" }));
  }

  window.fetch = async function (input, init) {
    if (!isVisitorQuestion(input, init)) return realFetch(input, init);
    let response = verified ? await realFetch(input, init) : await withToken(input, init);
    let code = await errorCode(response);
    if (code === "human-check-required") {  // the session ran out: one new check, one new try
      verified = false;
      response = await withToken(input, init);
      code = await errorCode(response);
    }
    const checked = ["human-check-required", "not-human", "bot-check-unavailable", "human-check-failed", "rate-limited"];
    if (!checked.includes(code)) verified = true;
    return response;
  };

  start();
})();
