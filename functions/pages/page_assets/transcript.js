// Drawing a transcript from frames: one renderer for the live chat, a reopened conversation and
// the shared-conversation page, so a shared answer looks exactly as it did when it streamed.
//
// Safety: every piece of model text, tool result and corpus text reaches the page through
// textContent or a text node; nothing here assigns innerHTML, and a link's address is used only
// when it is a path of this site or an http(s) address.
(function (global) {
  "use strict";

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // Where this site lives: "" when served at the host's root, "/Prod" behind an API Gateway
  // stage. Every page is served under <base>/chat, so the page's own address says it; the server
  // never has to know the stage. Every fetch and link of the pages goes through url().
  const BASE = (function () {
    const path = global.location ? global.location.pathname : "";
    const at = path.search(/\/chat(\/|$)/);
    return at > 0 ? path.slice(0, at) : "";
  })();

  // A path of this site ("/api/chat", "/chat/runs?…") under the site's base; anything else as it is.
  function url(path) {
    return typeof path === "string" && path.startsWith("/") && !path.startsWith("//") && !path.startsWith(BASE + "/") ? BASE + path : path;
  }

  // A path of this site ("/chat/runs?…") or an http(s) address; anything else (javascript:,
  // data:, "//elsewhere") is refused and the name is shown as text.
  function safeHref(address) {
    if (typeof address !== "string" || !address) return null;
    if (address.startsWith("/") && !address.startsWith("//") && !address.startsWith("/\\")) return url(address);
    try {
      const parsed = new URL(address);
      return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
    } catch (e) {
      return null;
    }
  }

  // A link opened in a new tab (the conversation stays where it is), or the text alone when the
  // address is not one we open.
  function link(text, url, cls, sameTab) {
    const href = safeHref(url);
    if (!href) return el("span", cls, text);
    const a = el("a", cls, text);
    a.href = href;
    if (!sameTab) {
      a.target = "_blank";
      a.rel = "noopener";
    }
    return a;
  }

  function shown(value) {
    return value === null || value === undefined || value === "" ? "—" : String(value);
  }

  function percent(fraction) {
    if (typeof fraction !== "number") return shown(fraction);
    return (Math.round(fraction * 1000) / 10) + "%";
  }

  function day(stamp) {
    return stamp ? String(stamp).slice(0, 10) : "";
  }

  function time(stamp) {
    const t = el("time", "date", day(stamp) || "—");
    if (stamp) t.dateTime = String(stamp);
    return t;
  }

  // Landmark names must be unique on a page: a second "Runs" table becomes "Runs (2)".
  const usedLabels = new Map();
  function uniqueLabel(label) {
    const n = (usedLabels.get(label) || 0) + 1;
    usedLabels.set(label, n);
    return n === 1 ? label : label + " (" + n + ")";
  }

  // A table (or code) scrolls inside its own box, never the page: a focusable, named region, so
  // it can be scrolled with the keyboard too.
  function scrollBox(child, label) {
    const box = el("div", "scroll-box");
    box.tabIndex = 0;
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", uniqueLabel(label || "Table"));
    box.appendChild(child);
    return box;
  }

  // ---- signing in: the token lives in this tab (sessionStorage) and is lent to our other tabs --

  const TOKEN_KEY = "groundchat-token";
  let memoryToken = "";
  const authListeners = [];
  let waitingForToken = null;
  const channel = typeof global.BroadcastChannel === "function" ? new global.BroadcastChannel("groundchat-auth") : null;
  // An OIDC sign-in lives in HttpOnly cookies the page cannot read: /auth/session says who is
  // signed in and until when. Auth.token() then answers COOKIE_SESSION (a marker, never a
  // credential) and requests carry no bearer header, only the one that marks them as our page's.
  const COOKIE_SESSION = "cookie-session";
  let cookieSession = null;
  // false where /auth/session does not exist: the page's `data-sign-in` says so (a dev deployment
  // says "dev"), so no page asks for a route that answers 404; null (ask once) where it is unsaid.
  let sessionsOffered = (function () {
    const said = global.document && global.document.body ? global.document.body.getAttribute("data-sign-in") : null;
    return said === null || said === "" || said === "oidc" ? null : false;
  })();

  function tabStorage() {
    try { return global.sessionStorage; } catch (e) { return null; }
  }

  const Auth = {
    token() {
      const s = tabStorage();
      return (s && s.getItem(TOKEN_KEY)) || memoryToken || (cookieSession ? COOKIE_SESSION : "");
    },
    set(token, quiet) {
      memoryToken = token;
      const s = tabStorage();
      if (s) s.setItem(TOKEN_KEY, token);
      if (!quiet && channel) channel.postMessage({ type: "signed-in" });
    },
    clear(quiet) {
      memoryToken = "";
      cookieSession = null;
      const s = tabStorage();
      if (s) s.removeItem(TOKEN_KEY);
      if (!quiet && channel) channel.postMessage({ type: "signed-out" });
    },
    // The user a token names (its `sub`), for display only: the server verifies every request.
    user(token) {
      const t = token === undefined ? Auth.token() : token;
      if (t === COOKIE_SESSION) return cookieSession ? String(cookieSession.name || cookieSession.user || "") : "";
      try {
        const part = t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
        return String(JSON.parse(atob(part)).sub || "");
      } catch (e) {
        return "";
      }
    },
    headers(extra) {
      const h = Object.assign({}, extra || {});
      const t = Auth.token();
      if (t === COOKIE_SESSION) h["x-groundchat-csrf"] = "1";
      else if (t) h.authorization = "Bearer " + t;
      return h;
    },
    // What /auth/session says (null where this site has no OIDC sign-in; with `error` while the
    // provider cannot be reached), kept for token()/user().
    session() {
      if (sessionsOffered === false) return Promise.resolve(null);
      return fetch(url("/auth/session"), { cache: "no-store" })
        .then((r) => { if (r.status === 404) sessionsOffered = false; return r.ok || r.status === 503 ? r.json() : null; })
        .then((s) => { if (s) Auth.useSession(s); return s; }, () => null);
    },
    useSession(s) { sessionsOffered = true; cookieSession = s && s.signed_in ? s : null; },
    noSessions() { sessionsOffered = false; },
    // This tab's token, or one another open tab of this site lends it (a run list opened in a
    // new tab starts with an empty sessionStorage); "" when nobody is signed in.
    ready(waitMs) {
      const t = Auth.token();
      if (t) return Promise.resolve(t);
      const lent = !channel ? Promise.resolve("") : new Promise((resolve) => {
        const timer = setTimeout(() => { waitingForToken = null; resolve(""); }, waitMs || 400);
        waitingForToken = (token) => { clearTimeout(timer); waitingForToken = null; Auth.set(token, true); resolve(token); };
        channel.postMessage({ type: "token?" });
      });
      // No tab lent a token: this browser may still hold an OIDC session cookie.
      return lent.then((token) => token || Auth.session().then(() => Auth.token()));
    },
    onChange(fn) { authListeners.push(fn); },
  };

  if (channel) {
    channel.onmessage = (event) => {
      const m = event.data || {};
      if (m.type === "token?" && Auth.token()) channel.postMessage({ type: "token", token: Auth.token() });
      else if (m.type === "token" && typeof m.token === "string" && waitingForToken) waitingForToken(m.token);
      else if (m.type === "signed-out" && Auth.token()) { Auth.clear(true); authListeners.forEach((fn) => fn("signed-out")); }
      else if (m.type === "signed-in") authListeners.forEach((fn) => fn("signed-in"));
    };
  }

  // ---- Markdown, a safe subset: paragraphs, **strong**, *emphasis* or _emphasis_, `code`, lists, code blocks,
  // tables, quotes, [text](address), bare http(s) addresses and citations [0123abcd]. Built with
  // DOM calls only. -------

  const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const FENCE = /^\s*```/;
  const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
  const QUOTE = /^\s{0,3}>\s?(.*)$/;
  const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
  const INLINE = /`([^`]+)`|\[([0-9a-f]{8})\]|\*\*([^\s*](?:[\s\S]*?[^\s])?)\*\*|\*([^\s*](?:[^*]*?[^\s*])?)\*|\[([^\[\]]+)\]\(([^()\s]+)\)|(https?:\/\/[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'"])|(?<![\w_])_([^\s_](?:[^_]*?[^\s_])?)_(?![\w_])/g;

  function inline(parent, text, cite) {
    let last = 0;
    INLINE.lastIndex = 0;
    const matches = [...text.matchAll(INLINE)];
    for (const m of matches) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      if (m[1] !== undefined) parent.appendChild(el("code", null, m[1]));
      else if (m[2] !== undefined) parent.appendChild(cite ? cite(m[2]) : document.createTextNode(m[0]));
      else if (m[3] !== undefined) inline(parent.appendChild(el("strong")), m[3], cite);
      else if (m[4] !== undefined) inline(parent.appendChild(el("em")), m[4], cite);
      else if (m[5] !== undefined) {
        const href = safeHref(m[6]);
        if (href) parent.appendChild(link(m[5], href));
        else parent.appendChild(document.createTextNode(m[0]));
      } else if (m[7] !== undefined) {
        parent.appendChild(link(m[7], m[7]));
      } else if (m[8] !== undefined) {  // _emphasis_, never inside a word (snake_case stays as it is)
        inline(parent.appendChild(el("em")), m[8], cite);
      }
      last = m.index + m[0].length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
    return parent;
  }

  function startsBlock(lines, i) {
    const line = lines[i];
    return FENCE.test(line) || HEADING.test(line) || LIST_ITEM.test(line) || QUOTE.test(line) || isTableStart(lines, i);
  }

  function isTableStart(lines, i) {
    return i + 1 < lines.length && lines[i].includes("|") && lines[i + 1].includes("|") && TABLE_SEP.test(lines[i + 1]);
  }

  function tableCells(line) {
    let s = line.trim();
    if (s.startsWith("|")) s = s.slice(1);
    if (s.endsWith("|")) s = s.slice(0, -1);
    return s.split("|").map((c) => c.trim());
  }

  function mdTable(lines, i, cite) {
    const table = el("table", "md-table");
    const head = el("tr");
    for (const cell of tableCells(lines[i])) {
      const th = inline(el("th"), cell, cite);
      th.scope = "col";
      head.appendChild(th);
    }
    table.appendChild(el("thead")).appendChild(head);
    const body = table.appendChild(el("tbody"));
    i += 2;
    while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
      const tr = body.appendChild(el("tr"));
      for (const cell of tableCells(lines[i])) tr.appendChild(inline(el("td"), cell, cite));
      i += 1;
    }
    return [scrollBox(table, "Table in the answer"), i];
  }

  function mdList(lines, i, cite) {
    const out = document.createDocumentFragment();
    const stack = [];
    let lastItem = null;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) {  // a blank line inside a list continues it when an item follows
        let j = i + 1;
        while (j < lines.length && !lines[j].trim()) j += 1;
        if (j < lines.length && LIST_ITEM.test(lines[j])) { i = j; continue; }
        break;
      }
      const m = LIST_ITEM.exec(line);
      if (m) {
        const indent = m[1].replace(/\t/g, "    ").length;
        const ordered = /\d/.test(m[2]);
        while (stack.length && indent < stack[stack.length - 1].indent) stack.pop();
        let top = stack[stack.length - 1];
        if (!top || (indent > top.indent && lastItem)) {
          const list = el(ordered ? "ol" : "ul");
          const start = parseInt(m[2], 10);
          if (ordered && start !== 1) list.start = start;
          (top ? lastItem : out).appendChild(list);
          top = { indent, list };
          stack.push(top);
        }
        lastItem = inline(el("li"), m[3], cite);
        top.list.appendChild(lastItem);
      } else if (/^\s/.test(line) && lastItem) {
        inline(lastItem, " " + line.trim(), cite);
      } else {
        break;
      }
      i += 1;
    }
    return [out, i];
  }

  function renderMarkdown(text, cite) {
    const out = document.createDocumentFragment();
    const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim() || RULE.test(line)) { i += 1; continue; }
      if (FENCE.test(line)) {
        const code = [];
        i += 1;
        while (i < lines.length && !FENCE.test(lines[i])) code.push(lines[i++]);
        i += 1;
        const pre = el("pre");
        pre.appendChild(el("code", null, code.join("\n")));
        out.appendChild(scrollBox(pre, "Code in the answer"));
        continue;
      }
      const heading = HEADING.exec(line);
      if (heading) {
        out.appendChild(el("p", "md-heading")).appendChild(inline(el("strong"), heading[1], cite));
        i += 1;
        continue;
      }
      if (isTableStart(lines, i)) {
        const [box, next] = mdTable(lines, i, cite);
        out.appendChild(box);
        i = next;
        continue;
      }
      if (LIST_ITEM.test(line)) {
        const [list, next] = mdList(lines, i, cite);
        out.appendChild(list);
        i = next;
        continue;
      }
      const quoted = [];
      while (i < lines.length && QUOTE.test(lines[i])) quoted.push(QUOTE.exec(lines[i++])[1]);
      if (quoted.length) {
        const quote = out.appendChild(el("blockquote"));
        quote.appendChild(paragraph(quoted, cite));
        continue;
      }
      const para = [line];
      i += 1;
      while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) para.push(lines[i++]);
      out.appendChild(paragraph(para, cite));
    }
    return out;
  }

  function paragraph(lines, cite) {
    const p = el("p");
    lines.forEach((line, n) => {
      if (n) p.appendChild(el("br"));
      inline(p, line.trim(), cite);
    });
    return p;
  }

  // ---- views (show_view) ----------------------------------------------------------------------

  // What a view's form may run, and how its address is built: the page's copy of
  // groundchat.views.actions.page_registry() (a test keeps the two equal). The model only names an
  // action and picks values; the address comes from here.
  const VIEW_ACTIONS = {"open-runs": {"path": "/chat/runs", "params": {"model": "model", "context": "context", "task": "task", "label": "label"}}, "compare-runs": {"path": "/chat/runs", "params": {"run_a": "run", "run_b": "compare"}}};

  function actionAddress(actionName, values) {
    const action = VIEW_ACTIONS[actionName];
    if (!action) return null;
    const query = new URLSearchParams();
    for (const [field, param] of Object.entries(action.params)) {
      if (values[field]) query.set(param, values[field]);
    }
    const qs = query.toString();
    return qs ? action.path + "?" + qs : action.path;
  }

  let viewCount = 0;

  function shownValue(value, format, unit) {
    if (value === null || value === undefined) return "—";
    let text = String(value);
    if (format === "percent" || unit === "%") text += "%";
    else if (format === "usd") text = "$" + text;
    if (unit && unit !== "%") text += " " + unit;
    return text;
  }

  function drawStats(part) {
    const dl = el("dl", "view-stats");
    for (const item of part.items || []) {
      dl.appendChild(el("dt", null, item.label));
      dl.appendChild(el("dd", null, shownValue(item.value, item.format, item.unit)));
    }
    return dl;
  }

  function drawTable(caption, columns, rows) {
    const table = el("table", "view-table");
    table.appendChild(el("caption", null, caption));
    const head = el("tr");
    for (const c of columns) {
      const th = el("th", null, c);
      th.scope = "col";
      head.appendChild(th);
    }
    table.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    for (const row of rows) {
      const tr = el("tr");
      row.forEach((cell, i) => {
        // The first cell names the row: a row header, so each figure is read with its row.
        const figure = typeof cell === "number" || (typeof cell === "string" && /^\$?[\d.,]+%?$/.test(cell));
        const td = el(i === 0 ? "th" : "td", figure && i > 0 ? "num" : null, shownValue(cell));
        if (i === 0) td.scope = "row";
        tr.appendChild(td);
      });
      body.appendChild(tr);
    }
    table.appendChild(body);
    return scrollBox(table, caption);
  }

  function drawAlert(part) {
    const box = el("div", "view-alert " + part.level);
    // error interrupts; info and warning wait their turn. The word says the level without colour.
    box.setAttribute("role", part.level === "error" ? "alert" : "status");
    box.appendChild(el("strong", null, { info: "Note: ", warning: "Warning: ", error: "Error: " }[part.level] || ""));
    box.appendChild(document.createTextNode(part.text));
    return box;
  }

  function drawBarChart(part) {
    const fig = el("figure", "view-bars");
    fig.appendChild(el("figcaption", null, part.title + (part.unit ? " (" + part.unit + ")" : "")));
    const bars = part.bars || [];
    const max = Math.max(...bars.map((b) => b.value), 0) || 1;
    const ns = "http://www.w3.org/2000/svg";
    const rowHeight = 24, labelWidth = 160, width = 480;
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 " + width + " " + rowHeight * bars.length);
    svg.setAttribute("width", "100%");
    // The picture repeats the table below for sighted readers; assistive technology reads the table.
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    bars.forEach((b, i) => {
      const y = i * rowHeight;
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", "0");
      label.setAttribute("y", String(y + 16));
      label.textContent = b.label;
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", String(labelWidth));
      rect.setAttribute("y", String(y + 4));
      rect.setAttribute("height", "16");
      rect.setAttribute("width", String(((width - labelWidth - 70) * b.value) / max));
      rect.setAttribute("fill", "#146c43");
      const value = document.createElementNS(ns, "text");
      value.setAttribute("x", String(labelWidth + ((width - labelWidth - 70) * b.value) / max + 6));
      value.setAttribute("y", String(y + 16));
      value.textContent = shownValue(b.value, null, part.unit === "%" ? "%" : null);
      svg.append(label, rect, value);
    });
    fig.appendChild(svg);
    fig.appendChild(drawTable(part.title, ["Item", part.unit || "Value"],
      bars.map((b) => [b.label, part.unit === "%" ? b.value + "%" : b.value])));
    return fig;
  }

  function drawForm(part) {
    if (!VIEW_ACTIONS[part.action]) return el("p", "error", "This form's action is not available on this page.");
    const action = VIEW_ACTIONS[part.action];
    const form = el("form", "view-form");
    // Without script the browser builds the same address from action, method and the names, in a
    // new tab as well, so the conversation stays open.
    form.action = url(action.path);
    form.method = "get";
    form.target = "_blank";
    const n = viewCount;
    if (part.title) form.appendChild(el("p", "view-form-title", part.title));
    for (const field of part.fields || []) {
      const id = "view" + n + "-" + field.name;
      const label = el("label", null, field.label);
      label.htmlFor = id;
      const select = el("select");
      select.id = id;
      select.name = action.params[field.name] || field.name;
      select.dataset.field = field.name;
      for (const o of field.options || []) {
        const option = el("option", null, o.label);
        option.value = o.value;
        select.appendChild(option);
      }
      const row = el("p");
      row.append(label, " ", select);
      form.appendChild(row);
    }
    const button = el("button", null, part.submit_label || "Open");
    button.type = "submit";
    form.appendChild(button);
    form.appendChild(el("span", "hint", " (opens the run list in a new tab)"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const values = {};
      for (const select of form.querySelectorAll("select")) values[select.dataset.field] = select.value;
      const address = actionAddress(part.action, values);
      if (address) global.open(url(address), "_blank", "noopener");
    });
    return form;
  }

  function drawView(view) {
    viewCount += 1;
    const section = el("section", "view");
    const heading = el("h2", null, view.title);  // under the page's h1
    heading.id = "view-title-" + viewCount;
    section.setAttribute("aria-labelledby", heading.id);
    section.appendChild(heading);
    for (const part of view.parts || []) {
      if (part.type === "stats") section.appendChild(drawStats(part));
      else if (part.type === "table") section.appendChild(drawTable(part.caption, part.columns, part.rows));
      else if (part.type === "alert") section.appendChild(drawAlert(part));
      else if (part.type === "bar_chart") section.appendChild(drawBarChart(part));
      else if (part.type === "form") section.appendChild(drawForm(part));
    }
    return section;
  }

  // ---- tool results: the evidence, drawn as compact tables whose names link to the run list ---

  const SOURCE_NAMES = { wcag22: "WCAG 2.2", eaa: "European Accessibility Act", docs: "benchmark docs" };

  function sourceLabel(source, section) {
    if (String(section || "").startsWith("Understanding")) return "Understanding WCAG (informative)";
    if (source === "docs") return "project docs";
    return "normative";
  }

  // columns: [{label, get(row) -> value, href(row) -> address, num, date}]
  function dataTable(caption, columns, rows, sameTab) {
    const table = el("table", "data-table");
    table.appendChild(el("caption", null, caption));
    const head = el("tr");
    for (const c of columns) {
      const th = el("th", c.num ? "num" : null, c.label);
      th.scope = "col";
      head.appendChild(th);
    }
    table.appendChild(el("thead")).appendChild(head);
    const body = table.appendChild(el("tbody"));
    for (const row of rows || []) {
      const tr = body.appendChild(el("tr"));
      columns.forEach((c, i) => {
        const cell = el(i === 0 ? "th" : "td", c.num ? "num" : null);
        if (i === 0) cell.scope = "row";
        const value = c.get(row);
        if (c.date) cell.appendChild(time(value));
        else if (c.href && c.href(row) && value !== undefined && value !== null) cell.appendChild(link(String(value), c.href(row), null, sameTab));
        else cell.textContent = shown(value);
        tr.appendChild(cell);
      });
    }
    return scrollBox(table, caption);
  }

  // Why a history could not be shortened, in words (the frame's reason is a code).
  function historyFailure(reason, summarising) {
    if (reason === "cannot_reduce") {
      return "even with every earlier exchange left out, this question with the instructions and tools is more than the model may be sent";
    }
    if (reason === "overhead_exceeds_limit") return "the instructions and tool descriptions alone are more than this profile may send";
    if (reason === "compaction_failed") return summarising ? "the older exchanges could not be summarised" : "the older exchanges could not be left out safely";
    return "it could not be shortened";
  }

  function facts(pairs) {
    const dl = el("dl", "facts");
    for (const [name, value] of pairs) {
      if (value === undefined) continue;
      dl.appendChild(el("dt", null, name));
      const dd = dl.appendChild(el("dd"));
      if (value instanceof Node) dd.appendChild(value);
      else dd.textContent = shown(value);
    }
    return dl;
  }

  function filterText(filter) {
    const pairs = Object.entries(filter || {});
    return pairs.length ? "Filter: " + pairs.map(([k, v]) => k + " = " + v).join(", ") : "";
  }

  function runListAddress(filter) {
    const query = new URLSearchParams();
    for (const name of ["model", "context", "task", "label", "rule", "outcome"]) {
      if (filter && filter[name]) query.set(name, filter[name]);
    }
    const qs = query.toString();
    return qs ? "/chat/runs?" + qs : "/chat/runs";
  }

  const contextColumns = (withModel) => [
    ...(withModel ? [{ label: "Model", get: (r) => r.model, href: (r) => (r.links && r.links.model) || r.model_link }] : []),
    { label: "Context", get: (r) => r.context, href: (r) => (r.links && r.links.context) || r.context_link },
    { label: "Runs", get: (r) => r.runs, href: (r) => r.link, num: true },
    { label: "Completed", get: (r) => (r.completion_rate === undefined ? undefined : percent(r.completion_rate)), num: true },
    // A row's failed and timed-out runs link to their list: the runs worth opening first.
    { label: "Failed", get: (r) => r.failed, href: (r) => r.links && r.links.failed, num: true },
    { label: "Timed out", get: (r) => r.timeout, href: (r) => r.links && r.links.timeout, num: true },
    { label: "Mean violations", get: (r) => r.mean_violations, num: true },
    { label: "Mean cost", get: (r) => r.mean_cost_text || r.cost_text, num: true },
  ];

  const runColumns = [
    { label: "Run", get: (r) => r.run_id, href: (r) => r.link },
    { label: "Model", get: (r) => r.model, href: (r) => r.model_link },
    { label: "Context", get: (r) => r.context, href: (r) => r.context_link },
    { label: "Task", get: (r) => r.task },
    { label: "Label", get: (r) => r.label },
    { label: "Started", get: (r) => r.started_at, date: true },
    { label: "Outcome", get: (r) => r.outcome },
    { label: "Violations", get: (r) => r.violation_count, num: true },
    { label: "Cost", get: (r) => r.cost_text, num: true },
  ];

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many);
  }

  // How the page draws a tool's call: a body for its result (none: its plain fields), the words
  // after its name once it answered, its arguments (none: "key: value"). Which tool takes which
  // drawer is the tool's own fact (`Tool.drawer`, tools/facts.py, whose values a test keeps equal to
  // these keys), served with the page (#tool-drawers); a tool the page was not told of is drawn plainly.
  const DRAWERS = {
    contexts: {
      body(result) {
        const box = document.createDocumentFragment();
        const f = filterText(result.filter);
        if (f) box.appendChild(el("p", "tool-note", f));
        if (result.by_context && result.by_context.length) {
          box.appendChild(dataTable("By context level, all models", contextColumns(false), result.by_context));
        }
        if (result.rows && result.rows.length) box.appendChild(dataTable("By model and context level", contextColumns(true), result.rows));
        if (result.note) box.appendChild(el("p", "tool-note", result.note));
        return box;
      },
      summary: (result) => plural((result.rows || []).length, "row", "rows"),
    },
    "run-list": {
      body(result) {
        const box = document.createDocumentFragment();
        const f = filterText(result.filter);
        if (f) box.appendChild(el("p", "tool-note", f));
        const runs = result.runs || [];
        box.appendChild(dataTable(plural(runs.length, "run", "runs") + " shown", runColumns, runs));
        if (result.more) {
          const p = el("p", "tool-note", "More runs match: ");
          p.appendChild(link("see them in the run list", runListAddress(result.filter)));
          box.appendChild(p);
        }
        return box;
      },
      summary: (result) => plural((result.runs || []).length, "run", "runs") + (result.more ? ", more match" : ""),
    },
    run: {
      body(result) {
        const box = document.createDocumentFragment();
        box.appendChild(facts([
          ["Run", link(shown(result.run_id), result.link)],
          ["Model", link(shown(result.model), result.model_link)],
          ["Context", link(shown(result.context), result.context_link)],
          ["Task", result.task], ["Label", result.label], ["Outcome", result.outcome],
          ["Started", time(result.started_at)],
          ["Violations", result.violation_count], ["Failing elements", result.node_count], ["Cost", result.cost_text],
          ["Tokens in / out", result.tokens_in === undefined ? undefined : shown(result.tokens_in) + " / " + shown(result.tokens_out)],
        ]));
        const violations = result.violations || [];
        if (violations.length) {
          box.appendChild(dataTable("Rules this run broke", [
            { label: "Rule", get: (v) => v.rule_id, href: (v) => v.rule_link },
            { label: "Impact", get: (v) => v.impact },
            { label: "WCAG", get: (v) => (v.wcag_tags || []).join(", ") },
            { label: "Elements", get: (v) => v.node_count, num: true },
          ], violations));
        }
        return box;
      },
      summary: (result) => "run " + shown(result.run_id),
    },
    "rule-counts": {
      body(result) {
        const box = document.createDocumentFragment();
        const f = filterText(result.filter);
        if (f) box.appendChild(el("p", "tool-note", f));
        const caption = "Rules broken most often" + (result.graded_runs !== undefined ? ", of " + plural(result.graded_runs, "graded run", "graded runs") : "");
        box.appendChild(dataTable(caption, [
          { label: "Rule", get: (r) => r.rule_id, href: (r) => r.link },
          { label: "Impact", get: (r) => r.impact },
          { label: "Runs", get: (r) => r.count, num: true },
          { label: "Share", get: (r) => percent(r.share_of_graded_runs), num: true },
          { label: "Elements", get: (r) => r.nodes, num: true },
          { label: "WCAG", get: (r) => (r.wcag || []).join(", ") || "best practice" },
        ], result.rules || []));
        return box;
      },
      summary: (result) => plural((result.rules || []).length, "rule", "rules"),
    },
    excerpts: {
      body(result) {
        if (result.outcome === "empty") return el("p", "tool-note", "Nothing in the docs matched.");
        if (result.outcome === "unavailable") return el("p", "tool-note", "The search could not run (" + shown(result.reason) + ").");
        const list = el("ol", "excerpts");
        for (const x of result.excerpts || []) {
          const li = list.appendChild(el("li"));
          li.appendChild(el("p", "excerpt-title")).appendChild(link(x.title || x.section || x.ref, x.url));
          const meta = li.appendChild(el("p", "excerpt-meta"));
          meta.append((SOURCE_NAMES[x.source] || shown(x.source)) + " · section " + shown(x.section) + " · ");
          if (x.updated_at) { meta.append("updated "); meta.appendChild(time(x.updated_at)); meta.append(" · "); }
          meta.appendChild(el("span", "badge", sourceLabel(x.source, x.section)));
          const text = String(x.text || "");
          li.appendChild(excerpt(text.length > 320 ? text.slice(0, 320).trimEnd() + " …" : text));
        }
        return list;
      },
      summary(result) {
        // An unavailable search carries an empty list too: it did not find nothing, it could not look.
        if (result.outcome === "unavailable") return "the search could not run (" + shown(result.reason) + ")";
        return result.outcome === "ok" || result.excerpts ? plural((result.excerpts || []).length, "excerpt", "excerpts") : shown(result.outcome);
      },
    },
    rule: {
      body(result) {
        const box = document.createDocumentFragment();
        const rule = el("p", "rule");
        rule.append("Rule ");
        rule.appendChild(link(shown(result.rule_id), result.link));
        rule.append(" · impact " + shown(result.impact) + (result.best_practice ? " · best practice" : ""));
        if (result.help_url) { rule.append(" · "); rule.appendChild(link("axe rule help", result.help_url)); }
        box.appendChild(rule);
        const criteria = result.criteria || [];
        if (!criteria.length) box.appendChild(el("p", "tool-note", shown(result.wcag)));
        const list = el("ul", "criteria");
        for (const c of criteria) {
          const li = list.appendChild(el("li"));
          li.appendChild(link(c.number + " " + (c.handle || ""), c.url));
          li.append(" · " + (c.level ? "Level " + c.level : "no level") + (c.obsolete ? " · obsolete in WCAG 2.2" : "") + " · ");
          li.appendChild(el("span", "badge", "normative"));
          if (c.text) li.appendChild(excerpt(c.text));
        }
        if (criteria.length) box.appendChild(list);
        return box;
      },
      summary: (result) => shown(result.wcag),
    },
    "past-exchanges": {
      summary(result) {
        // On a shared page the owner's past conversations are withheld: only how many were consulted.
        if (result.outcome === "withheld") return String(result.note || "past conversations consulted, not shown here");
        return plural((result.excerpts || []).length, "past exchange", "past exchanges");
      },
    },
    // The view itself is drawn by its own frame: its call says what it shows, and has no body.
    view: {
      bodiless: true,
      summary: () => "view shown",
      args(args) {
        const parts = (args.parts || []).map((p) => (p && p.type) || "?");
        return "view: " + shown(args.title) + (parts.length ? " (" + parts.join(", ") + ")" : "");
      },
    },
    plain: {},
  };

  // The map tool name -> drawer the server filled into the page, read once.
  let toolDrawers = null;
  function drawerFor(name) {
    if (toolDrawers === null) {
      const data = global.document && document.getElementById("tool-drawers");
      try {
        toolDrawers = data ? JSON.parse(data.textContent) : {};
      } catch (e) {
        toolDrawers = {};
      }
    }
    const drawer = Object.prototype.hasOwnProperty.call(toolDrawers, name) ? toolDrawers[name] : "plain";
    return Object.prototype.hasOwnProperty.call(DRAWERS, drawer) ? DRAWERS[drawer] : DRAWERS.plain;
  }

  // Corpus text is Markdown too (the converters keep lists and emphasis): the same safe subset.
  function excerpt(text) {
    const quote = el("blockquote", "excerpt-text");
    quote.appendChild(renderMarkdown(text));
    return quote;
  }

  function resultSummary(drawer, result) {
    if (!result || typeof result !== "object") return "done";
    return drawer.summary ? drawer.summary(result) : "done";
  }

  // Arguments as "key: value", never the JSON of a view.
  function argsText(drawer, args) {
    if (!args || typeof args !== "object") return "";
    if (drawer.args) return drawer.args(args);
    return Object.entries(args).map(([k, v]) => {
      let value;
      if (v === null || typeof v !== "object") value = String(v);
      else if (Array.isArray(v)) value = v.every((x) => x === null || typeof x !== "object") ? v.join(", ") : plural(v.length, "item", "items");
      else value = "…";
      if (value.length > 60) value = value.slice(0, 60) + "…";
      return k + ": " + value;
    }).join(", ");
  }

  function genericResult(result) {
    if (result === null || typeof result !== "object") return el("p", "tool-note", shown(result));
    const pairs = Object.entries(result).filter(([, v]) => v === null || typeof v !== "object");
    return pairs.length ? facts(pairs) : el("p", "tool-note", "Result received.");
  }

  // ---- marks on figures no tool returned ------------------------------------------------------

  // The figure as the server's check reads it (grounding/text_numbers.py): not glued to a word, a
  // dot, a dash, a slash or a "$" before it, nor to a word, dash, slash, "%" or decimals after it.
  function figurePattern(text) {
    const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp("(?<![\\w.\\-/$])" + escaped + "(?![\\w\\-/%]|\\.\\d)", "g");
  }

  function markFigures(root, figures, noteId) {
    const patterns = figures.map(figurePattern);
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement.closest(".cite, .cite-unverified, .cite-pending, .figure-unverified")
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    for (const node of nodes) {
      const text = node.nodeValue;
      const hits = [];
      patterns.forEach((re) => {
        re.lastIndex = 0;
        for (const m of text.matchAll(re)) hits.push([m.index, m.index + m[0].length]);
      });
      if (!hits.length) continue;
      hits.sort((x, y) => x[0] - y[0]);
      const inLink = Boolean(node.parentElement.closest("a"));  // a link holds no link: the mark and a word then
      const out = document.createDocumentFragment();
      let last = 0;
      for (const [start, end] of hits) {
        if (start < last) continue;
        out.append(text.slice(last, start));
        const mark = el("mark", "figure-unverified", text.slice(start, end));
        let flag = el("span", "figure-flag", "(unverified figure)");
        if (!inLink) {
          flag = el("a", "figure-flag", "unverified figure");
          flag.href = "#" + noteId;
        }
        out.append(mark, " ", flag);
        last = end;
      }
      out.append(text.slice(last));
      node.replaceWith(out);
    }
  }

  // ---- a search's debug record, for the answer's details -------------------------------------


  // How the legs were fused: reciprocal rank alone (an answer recorded before scores counted too),
  // or each leg's normalised scores with its ranks.
  function fusionText(d, weights) {
    const tail = weights ? ", weights " + weights : "";
    if (d.fusion === "rrf") return "reciprocal rank, k = " + shown(d.rrf_k) + tail;
    if (d.fusion === "scores+rrf") {
      return "normalised scores " + shown(d.score_share) + " and reciprocal rank, k = " + shown(d.rrf_k) + tail;
    }
    return d.fusion;
  }

  // A question naming one text is also searched in that text alone; its first passages lead.
  function namedTextText(named) {
    if (!named) return undefined;
    const name = SOURCE_NAMES[named.source] || shown(named.source);
    if (named.failed) return name + ": its own search failed, so the mixed order was kept";
    return name + ": its own first passages lead (" + (named.lead || []).join(", ") + ")";
  }

  // The graph leg's counters: the seeds it walked from, the entities they resolved to, the nodes one
  // hop reached and the passages it hydrated (search/graph_leg.py).
  function graphText(d) {
    if (d.graph_enabled) {
      return plural(d.graph_seeds || 0, "seed", "seeds") + ", " + plural(d.graph_entities || 0, "entity", "entities") +
        ", " + plural(d.graph_expansion_hits || 0, "expansion hit", "expansion hits") + ", " +
        plural(d.graph_hydrated || 0, "hydrated chunk", "hydrated chunks");
    }
    if (d.graph_failed === "no_graph") return "off (the index has no graph)";
    if (d.graph_failed) return "off (the graph could not be read)";
    return d.graph_enabled === false ? "off" : undefined;
  }

  function searchDebug(search, n, of) {
    const d = search.debug || {};
    const box = el("div", "search-debug");
    const query = search.args && search.args.query ? "“" + search.args.query + "”" : "";
    box.appendChild(el("p", "search-debug-title", (of > 1 ? "Search " + n + " " : "Search ") + query));
    const legs = Object.entries(d.legs || {}).map(([name, leg]) =>
      name + ": " + plural(leg.hits || 0, "hit", "hits") + (leg.top && leg.top.length ? " (first " + leg.top.join(", ") + ")" : ""));
    const timings = Object.entries(d.timings_ms || {}).map(([step, ms]) => step + " " + ms + " ms");
    const weights = Object.entries(d.weights || {}).map(([leg, w]) => leg + " " + w).join(", ");
    box.appendChild(facts([
      ["Backend", d.backend],
      ["Legs", legs.length ? legs.join("; ") : undefined],
      ["Graph", graphText(d)],
      ["Fusion", fusionText(d, weights)],
      ["Rerank", d.rerank_failed ? shown(d.rerank) + " (failed: the fused order was kept)" : d.rerank],
      ["Named first", d.exact && d.exact.length ? d.exact.join(", ") : undefined],
      ["Text named", namedTextText(d.named_text)],
      ["Read as", d.expanded || undefined],
      ["Embeddings", d.embedding_model],
      ["Timings", timings.length ? timings.join(", ") : undefined],
      ["Outcome", d.failed ? "the search could not run" : undefined],
    ]));
    return box;
  }

  // ---- the transcript -------------------------------------------------------------------------

  let answerCount = 0;

  class Transcript {
    constructor(root, options) {
      this.root = root;
      this.options = options || {};
      this.answer = null;
      this.tools = new Map();
    }

    // images: [{alt, width, height, sha256} or {alt, src}]: the question's attachments, drawn
    // as thumbnails whose address options.imageSource(image) gives (a blob URL on the chat page,
    // where the bytes need the sign-in; the public address on a shared page).
    question(text, images) {
      const q = el("div", "msg user");
      q.appendChild(el("p", "who", "You"));
      if (images && images.length) {
        const list = q.appendChild(el("ul", "attachments"));
        list.setAttribute("aria-label", images.length === 1 ? "Attached image" : images.length + " attached images");
        for (const image of images) list.appendChild(el("li")).appendChild(this.thumbnail(image));
      }
      q.appendChild(el("p", "question", text));
      this.root.appendChild(q);
      this.answer = null;
      return q;
    }

    thumbnail(image) {
      const img = el("img", "thumbnail");
      img.alt = image.alt || "An attached image";
      if (image.width && image.height) { img.width = image.width; img.height = image.height; }
      const source = image.src || (this.options.imageSource ? this.options.imageSource(image) : null);
      Promise.resolve(source).then((src) => {
        if (src) img.src = src;
        else img.replaceWith(el("span", "thumbnail-missing", "[image: " + img.alt + " — no longer available]"));
      }, () => img.replaceWith(el("span", "thumbnail-missing", "[image: " + img.alt + " — could not be loaded]")));
      return img;
    }

    // The history frame: a polite note when the conversation nears or passes what the model can
    // read whole (nothing for "unchanged"). It says what the profile's strategy really does: a
    // dropping profile leaves older exchanges out, only a summarising one summarises them.
    historyNote(a, data) {
      const summarising = data.strategy === "summarise-oldest";
      const profile = data.profile ? " (history profile “" + data.profile + "”)" : "";
      let text = "";
      if (data.outcome === "warned") {
        text = summarising
          ? "This conversation is getting long: soon older exchanges will be summarised so the model can still read it" + profile + "."
          : "This conversation is getting long: soon its oldest exchanges will be left out of what the model is sent" + profile +
            ". The conversation itself stays whole.";
      } else if (data.outcome === "reduced" && data.summarised_messages) {
        text = "This conversation is getting long: older exchanges are summarised (" +
               plural(data.summarised_messages, "earlier message", "earlier messages") + ")" + profile + ".";
      } else if (data.outcome === "reduced") {
        const left = data.dropped_messages ? " (" + plural(data.dropped_messages, "earlier message", "earlier messages") + ")" : "";
        text = "This conversation is long: the model was not sent its oldest exchanges" + left + ", only the later ones" + profile +
               ". The conversation itself is kept whole.";
      } else if (data.outcome === "failed") {
        text = "This conversation is too long to answer" + profile + ": " + historyFailure(data.reason, summarising) +
               ". Starting a new conversation keeps answers complete.";
      }
      if (text) a.insertBefore(el("p", "history-note", text), a.toolsBox);
    }

    // A failed answer's card: what the reader is told, the failure's class and its sanitised reason
    // (the same the trace keeps), and the run to quote when asking for help.
    errorCard(a, data) {
      const card = el("div", "error error-card");
      card.setAttribute("role", "alert");
      card.appendChild(el("p", "error-message", data.message || "Something went wrong while answering."));
      card.appendChild(facts([
        ["Class", data.code || undefined],
        ["Reason", data.reason || undefined],
        ["Run", data.run_id || undefined],
      ]));
      a.appendChild(card);
    }

    ensureAnswer() {
      if (!this.answer) {
        answerCount += 1;
        const a = el("div", "msg assistant");
        a.number = answerCount;
        a.appendChild(el("p", "who", document.body.dataset.bot || "groundchat"));
        a.toolsBox = a.appendChild(el("ul", "tools"));
        a.toolsBox.hidden = true;
        // Views sit between the tools and the words, live and on a shared page alike.
        a.viewsBox = a.appendChild(el("div", "views"));
        a.textBox = a.appendChild(el("div", "body"));
        a.raw = "";
        a.cites = null;
        a.searches = [];
        this.root.appendChild(a);
        this.answer = a;
      }
      return this.answer;
    }

    frame(type, data) {
      const a = this.ensureAnswer();
      data = data || {};
      if (global.GroundchatViewStream) global.GroundchatViewStream.frame(a, type, data);  // view_stream.js: a view drawn as it arrives
      switch (type) {
        case "text":
          a.raw += data.text || "";
          a.textBox.setAttribute("aria-busy", "true");
          this.drawText(a);
          break;
        case "tool-call":
          this.toolCall(a, data);
          break;
        case "tool-result":
          this.toolResult(a, data);
          break;
        case "view":
          a.viewsBox.appendChild(drawView(data));
          // The view says it; the tables its numbers came from fold to one line each.
          for (const d of a.toolsBox.querySelectorAll("details.data-tool")) d.open = false;
          break;
        case "citations":
          this.citations(a, data);
          break;
        case "history":
          this.historyNote(a, data);
          break;
        case "limit":
          a.appendChild(el("p", "limit", data.message || "A spending limit was reached."));
          break;
        case "error":
          this.errorCard(a, data);
          break;
        case "done":
          a.dataset.done = data.reason;
          a.textBox.removeAttribute("aria-busy");
          this.ending(a, data);
          if (this.options.onDone) this.options.onDone(a, data);
          this.answer = null;
          break;
      }
      return a;
    }

    drawText(a) {
      a.textBox.textContent = "";
      a.textBox.appendChild(renderMarkdown(a.raw, (ref) => this.citeMark(a, ref)));
      if (a.cites && a.cites.figures.length) markFigures(a.textBox, a.cites.figures, "a" + a.number + "-figures");
    }

    // How an answer ended, live (the done frame) or reopened (what was stored with it): a note
    // when it did not complete, then what it cost and its Details.
    ending(a, data) {
      if (data.reason === "stopped") {
        a.appendChild(el("p", "done-note", "Stopped. Nothing of this answer was kept: the conversation holds the answers before it."));
      } else if (data.reason && data.reason !== "complete" && !(data.reason === "error" && a.querySelector(".error"))) {
        a.appendChild(el("p", "done-note", "Answer ended: " + data.reason));
      }
      if (data.cost_text) this.footer(a, data);
    }

    // Under a finished answer: what it cost and, behind "Details", how its searches ran.
    footer(a, data) {
      const foot = el("div", "answer-foot");
      foot.appendChild(el("p", "answer-cost", "This answer cost " + data.cost_text));
      const details = foot.appendChild(el("details", "answer-details"));
      details.appendChild(el("summary", null, "Details"));
      const body = details.appendChild(el("div", "answer-details-body"));
      body.appendChild(facts([
        ["Cost", data.cost_text + (data.cost !== undefined ? " (" + data.cost + " USD, every model step and search)" : "")],
        ["Run", shown(data.run_id)],
        ["Ended", shown(data.reason)],
        ["Past conversations", data.recall ? (data.recall.search ? "searched: " : "not searched: ") + data.recall.reason : undefined],
      ]));
      const omitted = data.searches_omitted || 0;
      if (!a.searches.length && !omitted) body.appendChild(el("p", "tool-note", "No search ran for this answer."));
      a.searches.forEach((s, i) => body.appendChild(searchDebug(s, i + 1, a.searches.length + omitted)));
      if (omitted) {
        // Stored details are bounded (chat/answer_record.py): say what was left out, never hide it.
        body.appendChild(el("p", "tool-note", plural(omitted, "more search", "more searches") + " ran for this answer" +
                            " than were kept with it (" + (a.searches.length === 1 ? "the first is above" : a.searches.length ? "the first " + a.searches.length + " are above" : "none") +
                            "). The trace has them all."));
      }
      a.details = details;
      a.appendChild(foot);
    }

    // A link to the run's trace, for those who may read traces (the page asks the server).
    traceLink(a, runId) {
      if (!a.details || a.details.querySelector(".trace-link")) return;
      const p = el("p", "trace-link");
      p.appendChild(link("Open this answer's trace", "/chat/trace?run=" + encodeURIComponent(runId)));
      p.append(" (steps, tokens, costs and timings; opens in a new tab)");
      a.details.querySelector(".answer-details-body").appendChild(p);
    }

    citeMark(a, ref) {
      if (!a.cites) return el("span", "cite-pending", "[" + ref + "]");
      const n = a.cites.numbers.get(ref);
      if (n !== undefined) {
        const sup = el("sup", "cite");
        const mark = el("a");
        mark.href = "#a" + a.number + "-source-" + n;
        mark.appendChild(el("span", "visually-hidden", "source "));
        mark.append(String(n));
        sup.append("[", mark, "]");
        if (!a.cites.weak.has(ref)) return sup;
        // The passage is cited but reads as weak support for a sentence citing it: said in words.
        const both = document.createDocumentFragment();
        const weak = el("a", "cite-weak", "weak support");
        weak.href = "#a" + a.number + "-source-" + n;
        both.append(sup, " ", weak);
        return both;
      }
      if (a.cites.unverified.has(ref)) return el("span", "cite-unverified", "[" + ref + ": unverified source]");
      return document.createTextNode("[" + ref + "]");
    }

    toolCall(a, data) {
      a.toolsBox.hidden = false;
      const li = a.toolsBox.appendChild(el("li", "tool"));
      const drawer = drawerFor(data.name);
      const drawn = Boolean(drawer.body);
      const box = li.appendChild(el("details", drawn ? "data-tool" : "other-tool"));
      box.open = drawn;
      const summary = box.appendChild(el("summary"));
      summary.appendChild(el("code", "tool-name", data.name));
      const args = argsText(drawer, data.args);
      if (args) summary.appendChild(el("span", "tool-args", " " + args));
      box.status = summary.appendChild(el("span", "tool-status", " …"));
      box.body = box.appendChild(el("div", "tool-body"));
      box.name = data.name;
      box.drawer = drawer;
      box.args = data.args || {};
      this.tools.set(data.id, box);
    }

    toolResult(a, data) {
      let box = this.tools.get(data.id);
      if (!box) {
        this.toolCall(a, { id: data.id, name: data.name || "tool", args: {} });
        box = this.tools.get(data.id);
      }
      const drawer = box.drawer;
      if (data.error) {
        box.status.textContent = " → error";
        box.classList.add("failed");
        box.body.appendChild(el("p", "error tool-error", data.error));
        box.open = !drawer.bodiless;
        return;
      }
      const result = data.result;
      if (data.debug) a.searches.push({ args: box.args, debug: data.debug });
      box.status.textContent = " → " + resultSummary(drawer, result);
      if (drawer.bodiless) { box.body.remove(); return; }
      const draw = drawer.body;
      try {
        box.body.appendChild(draw && result && typeof result === "object" ? draw(result) : genericResult(result));
      } catch (e) {
        box.body.appendChild(genericResult(result));
      }
      if (result && result._truncated) box.body.appendChild(el("p", "tool-note", "Cut to fit: " + result._truncated));
      if (draw && !a.linksNote && box.body.querySelector("a[target=_blank]")) {
        a.linksNote = a.toolsBox.after(el("p", "tool-note hint", "Links in these results open in a new tab.")) || true;
      }
    }

    citations(a, data) {
      const sources = data.sources || [];
      const unverified = (data.unverified || []).map((u) => (typeof u === "string" ? u : u.ref));
      const figures = (data.unverified_numbers || []).map((f) => String(typeof f === "string" ? f : f.text || "")).filter(Boolean);
      // `support` may be absent (answers stored before it existed): then nothing is marked weak.
      const weakSentences = new Map();
      for (const s of Array.isArray(data.support) ? data.support : []) {
        if (!s || s.verdict !== "weak" || typeof s.ref !== "string") continue;
        if (!weakSentences.has(s.ref)) weakSentences.set(s.ref, []);
        weakSentences.get(s.ref).push(String(s.sentence || ""));
      }
      a.cites = { numbers: new Map(sources.map((s, i) => [s.ref, s.n || i + 1])), unverified: new Set(unverified),
                  figures, weak: weakSentences };
      this.drawText(a);
      if (a.sourcesBox) a.sourcesBox.remove();
      if (!sources.length && !unverified.length && !figures.length) return;
      const box = el("div", "sources");
      if (sources.length) {
        box.appendChild(el("p", "sources-title", "Sources"));
        const list = box.appendChild(el("ol"));
        sources.forEach((s, i) => {
          const n = s.n || i + 1;
          const li = list.appendChild(el("li"));
          li.value = n;
          li.id = "a" + a.number + "-source-" + n;
          li.appendChild(link(s.title || s.section || s.ref, s.url));
          li.append(" · " + (SOURCE_NAMES[s.source] || shown(s.source)) + (s.section ? ", " + s.section : "") + " · ");
          li.appendChild(el("span", "badge", sourceLabel(s.source, s.section)));
          li.appendChild(el("span", "ref", " [" + s.ref + "]"));
          for (const sentence of weakSentences.get(s.ref) || []) {
            const note = li.appendChild(el("p", "weak-note"));
            note.appendChild(el("strong", null, "Weak support: "));
            note.append("this passage may not say all of “" + sentence + "”. Read it before relying on the sentence.");
          }
        });
      }
      if (sources.length && data.support_state === "unchecked") {
        // No weak mark then means nothing: the check did not run, and the reader is told so.
        const note = box.appendChild(el("p", "support-unchecked"));
        note.appendChild(el("strong", null, "Support not checked: "));
        note.append(String(data.support_note || "the check that reads each cited passage against its sentence did not run") +
                    ". Read the sources before relying on a sentence.");
      }
      for (const ref of unverified) {
        box.appendChild(el("p", "unverified", "[" + ref + "] unverified: no tool returned this source in this answer"));
      }
      if (figures.length) {
        const note = box.appendChild(el("p", "figures-note"));
        note.id = "a" + a.number + "-figures";
        note.tabIndex = -1;  // the marks in the text lead here
        note.appendChild(el("strong", null, "Unverified figures: "));
        note.append("no tool returned " + figures.join(", ") + " in this answer. Check " +
                    (figures.length === 1 ? "it" : "them") + " against the results above before relying on " +
                    (figures.length === 1 ? "it." : "them."));
      }
      a.sourcesBox = box;
      a.textBox.after(box);
    }

    // Stored messages (as /api/conversations/{id} and /api/shared/{id} return them) drawn as frames.
    // An answer's last assistant message may carry what it cost and its details (the owner's view,
    // for answers stored since they were kept): drawn under it once its last part is, as the done
    // frame draws them live. Returns [answer element, run id (where its record was kept), the seq of its
    // last message, the reader's rating] for each answer drawn.
    stored(messages) {
      const ended = [];
      let record = null;
      let last = null;  // the answer's last assistant message: the one a rating names
      const endAnswer = () => {
        if (record && this.answer) {
          const d = record.details || {};
          this.answer.searches = (d.searches || []).map((s) => ({ args: { query: s.query }, debug: s.debug || {} }));
          this.ending(this.answer, { reason: d.reason, run_id: record.run_id, cost: record.cost, cost_text: record.cost_text,
                                     searches_omitted: d.searches_omitted, recall: d.recall });
        }
        if (this.answer && last) ended.push([this.answer, record ? record.run_id : null, last.seq, last.feedback || null]);
        record = null;
        last = null;
      };
      for (const m of messages) {
        if (m.role === "user") { endAnswer(); this.question(m.content, m.images); continue; }
        if (m.role === "assistant") {
          if (m.content) this.frame("text", { text: m.content });
          for (const c of m.tool_calls || []) this.frame("tool-call", c);
          for (const view of (m.annotations && m.annotations.views) || []) this.frame("view", view);
          if (m.annotations && m.annotations.citations) this.frame("citations", m.annotations.citations);
          if (this.answer) this.answer.textBox.removeAttribute("aria-busy");
          if (m.cost_text) record = m;
          last = m;
        }
        if (m.role === "tool") {
          let result = null;
          if (!m.is_error) {
            try { result = JSON.parse(m.content); } catch (e) { result = m.content; }
          }
          this.frame("tool-result", { id: m.tool_call_id, name: m.name, result, error: m.is_error ? m.content.replace(/^error: /, "") : null });
        }
      }
      endAnswer();
      this.answer = null;
      return ended;
    }
  }

  // 👍 / 👎 under an answer, with the reasons a 👎 may give. `options`: reasons ([{id, label}]),
  // current (the reader's earlier rating, or null), send(body) → a Promise of the saved rating or
  // of an error message (a string). Keyboard first: two toggle buttons, a fieldset of checkboxes,
  // a text box and a Send button; what happened is said in a status line.
  let feedbackCount = 0;
  function hiddenEmoji(symbol) {
    const span = el("span", null, symbol + " ");
    span.setAttribute("aria-hidden", "true");  // the button's name is its word, not the picture's
    return span;
  }
  function feedbackControls(options) {
    feedbackCount += 1;
    const id = "feedback-" + feedbackCount;
    const box = el("div", "feedback");
    box.setAttribute("role", "group");
    box.setAttribute("aria-labelledby", id + "-label");
    box.appendChild(el("span", "feedback-label", "Was this answer right?")).id = id + "-label";
    const up = box.appendChild(el("button", "feedback-up small"));
    up.type = "button";
    up.append(hiddenEmoji("👍"), el("span", null, "Yes"));
    const down = box.appendChild(el("button", "feedback-down small"));
    down.type = "button";
    down.append(hiddenEmoji("👎"), el("span", null, "No"));
    const form = box.appendChild(el("form", "feedback-reasons"));
    form.hidden = true;
    const set = form.appendChild(el("fieldset"));
    set.appendChild(el("legend", null, "What was wrong? (choose any)"));
    const boxes = [];
    for (const reason of options.reasons || []) {
      const label = set.appendChild(el("label", "feedback-reason"));
      const check = label.appendChild(el("input"));
      check.type = "checkbox";
      check.value = reason.id;
      label.append(" " + reason.label);
      boxes.push(check);
    }
    const textLabel = set.appendChild(el("label", "feedback-text-label", "Say more (needed for “Something else”)"));
    const text = textLabel.appendChild(el("textarea", "feedback-text"));
    text.maxLength = 500;
    text.rows = 2;
    const send = set.appendChild(el("button", "small primary", "Send"));
    send.type = "submit";
    const status = box.appendChild(el("p", "feedback-status"));
    status.setAttribute("role", "status");

    function show(rating) {
      up.setAttribute("aria-pressed", String(Boolean(rating && rating.rating === "up")));
      down.setAttribute("aria-pressed", String(Boolean(rating && rating.rating === "down")));
      for (const check of boxes) check.checked = Boolean(rating && (rating.reasons || []).includes(check.value));
      text.value = (rating && rating.text) || "";
    }
    async function submit(body, said) {
      const saved = await options.send(body);
      if (typeof saved === "string") { status.textContent = "Not saved: " + saved; return; }
      show(saved);
      form.hidden = true;
      status.textContent = said;
    }
    show(options.current);
    if (options.current) status.textContent = options.current.rating === "up" ? "You rated this answer right." : "You rated this answer wrong.";
    up.addEventListener("click", () => submit({ rating: "up" }, "Thanks: rated right."));
    down.addEventListener("click", () => {
      form.hidden = !form.hidden;
      down.setAttribute("aria-expanded", String(!form.hidden));
      if (!form.hidden) (boxes[0] || text).focus();
    });
    down.setAttribute("aria-expanded", "false");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const reasons = boxes.filter((c) => c.checked).map((c) => c.value);
      if (reasons.includes("other") && !text.value.trim()) {
        status.textContent = "Say in a few words what else was wrong, then send.";
        text.focus();
        return;
      }
      submit({ rating: "down", reasons, text: text.value.trim() }, "Thanks: your reasons were sent.");
    });
    return box;
  }

  // Reads an SSE body from fetch() and calls onFrame(type, data) for each frame as it arrives.
  async function readFrames(response, onFrame) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const raw = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let type = "message", data = "";
        for (const line of raw.split("\n")) {
          if (line.startsWith("event: ")) type = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (type === "message" && !data) continue;  // a heartbeat (": ping"): it only keeps the connection open
        onFrame(type, data ? JSON.parse(data) : {});
      }
    }
  }

  global.GroundchatTranscript = {
    Transcript, readFrames, actionAddress, url, BASE, VIEW_ACTIONS, renderMarkdown, scrollBox, dataTable, link, time, el, drawView,
    runListAddress, plural, runColumns, Auth, facts, searchDebug, feedbackControls, DRAWERS, drawerFor,
  };
})(window);
