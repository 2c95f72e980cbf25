// The runs.html page's own script: a file, not inline, so the Content-Security-Policy allows no inline script.
(async function () {
  "use strict";
  const { Auth, dataTable, runColumns, runListAddress, plural, link, time, el, url } = window.GroundchatTranscript;
  const FIELDS = ["model", "context", "task", "label", "rule", "outcome"];
  const $ = (id) => document.getElementById(id);
  const message = $("message");

  // Empty fields (a filter submitted without script) are no filter at all.
  const params = new URLSearchParams(location.search);
  for (const [k, v] of [...params]) if (!v.trim()) params.delete(k);
  const cleaned = params.toString();
  if (cleaned !== location.search.replace(/^\?/, "")) history.replaceState(null, "", cleaned ? "?" + cleaned : location.pathname);

  const runId = params.get("run");
  const compareId = params.get("compare");
  const filter = {};
  for (const name of FIELDS) if (params.get(name)) filter[name] = params.get(name);
  // The order is not a filter: it travels beside it (empty: newest first, the default).
  const ORDERS = { most_violations: "most violations first", fewest_violations: "fewest violations first" };
  const order = params.get("order") || "";

  // The run list's address with the order, as the filter form and the page links build it.
  function listAddress(values, ord) {
    const address = runListAddress(values);
    return ord ? address + (address.includes("?") ? "&" : "?") + "order=" + encodeURIComponent(ord) : address;
  }

  function fail(text) {
    message.className = "error";
    message.textContent = text;
  }

  async function get(address) {
    const r = await fetch(url(address), { headers: Auth.headers() });
    return { ok: r.ok, status: r.status, body: await r.json().catch(() => ({})) };
  }

  function needSignIn() {
    $("sign-in").hidden = false;
    $("filters").hidden = true;
    message.textContent = "";
  }

  // Signed in, but without runs.read: said, rather than an empty table.
  function refused(answer) {
    if (answer.status === 401) { Auth.clear(true); needSignIn(); return true; }
    if (answer.status === 403) {
      $("who").textContent = Auth.user() || "you";
      $("no-permission").hidden = false;
      $("filters").hidden = true;
      return true;
    }
    return false;
  }

  // The filter form builds the same addresses the actions and the tools' links build.
  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    const values = {};
    for (const name of FIELDS) values[name] = $("f-" + name).value;
    location.assign(url(listAddress(values, $("f-order").value)));
  });

  // Each field offers the values the runs have (and keeps the one asked for, even if none has it).
  function offer(values) {
    for (const name of FIELDS) {
      const select = $("f-" + name);
      const have = new Set([...select.options].map((o) => o.value));
      const wanted = [...(values[name] || [])];
      if (filter[name] && !wanted.includes(filter[name])) wanted.unshift(filter[name]);
      for (const v of wanted) if (!have.has(v)) select.appendChild(new Option(v, v));
      select.value = filter[name] || "";
    }
    $("f-order").value = order in ORDERS ? order : "";
  }

  async function load() {
    const token = await Auth.ready();
    if (!token) { needSignIn(); return; }
    $("sign-in").hidden = true;
    if (runId && compareId) return compare(runId, compareId);
    if (runId) return oneRun(runId);
    return list();
  }

  // "Runs 21–40 of 137", "1 run", or that none matches.
  function countText(page) {
    if (!page.total || !page.count) return "No run matches this filter.";
    if (page.total === 1) return "1 run";
    return "Runs " + page.start + "–" + page.end + " of " + page.total;
  }

  function pageAddress(token) {
    const address = listAddress(filter, order);
    return address + (address.includes("?") ? "&" : "?") + "page=" + encodeURIComponent(token);
  }

  function pageLinks(page) {
    const nav = $("pages");
    nav.textContent = "";
    nav.hidden = !(page.previous || page.next);
    if (nav.hidden) return;
    const [back, on] = order === "most_violations" ? ["more violations", "fewer violations"]
      : order === "fewest_violations" ? ["fewer violations", "more violations"] : ["newer runs", "older runs"];
    for (const [token, text, rel] of [[page.previous, "Previous page: " + back, "prev"], [page.next, "Next page: " + on, "next"]]) {
      if (!token) continue;
      const a = nav.appendChild(link(text, pageAddress(token), null, true));
      a.rel = rel;
    }
  }

  async function list() {
    $("filters").hidden = false;
    offer({});
    const shown = Object.entries(filter).map(([k, v]) => k + " = " + v).join(", ");
    const ordered = ORDERS[order] ? "graded runs, " + ORDERS[order] : "newest first";
    const said = shown ? ["Filter: " + shown] : [];
    $("filter").textContent = ORDERS[order] ? [...said, ordered].join("; ") : said[0] || "All runs, newest first";
    const query = new URLSearchParams(filter);
    if (order) query.set("order", order);
    if (params.get("page")) query.set("page", params.get("page"));
    if (params.get("limit")) query.set("limit", params.get("limit"));
    const answer = await get("/api/runs?" + query);
    if (refused(answer)) return;
    if (!answer.ok) { fail(answer.body.error ? answer.body.error.message : "HTTP " + answer.status); return; }
    const page = answer.body;
    offer(page.values || {});
    const runs = page.runs || [];
    $("list-box").textContent = "";
    if (runs.length) {
      const table = dataTable("Runs matching the filter, " + ordered, runColumns, runs, true);
      table.firstChild.id = "list";
      table.querySelector("tbody").id = "rows";
      cards(table.firstChild);
      $("list-box").appendChild(table);
    }
    message.textContent = countText(page);
    pageLinks(page);
  }

  // Names each cell after its column, for the card layout on narrow screens, and states the
  // table's roles so that layout (CSS display: block) doesn't take them from assistive technology.
  function cards(table) {
    const names = Array.from(table.querySelectorAll("thead th")).map((th) => th.textContent);
    table.setAttribute("role", "table");
    for (const group of table.querySelectorAll("thead, tbody")) group.setAttribute("role", "rowgroup");
    for (const tr of table.querySelectorAll("tr")) {
      tr.setAttribute("role", "row");
      Array.from(tr.children).forEach((cell, i) => {
        const header = cell.tagName === "TH";
        cell.setAttribute("role", header ? (cell.scope === "col" ? "columnheader" : "rowheader") : "cell");
        if (!header) cell.dataset.label = names[i] || "";
      });
    }
  }

  async function oneRun(id) {
    const answer = await get("/api/runs/" + encodeURIComponent(id));
    if (refused(answer)) return;
    if (!answer.ok) { fail(answer.body.error ? answer.body.error.message : "HTTP " + answer.status); return; }
    const run = answer.body.run || answer.body;
    $("title").textContent = "Run " + run.run_id;
    document.title = "Run " + run.run_id + " · " + document.title;
    const dl = el("dl", "facts");
    const facts = [
      ["Model", link(run.model, run.model_link, null, true)], ["Context", link(run.context, run.context_link, null, true)],
      ["Task", run.task], ["Label", run.label], ["Outcome", run.outcome], ["Started", time(run.started_at)],
      ["Violations", run.violation_count], ["Failing elements", run.node_count], ["Cost", run.cost_text],
      ["Tokens in / out", run.tokens_in + " / " + run.tokens_out], ["axe-core", run.axe_version],
    ];
    for (const [name, value] of facts) {
      dl.appendChild(el("dt", null, name));
      const dd = dl.appendChild(el("dd"));
      if (value instanceof Node) dd.appendChild(value); else dd.textContent = value === null || value === undefined ? "—" : String(value);
    }
    $("run-facts").appendChild(dl);
    const violations = run.violations || [];
    if (violations.length) {
      $("list-box").appendChild(dataTable("Rules this run broke", [
        { label: "Rule", get: (v) => v.rule_id, href: (v) => v.rule_link },
        { label: "Impact", get: (v) => v.impact },
        { label: "WCAG", get: (v) => (v.wcag_tags || []).join(", ") },
        { label: "Elements", get: (v) => v.node_count, num: true },
        { label: "First failing element", get: (v) => (v.first_nodes && v.first_nodes[0] ? v.first_nodes[0].target : null) },
      ], violations, true));
    }
    message.textContent = violations.length ? plural(violations.length, "rule broken", "rules broken")
                                            : (run.graded === false ? "Not graded: axe did not check this run." : "No rule broken.");
  }

  // ?run=A&compare=B: the two runs as one table, a row per fact, so each pair is read together.
  async function compare(a, b) {
    $("title").textContent = "Two runs compared";
    document.title = "Two runs compared · " + document.title;
    $("filter").textContent = "Comparing " + a + " with " + b;
    const answers = await Promise.all([a, b].map((id) => get("/api/runs/" + encodeURIComponent(id))));
    if (answers.some((x) => refused(x))) return;
    const failed = answers.find((x) => !x.ok);
    if (failed) { fail(failed.body.error ? failed.body.error.message : "HTTP " + failed.status); return; }
    const [runA, runB] = answers.map((x) => x.body.run || x.body);
    $("compared-box").hidden = false;
    [["run-a", runA], ["run-b", runB]].forEach(([id, run]) => {
      const th = $(id);
      th.textContent = "";
      th.appendChild(link(run.run_id, "/chat/runs?run=" + encodeURIComponent(run.run_id), null, true));
    });
    const rules = (run) => (run.violations || []).map((v) => v.rule_id + " (" + v.node_count + ")").join(", ") || "none";
    const facts = [
      ["Model", (r) => r.model], ["Context", (r) => r.context], ["Task", (r) => r.task], ["Label", (r) => r.label],
      ["Outcome", (r) => r.outcome], ["Violations", (r) => r.violation_count], ["Failing elements", (r) => r.node_count],
      ["Cost", (r) => r.cost_text], ["Tokens in", (r) => r.tokens_in], ["Tokens out", (r) => r.tokens_out],
      ["Rules broken (elements)", rules],
    ];
    const rows = $("compared-rows");
    for (const [name, read] of facts) {
      const tr = rows.appendChild(el("tr"));
      const th = tr.appendChild(el("th", null, name));
      th.scope = "row";
      for (const run of [runA, runB]) {
        const value = read(run);
        tr.appendChild(el("td", null, value === null || value === undefined ? "—" : String(value)));
      }
    }
    message.textContent = "2 runs compared";
  }

  // Signed in elsewhere (the chat page, another tab): this tab loads the runs by itself.
  Auth.onChange((what) => { if (what === "signed-in" && !$("sign-in").hidden) load(); });
  load();
})();
