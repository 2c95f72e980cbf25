// The chat.html page's own script: a file, not inline, so the Content-Security-Policy allows no inline script.
(function () {
  "use strict";
  const { Transcript, readFrames, Auth, time, url, feedbackControls, el } = window.GroundchatTranscript;
  const $ = (id) => document.getElementById(id);
  const status = $("status");
  const form = $("ask");
  const questionBox = $("question");
  const transcriptRoot = $("transcript");
  const announce = $("announce");
  // A stored image's bytes need the sign-in: fetched with it and shown from a blob URL.
  const transcript = new Transcript(transcriptRoot, { onDone: answered, imageSource: storedImage });
  const blobUrls = [];
  let conversationId = null;
  let chatEnabled = true;
  let feedbackReasons = [];
  // While an answer streams, the Ask button is its Stop button (POST …/stop).
  let answering = false;

  function headers() {
    return Auth.headers({ "content-type": "application/json" });
  }
  // The chat answers one JSON document unless asked for the stream the page draws as it comes.
  const STREAM = { accept: "text/event-stream" };

  // ---- signing in ----
  const devForm = $("dev-sign-in");
  const devUser = $("dev-user");
  const devButton = $("dev-sign-in-button");
  const tokenBox = $("token-sign-in");
  const signInStatus = $("sign-in-status");
  const oidcForm = $("oidc-sign-in");
  let oidcSignIn = false;  // this site signs in with its OIDC provider; the session is an HttpOnly cookie
  let renewTimer = null;
  let knownExpiry = 0;
  let signInProblem = "";  // why the provider's sign-in cannot be used right now, until it can

  function nameButton() {
    devButton.textContent = "Sign in as " + (devUser.value.trim() || "…");
  }
  devUser.addEventListener("input", nameButton);

  async function offerSignIn() {
    // Dev auth mode offers a one-click local sign-in; otherwise the route does not exist (404).
    const r = await fetch(url("/api/dev/sign-in")).catch(() => null);
    if (r && r.ok) {
      Auth.noSessions();
      const offer = await r.json();
      devUser.value = offer.default_user;
      const list = $("dev-users");
      for (const user of offer.users) list.appendChild(Object.assign(document.createElement("option"), { value: user }));
      nameButton();
      devForm.hidden = false;
    } else {
      // OIDC auth mode: a button to the provider; no token to paste.
      const session = await Auth.session();
      if (session && session.configured) {
        oidcSignIn = true;
        if (session.sign_in_url) oidcForm.action = url(session.sign_in_url);
        signInProblem = session.error ? session.error.message : "";
        if (session.signed_in) sessionRenewed(session);
        else if (session.refreshable) await renew();  // the ID token lapsed while away; the refresh cookie is left
        return;
      }
      tokenBox.open = true;
    }
    tokenBox.hidden = false;
  }

  // Silent renewal: a new ID token from the provider at four fifths of this one's life, by the
  // refresh cookie the page never sees (a provider that gave no refresh token: the page says so
  // when the token ends). Tabs share the cookie, so a tab first looks whether another tab has
  // renewed already.
  function sessionRenewed(session) {
    signInProblem = "";
    Auth.useSession(session);
    knownExpiry = session.expires_at;
    clearTimeout(renewTimer);
    const due = session.refreshable ? session.expires_in * 0.8 : session.expires_in + 1;
    renewTimer = setTimeout(renew, Math.max(5, due) * 1000);
  }

  async function renew() {
    const seen = await Auth.session();
    if (seen && seen.signed_in && seen.expires_at > knownExpiry) { sessionRenewed(seen); return; }
    const r = await fetch(url("/auth/refresh"), { method: "POST", headers: { accept: "application/json", "x-groundchat-csrf": "1" } })
      .catch(() => null);
    const body = r ? await r.json().catch(() => ({})) : {};
    if (r && r.ok) { sessionRenewed(body); showAccount(); return; }
    if (!r || r.status >= 500) {
      clearTimeout(renewTimer);
      renewTimer = setTimeout(renew, 30000);
      signInProblem = "Your sign-in could not be renewed yet" + (body.error ? ": " + body.error.message : ".") + " Trying again in 30 seconds.";
      signInStatus.textContent = signInProblem;
      return;
    }
    Auth.clear();
    signedOut((body.error && body.error.message) || "Your sign-in has ended: sign in again.");
  }

  devForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const r = await fetch(url("/api/dev/sign-in"), { method: "POST", headers: { "content-type": "application/json" },
                                                body: JSON.stringify({ user: devUser.value.trim() }) });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) { signInStatus.textContent = (body.error && body.error.message) || ("Sign-in failed (HTTP " + r.status + ")."); return; }
    signedIn(body.token, body.permissions);
  });

  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    if (token) signedIn(token, null);
  });

  function signedIn(token, permissions) {
    Auth.set(token);
    $("token").value = "";
    tokenBox.open = false;
    let note = "";
    if (permissions && !permissions.includes("chat.use")) {
      note = Auth.user() + " may not ask questions (no chat.use grant): run `groundchat users grant " + Auth.user() + " chat.use`.";
    }
    showAccount(note);
    clearSignInErrors();
    refresh();
    $("sign-out").focus();
  }

  function showAccount(note) {
    const user = Auth.token() ? (Auth.user() || "a token's user") : "";
    $("signed-in").hidden = !user;
    $("who").textContent = user;
    devForm.hidden = Boolean(user) || !devUser.value;
    tokenBox.hidden = Boolean(user) || oidcSignIn;
    oidcForm.hidden = Boolean(user) || !oidcSignIn;
    signInStatus.textContent = note || signInProblem;
    $("past-empty").textContent = user ? "No conversations yet." : "Sign in to see your conversations.";
  }

  $("sign-out").addEventListener("click", () => {
    if (oidcSignIn) { signOutWithTheProvider(); return; }
    Auth.clear();
    signedOut("You are signed out.");
    (devForm.hidden ? tokenBox.querySelector("summary") : devUser).focus();
  });

  // The cookies go first (every tab of this site), then the provider's own sign-out, which sends
  // the browser back here.
  async function signOutWithTheProvider() {
    clearTimeout(renewTimer);
    const r = await fetch(url("/auth/sign-out"), { method: "POST", headers: { accept: "application/json", "x-groundchat-csrf": "1" } })
      .catch(() => null);
    const body = r && r.ok ? await r.json().catch(() => ({})) : {};
    Auth.clear();
    if (body.end_session_url) { location.assign(body.end_session_url); return; }
    signedOut(r && r.ok ? "You are signed out." : "Signing out failed here: close the browser to end the session.");
    oidcForm.querySelector("button").focus();
  }

  function signedOut(note) {
    clearTimeout(renewTimer);
    startOver();
    $("past").textContent = "";
    $("budget").textContent = "";
    showAccount(note);
  }

  Auth.onChange((what) => {
    if (what === "signed-out") signedOut("You signed out in another tab.");
    else if (!Auth.token()) Auth.ready().then((t) => { if (t) { showAccount(); refresh(); } });
  });

  // Answers refused for want of a sign-in leave once you are signed in; the question comes back.
  function clearSignInErrors() {
    for (const failed of transcriptRoot.querySelectorAll(".msg.needs-sign-in")) {
      const question = failed.previousElementSibling;
      if (question && question.classList.contains("user")) {
        if (!questionBox.value) questionBox.value = question.querySelector(".question").textContent;
        question.remove();
      }
      failed.remove();
    }
    showStart();
  }

  // ---- the chat ----
  async function checkStatus() {
    const r = await fetch(url("/api/chat/status"));
    const s = await r.json();
    feedbackReasons = s.feedback_reasons || [];
    // Before the first question: who is answering, what it can and cannot do, and how to change it.
    if (s.answerer_notice) status.textContent = s.answerer_notice;
    if (!s.enabled) {
      chatEnabled = false;
      status.textContent = "The chat is disabled: " + s.reason + " " + (s.how_to_fix || "");
      for (const c of form.elements) c.disabled = true;
      for (const b of document.querySelectorAll(".examples button")) b.disabled = true;
    }
  }

  function answered(a, data) {
    announce.textContent = data.reason === "stopped" ? "The answer was stopped." :
      "The answer is complete." + (data.cost_text ? " It cost " + data.cost_text + "." : "");
    if (data.run_id) offerTrace(a, data.run_id);
    if (data.answer_seq !== null && data.answer_seq !== undefined) offerFeedback(a, data.answer_seq, null);
  }

  // 👍 / 👎 under each stored answer, for its owner (the rating is kept beside the message).
  function offerFeedback(a, seq, current) {
    if (!Auth.token() || !conversationId || a.querySelector(".feedback")) return;
    const rated = conversationId;
    const controls = feedbackControls({ reasons: feedbackReasons, current, send: async (body) => {
      const r = await fetch(url("/api/conversations/" + rated + "/messages/" + seq + "/feedback"),
                            { method: "POST", headers: headers(), body: JSON.stringify(body) }).catch(() => null);
      if (!r) return "the server could not be reached";
      const answer = await r.json().catch(() => ({}));
      return r.ok ? answer.feedback : ((answer.error && answer.error.message) || "HTTP " + r.status);
    } });
    (a.querySelector(".answer-foot") || a).appendChild(controls);
  }

  // The trace link is offered to those who may read traces: the trace route itself says so.
  async function offerTrace(a, runId) {
    if (!Auth.token() || mayReadTraces === false) return;
    const r = await fetch(url("/api/traces/" + encodeURIComponent(runId)), { headers: headers() }).catch(() => null);
    if (r && r.status === 403) mayReadTraces = false;
    if (r && r.ok) transcript.traceLink(a, runId);
  }
  let mayReadTraces = null;

  // Reopened answers get the same link, asked one after another: the first refusal ends the asking.
  async function offerTraces(answers) {
    for (const [a, runId] of answers) {
      if (mayReadTraces === false) return;
      if (runId) await offerTrace(a, runId);
    }
  }

  // "$0.5" as money reads "$0.50": the server's Decimal text, padded, never through a float.
  function dollars(text) {
    const [whole, part = ""] = String(text).split(".");
    return "$" + whole + "." + (part + "00").slice(0, Math.max(2, part.length));
  }

  async function showBudget() {
    if (!Auth.token()) return;
    const r = await fetch(url("/api/chat/budget"), { headers: headers() });
    if (!r.ok) return;
    const b = await r.json();
    $("budget").textContent = "Left for you: " + dollars(b.you.remaining) + " · for the chat: " + dollars(b.chat.remaining);
  }

  function showStart() {
    if (!Auth.token()) showStartFor(true);  // signed out: the examples ask you to sign in first
    $("past-toggle").parentElement.hidden = !Auth.token();  // nobody's conversations to open
    const empty = transcriptRoot.children.length === 0;
    $("start").hidden = !empty;
    $("actions").hidden = empty;
  }

  async function showSharedExamples() {
    const r = await fetch(url("/api/shared?limit=5")).catch(() => null);
    if (!r || !r.ok) return;
    const list = $("shared-examples").querySelector("ul");
    list.textContent = "";
    for (const c of (await r.json()).conversations || []) {
      const item = list.appendChild(document.createElement("li"));
      const a = item.appendChild(document.createElement("a"));
      a.href = url(c.share_url);
      a.textContent = c.title || "A shared conversation";
      if (c.shared_at) item.append(" ", time(c.shared_at));
    }
    $("shared-examples").hidden = !list.children.length;
  }

  // Someone who may not ask (signed in without chat.use) reads what others asked instead.
  function showStartFor(canAsk) {
    $("start-heading").textContent = canAsk ? "Start with a question" : "Read what others asked";
    $("shared-heading").textContent = canAsk ? "Or read a conversation someone shared" : "Conversations people shared";
    document.querySelector(".examples").hidden = !canAsk;
    const note = $("start-note");
    note.hidden = canAsk;
    note.textContent = canAsk ? "" : "You may read shared conversations; asking needs the chat.use permission, which an operator grants.";
  }

  for (const example of document.querySelectorAll(".examples button")) {
    example.addEventListener("click", () => {
      questionBox.value = example.textContent;
      form.requestSubmit();
    });
  }

  const shareButton = $("share");
  const unshareButton = $("unshare");
  const shareStatus = $("share-status");

  function showShared(conversation) {
    const shared = Boolean(conversation && conversation.shared_at);
    shareButton.disabled = !conversationId;
    $("delete").disabled = !conversationId;
    $("share-images").hidden = !transcriptRoot.querySelector(".attachments");
    shareButton.hidden = shared;
    unshareButton.hidden = !shared;
    shareStatus.textContent = "";
    $("share-box").hidden = !shared;
    if (shared) {
      const link = $("share-link");
      link.href = url("/chat/shared/" + conversationId);
      link.textContent = location.origin + url("/chat/shared/" + conversationId);
    }
  }

  $("copy-link").addEventListener("click", async () => {
    const link = $("share-link");
    try {
      await navigator.clipboard.writeText(link.textContent);
      shareStatus.textContent = "The link is copied: paste it where you want to share it.";
    } catch (e) {
      // No clipboard here (an older browser, or permission refused): select it for the keyboard.
      const range = document.createRange();
      range.selectNodeContents(link);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      shareStatus.textContent = "The link is selected: press Ctrl+C (⌘C on a Mac) to copy it.";
    }
  });

  async function setShared(shared) {
    const r = await fetch(url("/api/conversations/" + conversationId + "/share"), { method: shared ? "POST" : "DELETE", headers: headers() });
    const body = await r.json();
    if (!r.ok) { shareStatus.textContent = body.error.message; return; }
    showShared(body.conversation);
    (shared ? $("copy-link") : shareButton).focus();
    if (shared) shareStatus.textContent = "Shared: anyone with the link can read this conversation.";
    listConversations();
  }
  shareButton.addEventListener("click", () => setShared(true));
  unshareButton.addEventListener("click", () => setShared(false));

  async function openConversation(id) {
    const r = await fetch(url("/api/conversations/" + encodeURIComponent(id)), { headers: headers() });
    if (!r.ok && r.status !== 404) return;
    // A new conversation has no item until its first answer commits: its record may say it runs.
    const body = r.ok ? await r.json() : null;
    const progress = await answerInProgress(id, 0);
    const running = progress && progress.state === "running";
    if (!body && !running) return;
    conversationId = id;
    keepInAddress(id);
    clearTranscript();
    if (body) {
      const answers = transcript.stored(body.messages);
      offerTraces(answers);
      for (const [a, , seq, rating] of answers) if (seq !== undefined) offerFeedback(a, seq, rating);
    }
    showShared(body ? body.conversation : null);
    showStart();
    markCurrent();
    announce.textContent = "Opened: " + ((body && body.conversation.title) || progress.question || "conversation");
    if (drawerOpen()) closeDrawer(true);  // the entry clicked is hidden with the drawer: focus goes back to its button
    if (running) await followAnswer(id, progress);
  }

  // ---- the conversations drawer (narrow screens) ----
  const drawer = $("past-panel");
  const drawerButton = $("past-toggle");
  const drawerOpen = () => drawer.classList.contains("open");

  function openDrawer() {
    drawer.classList.add("open");
    drawerButton.setAttribute("aria-expanded", "true");
    const first = drawer.querySelector("#past li[aria-current] button") || drawer.querySelector("#past button") || $("past-close");
    first.focus();
  }

  function closeDrawer(returnFocus) {
    drawer.classList.remove("open");
    drawerButton.setAttribute("aria-expanded", "false");
    if (returnFocus) drawerButton.focus();
  }

  drawerButton.addEventListener("click", () => (drawerOpen() ? closeDrawer(true) : openDrawer()));
  $("past-close").addEventListener("click", () => closeDrawer(true));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && drawerOpen()) { event.preventDefault(); closeDrawer(true); }
  });
  // Focus or a click leaving the drawer closes it: it never stays open over what you are doing.
  drawer.addEventListener("focusout", (event) => {
    if (drawerOpen() && event.relatedTarget && !drawer.contains(event.relatedTarget) && event.relatedTarget !== drawerButton) closeDrawer(false);
  });
  document.addEventListener("pointerdown", (event) => {
    if (drawerOpen() && !drawer.contains(event.target) && !drawerButton.contains(event.target)) closeDrawer(false);
  });

  function markCurrent() {
    for (const li of $("past").children) {
      if (li.dataset.id === conversationId) li.setAttribute("aria-current", "true");
      else li.removeAttribute("aria-current");
    }
  }

  async function listConversations() {
    if (!Auth.token()) return;
    const r = await fetch(url("/api/conversations"), { headers: headers() });
    if (r.status === 403) showStartFor(false);
    if (!r.ok) return;
    showStartFor(true);
    const list = $("past");
    list.textContent = "";
    const conversations = (await r.json()).conversations;
    for (const c of conversations) {
      const item = list.appendChild(document.createElement("li"));
      item.dataset.id = c.conversation_id;
      const entry = item.appendChild(document.createElement("span"));
      entry.className = "entry";
      const open = entry.appendChild(document.createElement("button"));
      open.type = "button";
      open.className = "link-like";
      open.textContent = c.title || c.conversation_id;
      open.addEventListener("click", () => openConversation(c.conversation_id));
      const meta = entry.appendChild(document.createElement("span"));
      meta.className = "meta";
      meta.appendChild(time(c.updated_at || c.created_at));
      if (c.shared_at) {
        const badge = meta.appendChild(document.createElement("span"));
        badge.className = "badge";
        badge.textContent = "shared";
      }
      const remove = item.appendChild(document.createElement("button"));
      remove.type = "button";
      remove.className = "small";
      remove.textContent = "Delete";
      remove.setAttribute("aria-label", "Delete “" + open.textContent + "”");
      remove.addEventListener("click", () => confirmDelete(c.conversation_id, open.textContent, remove));
    }
    $("past-empty").hidden = conversations.length > 0;
    markCurrent();
    // A link to a conversation (`/chat?conversation=<id>`, as recall's hits give): opened once,
    // when the list says who is signed in; someone else's id opens nothing (the API says 404).
    if (conversationAsked) {
      const id = conversationAsked;
      conversationAsked = null;
      openConversation(id);
    }
  }
  let conversationAsked = new URLSearchParams(location.search).get("conversation");

  const askButton = form.querySelector("button[type=submit]");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = questionBox.value.trim();
    if (answering) return;  // Enter in the box, or an example, while an answer runs: only the button stops it
    if (!text || !chatEnabled) return;
    // One answer at a time per conversation: while it streams, the same button (which keeps the
    // keyboard's focus) is its Stop button.
    setAnswering(true);
    try { await askQuestion(text); } finally { setAnswering(false); }
    listConversations();
  });
  // Stop needs no question: it must not meet the question box's `required` check.
  askButton.addEventListener("click", (event) => {
    if (!answering) return;
    event.preventDefault();
    stopAnswer();
  });

  function setAnswering(on) {
    answering = on;
    askButton.textContent = on ? "Stop" : "Ask";
    askButton.removeAttribute("aria-disabled");
  }

  async function stopAnswer() {
    if (!conversationId || askButton.getAttribute("aria-disabled") === "true") return;
    askButton.setAttribute("aria-disabled", "true");
    askButton.textContent = "Stopping…";
    const r = await fetch(url("/api/conversations/" + conversationId + "/stop"), { method: "POST", headers: headers() }).catch(() => null);
    announce.textContent = r && r.ok ? "Stopping: the answer ends after the step it is on."
                                     : "The answer could not be stopped: it may have just ended.";
  }

  // A reload, or another tab: the conversation's answer in progress, from the store (204: none).
  async function answerInProgress(id, wait) {
    const r = await fetch(url("/api/conversations/" + encodeURIComponent(id) + "/answer?wait=" + wait), { headers: headers() }).catch(() => null);
    return r && r.status === 200 ? r.json() : null;
  }

  // "Still answering…", then the committed answer, without asking again (the answer commits on
  // its own, whoever listens).
  async function followAnswer(id, progress) {
    transcript.question(progress.question);
    const note = transcriptRoot.appendChild(el("p", "still-answering",
      "Still answering… This answer was under way when the page loaded; it appears here once it is done."));
    note.setAttribute("role", "status");
    setAnswering(true);
    let state = progress;
    try {
      while (state && state.state === "running" && conversationId === id) state = await answerInProgress(id, 20);
    } finally { setAnswering(false); }
    if (conversationId !== id) return;
    note.remove();
    if (state && state.state === "answered") return openConversation(id);
    const said = { stopped: "This answer was stopped; nothing of it was kept.",
                   interrupted: "This answer was interrupted (the server answering it stopped): ask again.",
                   failed: "This answer failed: ask again." }[state && state.state] || "This answer is no longer running: ask again.";
    transcriptRoot.appendChild(el("p", "done-note", said));
    announce.textContent = said;
  }

  // The conversation's address is the page's (`?conversation=<id>`): a reload reopens it.
  function keepInAddress(id) {
    const address = new URL(location.href);
    if (id) address.searchParams.set("conversation", id); else address.searchParams.delete("conversation");
    history.replaceState(null, "", address.pathname + address.search + address.hash);
  }

  async function askQuestion(text) {
    const images = pending.splice(0);
    drawPending();
    transcript.question(text, images.map((p) => ({ src: p.src, alt: p.alt.value.trim() || p.file.name })));
    showStart();
    questionBox.value = "";
    announce.textContent = "Answering…";
    let request;
    if (images.length) {
      // multipart/form-data: the browser writes the boundary, so no content-type of ours.
      const body = new FormData();
      body.append("message", text);
      if (conversationId) body.append("conversation_id", conversationId);
      for (const p of images) {
        body.append("image", p.file, p.file.name);
        body.append("alt", p.alt.value.trim() || p.file.name);
      }
      request = { method: "POST", headers: Auth.headers(STREAM), body };
    } else {
      const body = { message: text };
      if (conversationId) body.conversation_id = conversationId;
      request = { method: "POST", headers: Auth.headers({ ...STREAM, "content-type": "application/json" }),
                  body: JSON.stringify(body) };
    }
    const r = await fetch(url("/api/chat"), request);
    if (!r.ok) {
      const e = await r.json().catch(() => ({}));
      let message = (e.error && e.error.message) || ("HTTP " + r.status);
      if (r.status === 401) {
        const expired = Boolean(Auth.token());
        if (expired) { Auth.clear(); showAccount(); }
        message = expired ? "Your sign-in has expired: sign in again at the top of the page, then ask."
                          : "Sign in to ask: use the sign-in at the top of the page.";
      }
      const answer = transcript.frame("error", { message });
      if (r.status === 401) answer.classList.add("needs-sign-in");
      transcript.frame("done", { reason: "error" });
      announce.textContent = message;
      return;
    }
    await readFrames(r, (type, data) => {
      if (type === "start") { conversationId = data.conversation_id; keepInAddress(conversationId); }
      transcript.frame(type, data);
    });
    shareButton.disabled = false;
    $("delete").disabled = false;
    showBudget();
  }

  function startOver() {
    conversationId = null;
    keepInAddress(null);
    clearTranscript();
    showShared(null);
    showStart();
    markCurrent();
  }

  $("new").addEventListener("click", () => { startOver(); questionBox.focus(); });

  function clearTranscript() {
    transcriptRoot.textContent = "";
    while (blobUrls.length) URL.revokeObjectURL(blobUrls.pop());
  }

  async function storedImage(image) {
    if (!conversationId || !image.sha256) return null;
    const r = await fetch(url("/api/conversations/" + conversationId + "/images/" + image.sha256), { headers: Auth.headers() });
    if (!r.ok) return null;
    const address = URL.createObjectURL(await r.blob());
    blobUrls.push(address);
    return address;
  }

  // ---- attaching images: by the button, by dropping files on the form, or by pasting ----
  const pending = [];  // [{file, src, alt (its input)}]
  let imageRules = null;
  const attachNote = $("attach-note");

  async function offerImages() {
    const r = await fetch(url("/api/chat/images")).catch(() => null);
    imageRules = r && r.ok ? await r.json().catch(() => null) : null;
    if (!imageRules) return;
    $("attach").hidden = false;
    const button = $("attach-button");
    if (!imageRules.accepted) {
      // Said, not hidden: why this chat takes no images.
      button.hidden = true;
      attachNote.textContent = "Images cannot be attached here: " + String(imageRules.reason).replace(/\.$/, "") + ".";
      return;
    }
    $("attach-hint").textContent = "Up to " + imageRules.max_images + " images (PNG, JPEG, WebP or GIF), " +
      megabytes(imageRules.max_image_bytes) + " each; or drop or paste them here.";
  }

  function megabytes(bytes) {
    return (Math.round(bytes / 104857.6) / 10) + " MB";
  }

  function addImages(files) {
    if (!imageRules || !imageRules.accepted) {
      if (imageRules) attachNote.textContent = "Images cannot be attached here: " + String(imageRules.reason).replace(/\.$/, "") + ".";
      return;
    }
    const refused = [];
    for (const file of files) {
      if (!/^image\/(png|jpeg|webp|gif)$/.test(file.type)) { refused.push(file.name + " is not a PNG, JPEG, WebP or GIF image"); continue; }
      if (file.size > imageRules.max_image_bytes) { refused.push(file.name + " is over " + megabytes(imageRules.max_image_bytes)); continue; }
      if (pending.length >= imageRules.max_images) { refused.push(file.name + ": at most " + imageRules.max_images + " images per question"); continue; }
      const total = pending.reduce((n, p) => n + p.file.size, 0) + file.size;
      if (total > imageRules.max_images_bytes) { refused.push(file.name + ": the images together would be over " + megabytes(imageRules.max_images_bytes)); continue; }
      pending.push({ file, src: URL.createObjectURL(file), alt: null });
    }
    drawPending();
    attachNote.textContent = refused.length ? "Not attached: " + refused.join("; ") + "." :
      plural(pending.length, "image", "images") + " ready to send with the question.";
  }

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  function drawPending() {
    const list = $("pending");
    // The alt texts typed so far survive a redraw.
    list.textContent = "";
    pending.forEach((p, i) => {
      const item = list.appendChild(document.createElement("li"));
      const img = item.appendChild(document.createElement("img"));
      img.src = p.src;
      img.alt = "";  // the alt text field beside it says what it shows
      const box = item.appendChild(document.createElement("span"));
      box.className = "alt";
      const label = box.appendChild(document.createElement("label"));
      label.htmlFor = "alt-" + i;
      label.textContent = "Alt text for image " + (i + 1);
      const input = box.appendChild(document.createElement("input"));
      input.id = "alt-" + i;
      input.maxLength = 300;
      input.value = p.alt ? p.alt.value : p.file.name;
      p.alt = input;
      const remove = item.appendChild(document.createElement("button"));
      remove.type = "button";
      remove.className = "small";
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove image " + (i + 1) + " (" + p.file.name + ")");
      remove.addEventListener("click", () => {
        pending.splice(i, 1);
        drawPending();
        attachNote.textContent = "Removed " + p.file.name + ".";
        const next = list.querySelectorAll("button")[Math.min(i, pending.length - 1)];
        (next || $("attach-button")).focus();
      });
    });
  }

  $("attach-button").addEventListener("click", () => $("image-input").click());
  $("image-input").addEventListener("change", (event) => {
    addImages([...event.target.files]);
    event.target.value = "";
  });
  form.addEventListener("dragover", (event) => {
    if (!event.dataTransfer || ![...event.dataTransfer.types].includes("Files")) return;
    event.preventDefault();
    form.classList.add("dropping");
  });
  form.addEventListener("dragleave", () => form.classList.remove("dropping"));
  form.addEventListener("drop", (event) => {
    form.classList.remove("dropping");
    if (!event.dataTransfer || !event.dataTransfer.files.length) return;
    event.preventDefault();
    addImages([...event.dataTransfer.files]);
  });
  questionBox.addEventListener("paste", (event) => {
    const files = event.clipboardData ? [...event.clipboardData.files] : [];
    if (!files.length) return;  // text pastes as text
    event.preventDefault();
    addImages(files);
  });

  // ---- deleting a conversation, after a confirmation ----
  const deleteDialog = $("confirm-delete");
  let deleting = null;  // {id, title, from (the button that asked)}

  function confirmDelete(id, title, from) {
    deleting = { id, title, from };
    $("confirm-delete-text").textContent = "“" + title + "” and its answers will be gone for good" +
      " (a share link stops working too). This cannot be undone.";
    deleteDialog.returnValue = "";
    deleteDialog.showModal();
    $("confirm-delete-no").focus();  // the safe choice first
  }

  deleteDialog.addEventListener("close", async () => {
    const asked = deleting;
    deleting = null;
    if (!asked) return;
    if (deleteDialog.returnValue !== "delete") { if (asked.from.isConnected) asked.from.focus(); return; }
    const r = await fetch(url("/api/conversations/" + encodeURIComponent(asked.id)), { method: "DELETE", headers: headers() }).catch(() => null);
    const body = r ? await r.json().catch(() => ({})) : {};
    let said;
    if (r && (r.ok || r.status === 404)) {
      said = r.ok ? "Deleted “" + asked.title + "”." : "“" + asked.title + "” was already deleted.";
      const entry = [...$("past").children].find((li) => li.dataset.id === asked.id);
      if (entry) entry.remove();
      $("past-empty").hidden = $("past").children.length > 0;
      if (conversationId === asked.id) startOver();
    } else if (r && r.status === 409) {
      said = "An answer is still running; try again when it ends.";
    } else {
      said = "Deleting failed: " + ((body.error && body.error.message) || (r ? "HTTP " + r.status : "the server could not be reached")) + ".";
    }
    shareStatus.textContent = said;
    announce.textContent = said;
    // Back where the delete was asked, or, when that is gone or hidden (a closed drawer), nearby.
    const visible = (node) => node && node.isConnected && !node.disabled && node.offsetParent !== null;
    const back = [asked.from, $("past").querySelector("li button"), drawerButton, questionBox].find(visible);
    (back || questionBox).focus();
  });

  $("delete").addEventListener("click", (event) => {
    const entry = [...$("past").children].find((li) => li.dataset.id === conversationId);
    const title = entry ? entry.querySelector(".entry button").textContent : "this conversation";
    confirmDelete(conversationId, title, event.currentTarget);
  });

  function refresh() {
    showBudget();
    listConversations();
  }

  checkStatus();
  offerImages();
  showSharedExamples();
  offerSignIn().then(() => Auth.ready()).then(() => { showAccount(); refresh(); });
})();
