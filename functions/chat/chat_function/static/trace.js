// The trace.html page's own script: a file, not inline, so the Content-Security-Policy allows no inline script.
(async function () {
  "use strict";
  const { Auth, dataTable, facts, searchDebug, time, el, plural, url } = window.GroundchatTranscript;
  const $ = (id) => document.getElementById(id);
  const runId = new URLSearchParams(location.search).get("run") || "";

  async function load() {
    if (!runId) { $("message").textContent = "No run named: open a trace from an answer's details in the chat."; return; }
    const token = await Auth.ready();
    if (!token) { $("sign-in").hidden = false; return; }
    $("sign-in").hidden = true;
    const r = await fetch(url("/api/traces/" + encodeURIComponent(runId)), { headers: Auth.headers() });
    const body = await r.json().catch(() => ({}));
    if (r.status === 401) { Auth.clear(true); $("sign-in").hidden = false; return; }
    if (!r.ok) {
      $("message").className = "error";
      $("message").textContent = r.status === 403 ? "Your account may not read traces (it needs the traces.read permission)."
                                                  : (body.error && body.error.message) || "HTTP " + r.status;
      return;
    }
    draw(body);
  }

  function draw(trace) {
    $("title").textContent = "Trace of run " + trace.run_id;
    document.title = "Trace of run " + trace.run_id + " · " + document.title;
    const steps = Array.isArray(trace.steps) ? trace.steps : (trace.steps && trace.steps.steps) || [];
    const model = steps.filter((s) => s.kind === "model");
    const tools = steps.filter((s) => s.kind === "tool");
    const checks = trace.checks || {};
    $("summary").appendChild(facts([
      ["Question", trace.question],
      ["Outcome", trace.outcome],
      ["Started", moment(trace.started_at)],
      ["Took", trace.duration_ms === undefined ? undefined : trace.duration_ms + " ms"],
      ["Steps", plural(model.length, "model step", "model steps") + ", " + plural(tools.length, "tool call", "tool calls")],
      ["Citations", checks.verified_refs === undefined ? undefined
        : checks.verified_refs + " verified, " + checks.unverified_refs + " unverified"],
      ["Unverified figures", checks.unverified_numbers],
      ["Failure", trace.failure ? [trace.failure.class, trace.failure.reason].filter(Boolean).join(": ") : undefined],
      ["Past conversations", trace.recall ? (trace.recall.search ? "searched: " : "not searched: ") + trace.recall.reason
        + " (recall " + trace.recall.mode + ")" : undefined],
    ]));
    $("message").textContent = plural(steps.length, "step", "steps") + " recorded";
    $("steps").appendChild(dataTable("Every step, in order", [
      { label: "Step", get: (s) => (s.kind === "model" ? "model " + (s.step + 1) + (s.purpose && s.purpose !== "answer" ? " (" + s.purpose + ")" : "") : "tool " + s.name) },
      { label: "Model or arguments", get: (s) => (s.kind === "model" ? s.model : argsText(s.args)) },
      { label: "Tokens in / out", get: (s) => (s.kind === "model" ? (s.input_tokens ?? "—") + " / " + (s.output_tokens ?? "—") : undefined) },
      { label: "Cost", get: (s) => (s.kind === "model" && s.cost !== null && s.cost !== undefined ? s.cost + " USD" : undefined), num: true },
      { label: "Outcome", get: (s) => (s.kind === "model" ? s.stop || (s.failure ? "failed" : "") : s.outcome) },
      { label: "Time", get: (s) => s.latency_ms + " ms", num: true },
    ], steps));
    const searches = tools.filter((s) => s.debug);
    if (searches.length) {
      const box = $("searches");
      box.appendChild(el("h2", null, "How the searches ran"));
      searches.forEach((s, i) => box.appendChild(searchDebug({ args: s.args, debug: s.debug }, i + 1, searches.length)));
    }
  }

  // "2026-12-01 09:14:03 UTC": a trace is read to the second.
  function moment(stamp) {
    const t = time(stamp);
    if (stamp) t.textContent = String(stamp).replace("T", " ").slice(0, 19) + " UTC";
    return t;
  }

  function argsText(args) {
    return Object.entries(args || {}).map(([k, v]) => k + ": " + (v !== null && typeof v === "object" ? "…" : String(v))).join(", ");
  }

  Auth.onChange((what) => { if (what === "signed-in" && !$("sign-in").hidden) load(); });
  load();
})();
