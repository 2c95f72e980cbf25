// Drawing a transcript from frames: shared by the live chat and the shared-conversation page,
// so a shared answer looks exactly as it did when it streamed.
(function (global) {
  "use strict";

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

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

  // One stylesheet for views, added by the script that draws them, so a view looks the same in
  // the live chat and on a shared page.
  const VIEW_CSS = [
    ".view { border: 1px solid #ccc; padding: .5rem 1rem; margin: .75rem 0; }",
    ".view h3 { margin: .25rem 0 .5rem; font-size: 1.05rem; }",
    ".view-stats { display: grid; grid-template-columns: max-content auto; gap: .25rem 1rem; }",
    ".view-stats dt { font-weight: 600; } .view-stats dd { margin: 0; font-variant-numeric: tabular-nums; }",
    ".view table { border-collapse: collapse; margin: .5rem 0; }",
    ".view caption { text-align: left; font-weight: 600; }",
    ".view th, .view td { border-bottom: 1px solid #ccc; padding: .2rem .5rem; text-align: left; }",
    ".view td.num { text-align: right; font-variant-numeric: tabular-nums; }",
    ".view-alert { padding: .5rem; border-left: 4px solid #0a58ca; background: #f2f6ff; }",
    ".view-alert.warning { border-color: #8a5300; background: #fff8e6; }",
    ".view-alert.error { border-color: #b02a37; background: #fdf0f1; }",
    ".view-bars svg { max-width: 32rem; height: auto; display: block; }",
    ".view-bars svg text { font: 12px system-ui, sans-serif; fill: #1a1a1a; }",
    ".view-form { display: block; } .view-form select { font: inherit; }",
  ].join("\n");

  function ensureViewStyles() {
    if (document.getElementById("groundchat-view-css")) return;
    const style = el("style", null, VIEW_CSS);
    style.id = "groundchat-view-css";
    document.head.appendChild(style);
  }

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
    return table;
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
    // Without script the browser builds the same address from action, method and the names.
    form.action = action.path;
    form.method = "get";
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
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const values = {};
      for (const select of form.querySelectorAll("select")) values[select.dataset.field] = select.value;
      const address = actionAddress(part.action, values);
      if (address) global.location.assign(address);
    });
    return form;
  }

  function drawView(view) {
    ensureViewStyles();
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

  class Transcript {
    constructor(root) {
      this.root = root;
      this.answer = null;
      this.tools = new Map();
    }

    question(text) {
      const q = el("div", "msg user");
      q.appendChild(el("div", "who", "You"));
      q.appendChild(el("p", "body", text));
      this.root.appendChild(q);
      this.answer = null;
    }

    ensureAnswer() {
      if (!this.answer) {
        this.answer = el("div", "msg assistant");
        this.answer.appendChild(el("div", "who", document.body.dataset.bot || "groundchat"));
        this.answer.toolsBox = el("ul", "tools");
        this.answer.appendChild(this.answer.toolsBox);
        // Views sit between the tools and the words, live and on a shared page alike.
        this.answer.viewsBox = el("div", "views");
        this.answer.appendChild(this.answer.viewsBox);
        this.answer.textBox = el("div", "body");
        this.answer.appendChild(this.answer.textBox);
        this.answer.textBox.setAttribute("aria-live", "polite");
        this.root.appendChild(this.answer);
      }
      return this.answer;
    }

    frame(type, data) {
      const a = this.ensureAnswer();
      switch (type) {
        case "text":
          a.textBox.textContent += data.text;
          break;
        case "tool-call": {
          // Arguments can be a whole view: show the start; the trace has them in full.
          let args = JSON.stringify(data.args || {});
          if (args.length > 140) args = args.slice(0, 140) + " …";
          const li = el("li", "tool", "⚙ " + data.name + " " + args);
          this.tools.set(data.id, li);
          a.toolsBox.appendChild(li);
          break;
        }
        case "tool-result": {
          const li = this.tools.get(data.id);
          if (li) li.textContent += data.error ? "  → error: " + data.error : "  → ok";
          break;
        }
        case "view":
          a.viewsBox.appendChild(drawView(data));
          break;
        case "citations":
          this.citations(a, data);
          break;
        case "limit":
          a.appendChild(el("p", "limit", data.message || "A spending limit was reached."));
          break;
        case "error":
          a.appendChild(el("p", "error", (data.message || "Error") + (data.run_id ? " (run " + data.run_id + ")" : "")));
          break;
        case "done":
          a.dataset.done = data.reason;
          if (data.reason !== "complete") a.appendChild(el("p", "done-note", "Answer ended: " + data.reason));
          this.answer = null;
          break;
      }
    }

    citations(a, data) {
      const sources = (data && data.sources) || [];
      const unverified = (data && data.unverified) || [];
      if (!sources.length && !unverified.length) return;
      const box = el("ol", "sources");
      for (const s of sources) {
        const li = el("li");
        const link = el("a", null, (s.title || s.section || s.ref) + " (" + s.source + " " + (s.section || "") + ")");
        link.href = s.url || "#";
        li.appendChild(link);
        li.appendChild(el("span", "ref", " [" + s.ref + "]"));
        box.appendChild(li);
      }
      a.appendChild(box);
      for (const item of unverified) {
        const ref = typeof item === "string" ? item : item.ref;
        a.appendChild(el("p", "unverified", "[" + ref + "] unverified: no tool returned this source in this answer"));
      }
    }

    // Stored messages (as /api/conversations/{id} and /api/shared/{id} return them) drawn as frames.
    stored(messages) {
      for (const m of messages) {
        if (m.role === "user") { this.question(m.content); continue; }
        if (m.role === "assistant") {
          if (m.content) this.frame("text", { text: m.content });
          for (const c of m.tool_calls || []) this.frame("tool-call", c);
          for (const view of (m.annotations && m.annotations.views) || []) this.frame("view", view);
          if (m.annotations && m.annotations.citations) this.frame("citations", m.annotations.citations);
        }
        if (m.role === "tool") this.frame("tool-result", { id: m.tool_call_id, name: m.name, error: m.is_error ? m.content : null });
      }
      this.answer = null;
    }
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
        onFrame(type, data ? JSON.parse(data) : {});
      }
    }
  }

  global.GroundchatTranscript = { Transcript, readFrames, actionAddress, VIEW_ACTIONS };
})(window);
