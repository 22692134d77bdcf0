// matchplane console: a small single-page app over the public REST API.
// Every call goes to /v1 with the signed-in credential as a bearer token;
// the credential lives in sessionStorage only (never in a URL, a cookie or
// the page's HTML). No inline script, no other origin (see the page's CSP).
"use strict";

(function () {
  const store = window.sessionStorage;
  const KEY = "matchplane.credential";
  const PROJECT = "matchplane.project";
  const OPERATOR = "matchplane.operator";
  const main = document.getElementById("main");
  const statusBox = document.getElementById("status");
  let cleanups = [];

  // ---- helpers ------------------------------------------------------------

  /** Element builder: el("p", {class: "x"}, "text", child). Text is never parsed as HTML. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else if (value === true) node.setAttribute(name, "");
      else node.setAttribute(name, String(value));
    }
    append(node, children);
    return node;
  }
  function append(node, children) {
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const svgNs = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(svgNs, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    for (const child of children.flat()) if (child) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }
  const enc = encodeURIComponent;
  function fmt(value, digits) {
    if (value === null || value === undefined) return "–";
    if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits === undefined ? 1 : digits);
    return String(value);
  }
  function when(iso) {
    if (!iso) return "–";
    const d = new Date(iso);
    return isNaN(d) ? iso : d.toLocaleString();
  }
  function say(message, bad) {
    const p = el("p", { class: bad ? "bad" : "" }, message);
    statusBox.append(p);
    setTimeout(() => p.remove(), 5000);
  }
  let fieldIds = 0;
  /** A labelled field: label, control, hint and an error slot tied to it. */
  function field(label, control, opts) {
    const o = opts || {};
    const id = control.id || "f" + ++fieldIds;
    control.id = id;
    const err = el("p", { class: "error", id: id + "-error" });
    const hint = o.hint ? el("p", { class: "hint", id: id + "-hint" }, o.hint) : null;
    control.setAttribute("aria-describedby", [hint ? id + "-hint" : "", id + "-error"].join(" ").trim());
    if (o.name) control.dataset.field = o.name;
    const isCheck = control.type === "checkbox";
    const wrap = el("div", { class: "field" + (o.wide ? " wide" : "") + (isCheck ? " check" : "") },
      isCheck ? [control, el("label", { for: id }, label)] : [el("label", { for: id }, label), control], hint, err);
    return wrap;
  }
  function input(attrs) { return el("input", Object.assign({ type: "text" }, attrs)); }
  function select(options, value, attrs) {
    const s = el("select", attrs || {});
    for (const opt of options) {
      const [v, text] = Array.isArray(opt) ? opt : [opt, opt];
      s.append(el("option", { value: v, selected: v === value }, text));
    }
    return s;
  }
  function table(headers, rows, caption) {
    return el("div", { class: "table-wrap" },
      el("table", {}, caption ? el("caption", { class: "muted" }, caption) : null,
        el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows.length ? rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))
          : el("tr", {}, el("td", { colspan: headers.length, class: "muted" }, "Nothing yet.")))));
  }
  function cards(items) {
    return el("ul", { class: "cards" }, items.map(([label, value]) =>
      el("li", {}, el("span", { class: "value" }, fmt(value)), el("span", { class: "label" }, label))));
  }
  function page(title, ...children) {
    document.title = title + " · matchplane console";
    main.replaceChildren(el("h1", {}, title), ...children.flat());
    main.focus();
  }
  function every(ms, fn) {
    const id = setInterval(fn, ms);
    cleanups.push(() => clearInterval(id));
  }

  // ---- the API ------------------------------------------------------------

  class Problem extends Error {
    constructor(status, body) {
      super((body && (body.detail || body.title)) || "HTTP " + status);
      this.status = status;
      this.body = body || {};
    }
  }
  /** Calls the public API with the signed-in credential; throws Problem on an error answer. */
  async function api(method, path, body, credential) {
    const headers = { Authorization: "Bearer " + (credential || store.getItem(KEY) || "") };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit", cache: "no-store" });
    const text = await response.text();
    let data = null;
    if (text) { try { data = JSON.parse(text); } catch (_) { data = text; } }
    if (!response.ok) {
      if (response.status === 401 && !credential) signOut("Signed out: the credential was refused.");
      throw new Problem(response.status, data);
    }
    return data;
  }
  const project = () => store.getItem(PROJECT);
  const isOperator = () => store.getItem(OPERATOR) === "1";
  const P = (rest) => "/v1/projects/" + enc(project()) + rest;
  const M = (name, rest) => P("/game-modes/" + enc(name) + (rest || ""));

  function failure(error) {
    say(error instanceof Problem ? error.message + (error.body.code ? " (" + error.body.code + ")" : "") : String(error), true);
  }

  // ---- sign-in ------------------------------------------------------------

  function signOut(message) {
    store.removeItem(KEY); store.removeItem(PROJECT); store.removeItem(OPERATOR);
    if (message) say(message, true);
    location.hash = "#/sign-in";
    route();
  }
  function signInPage() {
    const projectInput = input({ autocomplete: "off", spellcheck: "false", placeholder: "prj_…" });
    const secret = el("input", { type: "password", autocomplete: "off", required: true });
    const form = el("form", { class: "grid signin", novalidate: true },
      field("Project id", projectInput, { hint: "The project an API key belongs to. Leave empty to sign in with the operator token.", wide: true }),
      field("API key or operator token", secret, { hint: "Kept in this tab's session storage only; closing the tab forgets it.", wide: true }),
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Sign in")));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const credential = secret.value.trim();
      const prj = projectInput.value.trim();
      secret.setAttribute("aria-invalid", "false");
      document.getElementById(secret.id + "-error").textContent = "";
      // No project: the operator token (it lists projects). A project: a
      // key of it (or the operator token working on it).
      const operator = !prj;
      try {
        if (operator) await api("GET", "/v1/projects", undefined, credential);
        else await api("GET", "/v1/projects/" + enc(prj) + "/game-modes", undefined, credential);
        store.setItem(KEY, credential);
        store.setItem(OPERATOR, operator ? "1" : "0");
        if (prj) store.setItem(PROJECT, prj); else store.removeItem(PROJECT);
        secret.value = "";
        location.hash = prj ? "#/modes" : "#/operator";
      } catch (error) {
        secret.setAttribute("aria-invalid", "true");
        document.getElementById(secret.id + "-error").textContent = error.status === 404 ? "No such project for this key." : error.message;
        secret.focus();
      }
    });
    page("Sign in", el("p", {}, "Sign in with an API key of your project, or with the operator token to manage projects, keys and tiers."), form);
  }

  // ---- game modes ---------------------------------------------------------

  function needProject() {
    if (project()) return false;
    page("Choose a project", el("p", {}, "Signed in as the operator: pick a project on ", el("a", { href: "#/operator" }, "Projects, keys and tiers"), "."));
    return true;
  }
  async function modesPage() {
    if (needProject()) return;
    const modes = await api("GET", P("/game-modes"));
    page("Game modes",
      el("p", {}, el("a", { href: "#/modes/new" }, "New game mode")),
      table(["Name", "Enabled", "Shape", "Cycle (s)", "Version", "Views"], modes.map((m) => [
        m.name, m.enabled === false ? "no" : "yes", JSON.stringify(m.matchShape), fmt(m.matchmakingCycleDurationSeconds), fmt(m.version),
        el("span", {}, [["edit", "Edit"], ["live", "Live pool"], ["charts", "Charts"], ["versions", "History"], ["leaderboard", "Leaderboard"]]
          .map(([p, t]) => [el("a", { href: "#/modes/" + enc(m.name) + "/" + p }, t), " "]))])));
  }

  const SERVER_FIELDS = ["version", "createdAt", "updatedAt", "id", "projectId"];
  /** The parts of a mode the form edits; the rest stays in "other settings". */
  const FORM_KEYS = ["name", "enabled", "matchShape", "matchmakingCycleDurationSeconds", "ticketTtlSeconds", "algorithm", "teamAssignment", "parties", "webhook"];

  async function modeFormPage(name) {
    if (needProject()) return;
    let mode = { name: "", enabled: true, matchShape: [1, 1], matchmakingCycleDurationSeconds: 1, ticketTtlSeconds: 600,
      algorithm: { type: "mmr", minMmr: 0, maxMmr: 3000, baseTolerance: 50, expansionMultiplier: 2 }, teamAssignment: "balanced",
      parties: { allowParties: false, maxSize: 1, keepTogether: true } };
    if (name) mode = await api("GET", M(name));
    const algo = mode.algorithm || {};
    const parties = mode.parties || {};
    const hook = mode.webhook || {};
    const f = {
      name: input({ value: mode.name, required: true, readonly: !!name, autocomplete: "off" }),
      enabled: el("input", { type: "checkbox", checked: mode.enabled !== false }),
      matchShape: input({ value: JSON.stringify(mode.matchShape), autocomplete: "off" }),
      cycle: input({ type: "number", step: "any", value: mode.matchmakingCycleDurationSeconds }),
      ttl: input({ type: "number", value: mode.ticketTtlSeconds === undefined ? "" : mode.ticketTtlSeconds }),
      algoType: select(["mmr", "ping", "fifo"], algo.type || "mmr"),
      minMmr: input({ type: "number", step: "any", value: algo.minMmr === undefined ? "" : algo.minMmr }),
      maxMmr: input({ type: "number", step: "any", value: algo.maxMmr === undefined ? "" : algo.maxMmr }),
      baseTolerance: input({ type: "number", step: "any", value: algo.baseTolerance === undefined ? "" : algo.baseTolerance }),
      expansion: input({ type: "number", step: "any", value: algo.expansionMultiplier === undefined ? "" : algo.expansionMultiplier }),
      teams: select(["balanced", "random", "fifo"], mode.teamAssignment || "balanced"),
      allowParties: el("input", { type: "checkbox", checked: !!parties.allowParties }),
      partyMax: input({ type: "number", value: parties.maxSize === undefined ? "" : parties.maxSize }),
      keepTogether: el("input", { type: "checkbox", checked: parties.keepTogether !== false }),
      hookUrl: input({ type: "url", value: hook.url || "", autocomplete: "off" }),
      hookEnabled: el("input", { type: "checkbox", checked: hook.enabled !== false }),
    };
    const other = {};
    for (const [k, v] of Object.entries(mode)) if (!FORM_KEYS.includes(k) && !SERVER_FIELDS.includes(k)) other[k] = v;
    f.other = el("textarea", { rows: 8, spellcheck: "false" }, JSON.stringify(other, null, 2));
    const summary = el("div", { role: "alert", class: "error" });
    const form = el("form", { class: "grid", novalidate: true },
      field("Name", f.name, { name: "name", hint: name ? "A mode's name cannot change." : "Letters, digits, - and _." }),
      field("Enabled", f.enabled, { name: "enabled" }),
      field("Match shape", f.matchShape, { name: "matchShape", hint: "Players per team as JSON, e.g. [2, 2], or a flexible shape object." }),
      field("Cycle duration (seconds)", f.cycle, { name: "matchmakingCycleDurationSeconds" }),
      field("Ticket time to live (seconds)", f.ttl, { name: "ticketTtlSeconds" }),
      field("Algorithm", f.algoType, { name: "algorithm.type" }),
      field("Minimum MMR", f.minMmr, { name: "algorithm.minMmr" }),
      field("Maximum MMR", f.maxMmr, { name: "algorithm.maxMmr" }),
      field("Base tolerance", f.baseTolerance, { name: "algorithm.baseTolerance" }),
      field("Expansion multiplier", f.expansion, { name: "algorithm.expansionMultiplier" }),
      field("Team assignment", f.teams, { name: "teamAssignment" }),
      field("Allow parties", f.allowParties, { name: "parties.allowParties" }),
      field("Largest party", f.partyMax, { name: "parties.maxSize" }),
      field("Keep parties together", f.keepTogether, { name: "parties.keepTogether" }),
      field("Webhook URL", f.hookUrl, { name: "webhook.url", hint: "Leave empty for no webhook." }),
      field("Webhook enabled", f.hookEnabled, { name: "webhook.enabled" }),
      field("Other settings (JSON)", f.other, { name: "$other", wide: true, hint: "Every other block of the mode (ratings, relaxations, bots, regions, …) as a JSON object." }),
      el("div", { class: "actions" }, el("button", { type: "submit" }, name ? "Save a new version" : "Create game mode"),
        el("a", { href: "#/modes" }, "Cancel")));
    const num = (control) => (control.value.trim() === "" ? undefined : Number(control.value));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearErrors(form, summary);
      let extra;
      try { extra = f.other.value.trim() ? JSON.parse(f.other.value) : {}; } catch (e) { return showErrors(form, summary, [{ field: "$other", message: "Not JSON: " + e.message }]); }
      let shape;
      try { shape = JSON.parse(f.matchShape.value); } catch (e) { return showErrors(form, summary, [{ field: "matchShape", message: "Not JSON: write e.g. [2, 2]" }]); }
      const body = Object.assign({}, extra, {
        name: f.name.value.trim(), enabled: f.enabled.checked, matchShape: shape,
        matchmakingCycleDurationSeconds: num(f.cycle), ticketTtlSeconds: num(f.ttl),
        algorithm: Object.assign({}, algo, { type: f.algoType.value, minMmr: num(f.minMmr), maxMmr: num(f.maxMmr), baseTolerance: num(f.baseTolerance), expansionMultiplier: num(f.expansion) }),
        teamAssignment: f.teams.value,
        parties: { allowParties: f.allowParties.checked, maxSize: num(f.partyMax), keepTogether: f.keepTogether.checked },
      });
      if (f.hookUrl.value.trim()) body.webhook = { url: f.hookUrl.value.trim(), enabled: f.hookEnabled.checked };
      try {
        const saved = name ? await api("PUT", M(name), body) : await api("POST", P("/game-modes"), body);
        say((name ? "Saved version " : "Created, version ") + saved.version);
        location.hash = "#/modes/" + enc(saved.name) + "/edit";
        if (name) route();
      } catch (error) {
        if (!(error instanceof Problem)) return failure(error);
        const errors = (error.body.errors && error.body.errors.length) ? error.body.errors : [{ field: "$other", message: error.message }];
        showErrors(form, summary, errors);
      }
    });
    page(name ? "Edit " + name : "New game mode", summary, form,
      name ? el("p", {}, el("a", { href: "#/modes/" + enc(name) + "/versions" }, "Version history"), " · ",
        el("button", { type: "button", class: "secondary", onclick: async () => {
          if (!confirm("Delete " + name + "? Its searches fail.")) return;
          try { await api("DELETE", M(name)); say("Deleted " + name); location.hash = "#/modes"; } catch (e) { failure(e); }
        } }, "Delete this mode")) : null);
  }
  function clearErrors(form, summary) {
    summary.replaceChildren();
    for (const c of form.querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
    for (const e of form.querySelectorAll(".error")) e.textContent = "";
  }
  /** Puts each error next to the control of its field (the nearest named parent path), else beside "other settings". */
  function showErrors(form, summary, errors) {
    const controls = Array.from(form.querySelectorAll("[data-field]"));
    let first = null;
    const list = el("ul", {});
    for (const e of errors) {
      const path = String(e.field || "").replace(/\[\d+\]/g, "");
      let control = null;
      for (let p = path; p && !control; p = p.includes(".") ? p.slice(0, p.lastIndexOf(".")) : "") {
        control = controls.find((c) => c.dataset.field === p) || null;
      }
      control = control || controls.find((c) => c.dataset.field === "$other");
      const slot = document.getElementById(control.id + "-error");
      slot.textContent = (slot.textContent ? slot.textContent + " " : "") + (e.field && e.field !== "$other" ? e.field + ": " : "") + e.message;
      control.setAttribute("aria-invalid", "true");
      first = first || control;
      list.append(el("li", {}, el("a", { href: "#" + control.id, onclick: (ev) => { ev.preventDefault(); control.focus(); } }, (e.field || "body") + ": " + e.message)));
    }
    summary.replaceChildren(el("p", {}, errors.length + (errors.length === 1 ? " problem" : " problems") + " to fix:"), list);
    if (first) first.focus();
  }

  async function versionsPage(name) {
    const versions = await api("GET", M(name, "/versions"));
    const numbers = versions.map((v) => v.version).sort((a, b) => a - b);
    const a = select(numbers.map(String), String(numbers[Math.max(0, numbers.length - 2)]));
    const b = select(numbers.map(String), String(numbers[numbers.length - 1]));
    const out = el("div", { class: "diff", "aria-live": "polite" });
    const show = () => {
      const va = versions.find((v) => String(v.version) === a.value);
      const vb = versions.find((v) => String(v.version) === b.value);
      out.replaceChildren(...diffLines(pretty(va && va.config), pretty(vb && vb.config)));
    };
    a.addEventListener("change", show); b.addEventListener("change", show);
    page("Version history of " + name,
      table(["Version", "Saved"], versions.map((v) => [String(v.version), when(v.createdAt)])),
      el("h2", {}, "Compare two versions"),
      el("form", { class: "grid" }, field("From version", a), field("To version", b)), out);
    show();
  }
  function pretty(value) { return JSON.stringify(sortKeys(value), null, 2) || ""; }
  function sortKeys(v) {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
    return v;
  }
  /** A line diff (longest common subsequence) of two texts, as lines marked added or removed. */
  function diffLines(left, right) {
    const x = left.split("\n"), y = right.split("\n");
    const n = x.length, m = y.length;
    const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    const out = [];
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) { out.push(el("span", {}, "  " + x[i] + "\n")); i++; j++; }
      else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) { out.push(el("span", { class: "add" }, "+ " + y[j] + "\n")); j++; }
      else { out.push(el("span", { class: "del" }, "- " + x[i] + "\n")); i++; }
    }
    return out;
  }

  // ---- charts -------------------------------------------------------------

  const W = 560, H = 220, PAD = { l: 48, r: 10, t: 10, b: 34 };
  function figure(caption, chart, legend) {
    return el("figure", {}, el("figcaption", {}, caption), chart,
      legend ? el("ul", { class: "legend" }, legend.map((name, i) => el("li", { class: "k" + i }, name))) : null);
  }
  function niceMax(v) { if (!(v > 0)) return 1; const p = Math.pow(10, Math.floor(Math.log10(v))); return Math.ceil(v / p) * p; }
  function axes(maxY, label) {
    const g = svg("g", {});
    for (let k = 0; k <= 4; k++) {
      const y = PAD.t + (H - PAD.t - PAD.b) * (1 - k / 4);
      g.append(svg("line", { class: "axis", x1: PAD.l, x2: W - PAD.r, y1: y, y2: y }), svg("text", { x: PAD.l - 4, y: y + 4, "text-anchor": "end" }, fmt(maxY * k / 4, maxY < 10 ? 1 : 0)));
    }
    if (label) g.append(svg("text", { x: 4, y: PAD.t + 8 }, label));
    return g;
  }
  /** Bars: one per label, one colour per series. */
  function barChart(labels, series, description) {
    const maxY = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
    const root = svg("svg", { class: "chart", viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": description });
    root.append(axes(maxY));
    const slot = (W - PAD.l - PAD.r) / Math.max(1, labels.length);
    const bw = Math.max(1, slot * 0.8 / series.length);
    const step = Math.ceil(labels.length / 8);
    labels.forEach((label, i) => {
      series.forEach((s, k) => {
        const v = s.values[i] || 0;
        const h = (H - PAD.t - PAD.b) * v / maxY;
        root.append(svg("rect", { class: "s" + k, x: PAD.l + i * slot + slot * 0.1 + k * bw, y: H - PAD.b - h, width: bw, height: h }, svg("title", {}, label + ": " + fmt(v))));
      });
      if (i % step === 0) root.append(svg("text", { x: PAD.l + i * slot + slot / 2, y: H - PAD.b + 14, "text-anchor": "middle" }, label));
    });
    return root;
  }
  /** Lines over time: xs are Date values, each series has values aligned with xs (null for a gap). */
  function lineChart(xs, series, description, from, to) {
    const maxY = niceMax(Math.max(0, ...series.flatMap((s) => s.values.filter((v) => v !== null))));
    const root = svg("svg", { class: "chart", viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": description });
    root.append(axes(maxY));
    const t0 = from.getTime(), t1 = Math.max(to.getTime(), t0 + 1);
    const X = (d) => PAD.l + (W - PAD.l - PAD.r) * (d.getTime() - t0) / (t1 - t0);
    const Y = (v) => H - PAD.b - (H - PAD.t - PAD.b) * v / maxY;
    series.forEach((s, k) => {
      let d = "";
      xs.forEach((x, i) => { const v = s.values[i]; if (v === null || v === undefined) return; d += (d ? "L" : "M") + X(x).toFixed(1) + "," + Y(v).toFixed(1); });
      if (d) root.append(svg("path", { class: "s" + k, d }));
      if (xs.length === 1 && s.values[0] !== null) root.append(svg("circle", { class: "s" + k, cx: X(xs[0]), cy: Y(s.values[0]), r: 3 }));
    });
    for (let k = 0; k <= 4; k++) {
      const t = new Date(t0 + (t1 - t0) * k / 4);
      const short = t1 - t0 > 2 * 86400e3 ? t.toLocaleDateString() : t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      root.append(svg("text", { x: X(t), y: H - PAD.b + 14, "text-anchor": k === 0 ? "start" : k === 4 ? "end" : "middle" }, short));
    }
    return root;
  }
  function binsChart(bins, unit, description) {
    if (!bins) return el("p", { class: "muted" }, "No " + unit + " in the pool.");
    const labels = bins.counts.map((_, i) => fmt(bins.start + i * bins.width, 0));
    return barChart(labels, [{ values: bins.counts }], description);
  }

  // ---- live pool ----------------------------------------------------------

  async function livePage(name) {
    const live = el("div", { "aria-live": "off" });
    const stamp = el("p", { class: "muted" });
    page("Live pool of " + name, stamp, live,
      el("p", {}, el("a", { href: "#/modes/" + enc(name) + "/charts" }, "Charts over time")));
    const refresh = async () => {
      // Two small reads, whatever the pool's size: the worker's summary of
      // its last cycle, and the last minutes of the history.
      const since = new Date(Date.now() - 120e3).toISOString();
      const [pool, history] = await Promise.all([api("GET", M(name, "/pool")),
        api("GET", M(name, "/stats/history?bucketSeconds=60&from=" + enc(since)))]);
      const minute = history.buckets[history.buckets.length - 1] || {};
      const stats = { matchesLastMinute: minute.matches || 0, waitSeconds: minute.waitSeconds };
      const reasons = Object.entries(pool.waitingReasons || {});
      stamp.textContent = pool.at ? "Last cycle " + when(pool.at) + "; refreshed every 3 seconds." : "No cycle has run yet; refreshed every 3 seconds.";
      live.replaceChildren(
        cards([["Searching", pool.searching], ["Candidates", pool.candidates], ["Matched last cycle", pool.matched],
          ["Matches this minute", stats.matchesLastMinute], ["Wait p50 (s)", stats.waitSeconds && stats.waitSeconds.p50],
          ["Wait p90 (s)", stats.waitSeconds && stats.waitSeconds.p90], ["Wait p99 (s)", stats.waitSeconds && stats.waitSeconds.p99]]),
        el("div", { class: "charts" },
          figure("Waiting reasons", reasons.length ? barChart(reasons.map(([c]) => c), [{ values: reasons.map(([, n]) => n) }],
            "Searches waiting by reason: " + reasons.map(([c, n]) => c + " " + n).join(", ")) : el("p", { class: "muted" }, "Nobody is waiting.")),
          figure("MMR of the pool", binsChart(pool.mmr, "MMR", "Histogram of the pool's MMR")),
          figure("Latency of the pool (ms)", binsChart(pool.latencyMs, "latency", "Histogram of the pool's latency"))));
      live.dataset.searching = String(pool.searching);
    };
    await refresh();
    every(3000, () => refresh().catch(failure));
  }

  // ---- charts over time ---------------------------------------------------

  const RANGES = [["hour", "Last hour", 3600, 60], ["day", "Last day", 86400, 900], ["14d", "Last 14 days", 14 * 86400, 3600]];
  async function chartsPage(name, rangeName) {
    const range = RANGES.find((r) => r[0] === rangeName) || RANGES[0];
    const to = new Date();
    const from = new Date(to.getTime() - range[2] * 1000);
    const history = await api("GET", M(name, "/stats/history?from=" + enc(from.toISOString()) + "&to=" + enc(to.toISOString()) + "&bucketSeconds=" + range[3]));
    const b = history.buckets;
    const xs = b.map((x) => new Date(x.start));
    const perMinute = range[3] / 60;
    const pick = (f) => b.map((x) => { const v = f(x); return v === undefined ? null : v; });
    const anyProposals = b.some((x) => x.proposals || x.declines);
    page("Charts of " + name,
      el("div", { class: "range", role: "group", "aria-label": "Time range" }, RANGES.map(([id, label]) =>
        el("button", { type: "button", class: "secondary", "aria-pressed": id === range[0] ? "true" : "false", onclick: () => { location.hash = "#/modes/" + enc(name) + "/charts/" + id; } }, label))),
      b.length ? null : el("p", { class: "muted" }, "No searches or matches in this range."),
      el("div", { class: "charts" },
        figure("Wait time (seconds)", lineChart(xs, [{ values: pick((x) => x.waitSeconds && x.waitSeconds.p50) }, { values: pick((x) => x.waitSeconds && x.waitSeconds.p90) }, { values: pick((x) => x.waitSeconds && x.waitSeconds.p99) }], "Wait time percentiles over time", from, to), ["p50", "p90", "p99"]),
        figure("Matches per minute", lineChart(xs, [{ values: pick((x) => x.matches / perMinute) }], "Matches per minute over time", from, to)),
        figure("MMR spread of matches", lineChart(xs, [{ values: pick((x) => x.mmrSpread && x.mmrSpread.p50) }, { values: pick((x) => x.mmrSpread && x.mmrSpread.p90) }], "MMR spread percentiles over time", from, to), ["p50", "p90"]),
        figure("Searching (mean per cycle)", lineChart(xs, [{ values: pick((x) => x.searching) }], "Pool size over time", from, to)),
        anyProposals ? figure("Proposals and declines", lineChart(xs, [{ values: pick((x) => x.proposals) }, { values: pick((x) => x.declines) }], "Proposals and declines over time", from, to), ["proposals", "declines"]) : null));
  }

  // ---- matches ------------------------------------------------------------

  async function matchesPage(query) {
    if (needProject()) return;
    const params = new URLSearchParams(query || "");
    const modes = await api("GET", P("/game-modes"));
    const mode = params.get("gameMode") || "";
    const qs = new URLSearchParams({ limit: "50" });
    if (mode) qs.set("gameMode", mode);
    if (params.get("cursor")) qs.set("cursor", params.get("cursor"));
    const pageData = await api("GET", P("/matches?" + qs));
    const filter = select([["", "Every mode"]].concat(modes.map((m) => m.name)), mode);
    filter.addEventListener("change", () => { location.hash = "#/matches" + (filter.value ? "?gameMode=" + enc(filter.value) : ""); });
    const players = (m) => (m.teams || []).map((t) => (t.players || []).map((p) => p.playerId).join(", ")).join(" vs ");
    page("Matches",
      el("form", { class: "grid" }, field("Game mode", filter)),
      table(["Match", "Mode", "Made", "Teams", "MMR spread"], pageData.items.map((m) => [
        el("a", { href: "#/matches/" + enc(m.matchId) }, m.matchId), m.gameMode, when(m.createdAt), players(m), fmt(m.quality && m.quality.mmrSpread)])),
      pageData.nextCursor ? el("p", {}, el("a", { href: "#/matches?" + new URLSearchParams(Object.assign(mode ? { gameMode: mode } : {}, { cursor: pageData.nextCursor })) }, "Older matches")) : null);
  }
  async function matchPage(id) {
    const m = await api("GET", P("/matches/" + enc(id)));
    const deliveriesBox = el("div", {});
    const showDeliveries = async () => {
      const list = await api("GET", P("/matches/" + enc(id) + "/deliveries"));
      deliveriesBox.replaceChildren(table(["Delivery", "Event", "Status", "Attempts", "Last answer", "Next attempt"], list.map((d) => {
        const last = (d.attempts || [])[d.attempts.length - 1];
        return [d.id, d.eventType, d.status, String(d.attemptCount), last ? (last.statusCode || last.error || "–") + " at " + when(last.attemptedAt) : "–", when(d.nextAttemptAt)];
      }), "Webhook deliveries of this match"));
    };
    page("Match " + id,
      cards([["Mode", m.gameMode], ["Version", m.gameModeVersion], ["MMR spread", m.quality && m.quality.mmrSpread], ["Team imbalance", m.quality && m.quality.teamImbalance]]),
      el("p", { class: "muted" }, "Made " + when(m.createdAt) + (m.region ? " in " + m.region : "")),
      el("h2", {}, "Teams"),
      (m.teams || []).map((t, i) => table(["Player", "Ticket", "Party", "MMR", "Ping (ms)", "Wait (s)"], (t.players || []).map((p) =>
        [p.playerId, p.ticketId || "–", p.partyId || "–", fmt(p.mmr), fmt(p.pingMs), fmt(p.waitSeconds)]), "Team " + (t.index === undefined ? i : t.index) + (t.meanMmr !== undefined ? ", mean MMR " + fmt(t.meanMmr) : ""))),
      el("h2", {}, "Deliveries"), deliveriesBox,
      el("div", { class: "actions" },
        el("button", { type: "button", id: "redeliver", onclick: async () => {
          try { await api("POST", P("/matches/" + enc(id) + "/deliveries/redeliver")); say("Queued again"); await showDeliveries(); } catch (e) { failure(e); }
        } }, "Redeliver"),
        el("button", { type: "button", class: "secondary", id: "webhook-test", onclick: async () => {
          try { const r = await api("POST", M(m.gameMode, "/webhook/test")); say(r.delivered ? "Test delivered: " + r.statusCode : "Test failed: " + (r.error || r.statusCode), !r.delivered); } catch (e) { failure(e); }
        } }, "Send a webhook test to " + m.gameMode)));
    await showDeliveries();
  }

  async function leaderboardPage(name) {
    const board = await api("GET", M(name, "/leaderboard?limit=100"));
    page("Leaderboard of " + name, table(["Rank", "Player", "Rating", "Deviation", "Conservative", "Games"], board.items.map((r, i) => [String(i + 1), r.playerId, fmt(r.rating), fmt(r.deviation), fmt(r.conservative), String(r.games)])));
  }

  // ---- simulate -----------------------------------------------------------

  function simulatePage() {
    if (needProject()) return;
    const text = el("textarea", { rows: 14, spellcheck: "false", placeholder: "{ \"gameMode\": {…}, \"tier\": \"pro\", \"seed\": 7, \"until\": 300, \"arrivals\": […] }" });
    const file = el("input", { type: "file", accept: ".json,application/json" });
    const csv = el("input", { type: "file", accept: ".csv,text/csv" });
    const out = el("div", { "aria-live": "polite" });
    file.addEventListener("change", async () => { if (file.files[0]) text.value = await file.files[0].text(); });
    const form = el("form", { class: "grid", novalidate: true },
      field("Scenario (JSON)", text, { name: "$other", wide: true, hint: "The scenario of matchplane simulate. It runs in the server on the real matching core; live pools are never touched." }),
      field("Or upload a scenario file", file),
      field("Arrivals CSV (optional)", csv, { hint: "Columns at,playerId,mmr,pingMs,partyId,partyMembers" }),
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Run the simulation")));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearErrors(form, out);
      let scenario;
      try { scenario = JSON.parse(text.value); } catch (e) { return showErrors(form, out, [{ field: "$other", message: "Not JSON: " + e.message }]); }
      delete scenario.arrivalsCsv;
      if (csv.files[0]) scenario.arrivalsCsvText = await csv.files[0].text();
      out.replaceChildren(el("p", {}, "Running…"));
      try {
        const report = await api("POST", P("/simulate"), scenario);
        out.replaceChildren(...simulationReport(report, scenario));
        out.querySelector("h2").focus();
      } catch (error) {
        if (!(error instanceof Problem)) return failure(error);
        const errors = (error.body.errors && error.body.errors.length) ? error.body.errors : [{ field: "$other", message: error.message }];
        out.replaceChildren();
        showErrors(form, out, errors.map((e) => ({ field: "$other", message: (e.field ? e.field + ": " : "") + e.message })));
      }
    });
    page("Simulate", form, out);
  }
  function simulationReport(report, scenario) {
    const s = report.stats || {};
    const arrived = {};
    for (const a of scenario.arrivals || []) if (a.playerId !== undefined && arrived[a.playerId] === undefined) arrived[a.playerId] = a.at;
    const waits = [];
    for (const m of report.matches || []) for (const team of m.teams || []) for (const p of team) if (p !== null && arrived[p] !== undefined) waits.push(m.at - arrived[p]);
    const hist = (values, width) => {
      if (!values.length) return null;
      const w = width || Math.max(1, Math.ceil(Math.max(...values) / 20));
      const counts = [];
      for (const v of values) { const i = Math.floor(v / w); counts[i] = (counts[i] || 0) + 1; }
      return { start: 0, width: w, counts: Array.from(counts, (c) => c || 0) };
    };
    const row = (label, p) => [label, fmt(p && p.p50), fmt(p && p.p90), fmt(p && p.p99), fmt(p && p.max)];
    return [
      el("h2", { tabindex: "-1" }, "Report"),
      cards([["Matches", s.matches], ["Matched players", s.matchedPlayers], ["Still waiting", s.stillWaiting], ["Unmatched", (report.unmatched || []).length]]),
      table(["Figure", "p50", "p90", "p99", "max"], [row("Wait (s), matched", s.waitSeconds), row("Wait (s), all", s.waitSecondsAll), row("MMR spread", s.mmrSpread), row("Team imbalance", s.teamImbalance)], "Summary"),
      el("div", { class: "charts" },
        figure("Wait of matched players (s)", binsChart(hist(waits), "waits", "Histogram of matched players' waits")),
        figure("MMR spread of matches", binsChart(hist((report.matches || []).map((m) => m.mmrSpread)), "matches", "Histogram of the matches' MMR spread"))),
      el("h2", {}, "Matches (first 100)"),
      table(["At (s)", "Teams", "MMR spread", "Team imbalance"], (report.matches || []).slice(0, 100).map((m) => [fmt(m.at), (m.teams || []).map((t) => t.map((p) => p === null ? "bot" : p).join(", ")).join(" vs "), fmt(m.mmrSpread), fmt(m.teamImbalance)])),
      el("h2", {}, "Why the unmatched waited"),
      table(["Player", "Reason"], Object.entries(report.unmatchedReasons || {}).slice(0, 100).map(([p, r]) => [p, r.code || JSON.stringify(r)])),
    ];
  }

  // ---- operator -----------------------------------------------------------

  async function operatorPage() {
    if (!isOperator()) { page("Operator only", el("p", {}, "Sign in with the operator token to manage projects, keys and tiers.")); return; }
    const [projects, tiers] = await Promise.all([api("GET", "/v1/projects"), api("GET", "/v1/tiers")]);
    const nameIn = input({ required: true, autocomplete: "off" });
    const tierIn = select(tiers.map((t) => t.name), "pro");
    const createForm = el("form", { class: "grid", novalidate: true }, field("Project name", nameIn, { name: "name" }), field("Tier", tierIn, { name: "tier" }),
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Create project")));
    const summary = el("div", { role: "alert", class: "error" });
    createForm.addEventListener("submit", async (ev) => {
      ev.preventDefault(); clearErrors(createForm, summary);
      try { const p = await api("POST", "/v1/projects", { name: nameIn.value.trim(), tier: tierIn.value }); say("Created " + p.id); route(); }
      catch (e) { if (e instanceof Problem && e.body.errors) showErrors(createForm, summary, e.body.errors); else failure(e); }
    });
    const keysBox = el("div", {});
    page("Projects, keys and tiers",
      el("h2", {}, "Projects"),
      table(["Project", "Name", "Tier", "Created", ""], projects.map((p) => [p.id, p.name, p.tier, when(p.createdAt),
        el("span", {}, el("button", { type: "button", class: "secondary", onclick: () => { store.setItem(PROJECT, p.id); showWho(); say("Using " + p.id); location.hash = "#/modes"; } }, "Use"), " ",
          el("button", { type: "button", class: "secondary", onclick: () => showKeys(p.id, keysBox) }, "Keys"))])),
      el("h2", {}, "New project"), summary, createForm, keysBox,
      el("h2", {}, "Tiers"),
      table(["Tier", "Modes", "Searches", "Requests/s", "Largest match", "Min cycle (s)", ""], tiers.map((t) => [t.name, String(t.maxGameModes), String(t.maxConcurrentSearches), String(t.requestsPerSecond), String(t.maxMatchSize), fmt(t.minCycleDurationSeconds),
        el("a", { href: "#/operator/tiers/" + enc(t.name) }, "Edit " + t.name)])));
  }
  async function showKeys(projectId, box) {
    const keys = await api("GET", "/v1/projects/" + enc(projectId) + "/keys");
    const nameIn = input({ required: true, autocomplete: "off" });
    const made = el("div", { "aria-live": "polite" });
    const form = el("form", { class: "grid", novalidate: true }, field("Key name", nameIn, { name: "name" }), el("div", { class: "actions" }, el("button", { type: "submit" }, "Create key")));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        const k = await api("POST", "/v1/projects/" + enc(projectId) + "/keys", { name: nameIn.value.trim() });
        // Shown once, as text in this page only; never stored by the console.
        made.replaceChildren(el("p", {}, "The new key (copy it now, it is not shown again):"), el("pre", { class: "secret" }, k.key));
        await showKeys(projectId, box);
        box.append(made);
      } catch (e) { failure(e); }
    });
    box.replaceChildren(el("h2", {}, "Keys of " + projectId),
      table(["Key", "Name", "Prefix", "Scopes", "Last used", "Revoked", ""], keys.map((k) => [k.id, k.name, k.prefix, (k.scopes || []).join(" "), when(k.lastUsedAt), when(k.revokedAt),
        k.revokedAt ? "" : el("button", { type: "button", class: "secondary", onclick: async () => {
          if (!confirm("Revoke " + k.name + "?")) return;
          try { await api("DELETE", "/v1/projects/" + enc(projectId) + "/keys/" + enc(k.id)); await showKeys(projectId, box); } catch (e) { failure(e); }
        } }, "Revoke")])), form, made);
    box.querySelector("h2").setAttribute("tabindex", "-1");
    box.querySelector("h2").focus();
  }
  async function tierPage(name) {
    const tier = await api("GET", "/v1/tiers/" + enc(name));
    const numeric = Object.keys(tier).filter((k) => typeof tier[k] === "number");
    const inputs = {};
    const summary = el("div", { role: "alert", class: "error" });
    const form = el("form", { class: "grid", novalidate: true }, numeric.map((k) => field(k, inputs[k] = input({ type: "number", step: "any", value: tier[k] }), { name: k })),
      el("div", { class: "actions" }, el("button", { type: "submit" }, "Save tier"), el("a", { href: "#/operator" }, "Back")));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault(); clearErrors(form, summary);
      const body = {};
      for (const k of numeric) body[k] = Number(inputs[k].value);
      try { await api("PUT", "/v1/tiers/" + enc(name), body); say("Saved " + name); location.hash = "#/operator"; }
      catch (e) { if (e instanceof Problem && e.body.errors) showErrors(form, summary, e.body.errors); else failure(e); }
    });
    page("Tier " + name, summary, form);
  }

  // ---- routing ------------------------------------------------------------

  function showWho() {
    const signedIn = !!store.getItem(KEY);
    document.getElementById("nav").hidden = !signedIn;
    for (const li of document.querySelectorAll(".operator-only")) li.hidden = !isOperator();
    document.getElementById("who").textContent = signedIn ? (isOperator() ? "Operator" : "API key") + (project() ? " · project " + project() : "") : "";
  }
  async function route() {
    for (const stop of cleanups) stop();
    cleanups = [];
    showWho();
    const hash = location.hash.replace(/^#/, "") || "/modes";
    const [path, query] = hash.split("?");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    for (const a of document.querySelectorAll("#nav a")) {
      if (("/" + parts[0]) === a.getAttribute("href").slice(1)) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    }
    if (!store.getItem(KEY)) return signInPage();
    try {
      if (parts[0] === "sign-in") return signInPage();
      if (parts[0] === "modes" && parts[1] === "new") return await modeFormPage(null);
      if (parts[0] === "modes" && parts[1]) {
        const view = parts[2] || "edit";
        if (view === "edit") return await modeFormPage(parts[1]);
        if (view === "live") return await livePage(parts[1]);
        if (view === "charts") return await chartsPage(parts[1], parts[3]);
        if (view === "versions") return await versionsPage(parts[1]);
        if (view === "leaderboard") return await leaderboardPage(parts[1]);
      }
      if (parts[0] === "matches" && parts[1]) return await matchPage(parts[1]);
      if (parts[0] === "matches") return await matchesPage(query);
      if (parts[0] === "simulate") return simulatePage();
      if (parts[0] === "operator" && parts[1] === "tiers" && parts[2]) return await tierPage(parts[2]);
      if (parts[0] === "operator") return await operatorPage();
      return await modesPage();
    } catch (error) {
      page("Something went wrong", el("p", { class: "error" }, error.message));
    }
  }

  document.getElementById("sign-out").addEventListener("click", () => signOut());
  window.addEventListener("hashchange", route);
  route();
})();
