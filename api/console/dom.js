// DOM helpers of the console: element builders that never parse text as
// HTML and never print an absent value (null, undefined, false) as text.

const main = document.getElementById("main");
const statusBox = document.getElementById("status");

/**
 * Appends children to node: nested arrays at any depth are flattened,
 * null/undefined/false are skipped, anything not a Node becomes text.
 */
export function append(node, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
/** Replaces node's children with children (as append() takes them). */
export function fill(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}
/** Element builder: el("p", {class: "x"}, "text", child, [more, children]). */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  return append(node, children);
}
const svgNs = "http://www.w3.org/2000/svg";
/** SVG element builder, as el(). */
export function svg(tag, attrs, ...children) {
  const node = document.createElementNS(svgNs, tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  return append(node, children);
}
export const enc = encodeURIComponent;
/** A value for reading: "–" when absent, numbers with `digits` decimals (1 by default) unless whole. */
export function fmt(value, digits) {
  if (value === null || value === undefined || (typeof value === "number" && !isFinite(value))) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits === undefined ? 1 : digits);
  return String(value);
}
/** A timestamp in the reader's locale; "–" when absent. */
export function when(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString();
}
/**
 * A message in the status box: for 5 seconds, or, for a failure (`bad`),
 * until dismissed (its button, or Escape), so that it can be read at any
 * pace.
 */
export function say(message, bad) {
  const p = el("p", { class: bad ? "bad" : null }, message);
  if (bad) p.append(" ", el("button", { type: "button", class: "dismiss", "aria-label": "Dismiss this message", onclick: () => p.remove() }, "×"));
  else setTimeout(() => p.remove(), 5000);
  statusBox.append(p);
  dodge();
}
/** Moves the status box to the other edge of the window while it would cover the focused control. */
function dodge() {
  const focused = document.activeElement;
  if (!focused || focused === document.body || !statusBox.childElementCount) { statusBox.classList.remove("dodge"); return; }
  const a = focused.getBoundingClientRect();
  statusBox.classList.remove("dodge");
  const b = statusBox.getBoundingClientRect();
  const covers = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  statusBox.classList.toggle("dodge", covers);
}
document.addEventListener("focusin", dodge);
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") for (const p of statusBox.querySelectorAll("p")) p.remove();
});
let fieldIds = 0;
/** A labelled field: label, control, hint and an error slot tied to it. */
export function field(label, control, opts) {
  const o = opts || {};
  const id = control.id || "f" + ++fieldIds;
  control.id = id;
  const err = el("p", { class: "error", id: id + "-error" });
  const hint = o.hint ? el("p", { class: "hint", id: id + "-hint" }, o.hint) : null;
  control.setAttribute("aria-describedby", [hint ? id + "-hint" : "", id + "-error"].join(" ").trim());
  if (o.name) control.dataset.field = o.name;
  const isCheck = control.type === "checkbox";
  return el("div", { class: "field" + (o.wide ? " wide" : "") + (isCheck ? " check" : "") },
    isCheck ? [control, el("label", { for: id }, label)] : [el("label", { for: id }, label), control], hint, err);
}
export function input(attrs) { return el("input", Object.assign({ type: "text" }, attrs)); }
export function select(options, value, attrs) {
  const s = el("select", attrs || {});
  const values = options.map((opt) => (Array.isArray(opt) ? opt[0] : opt));
  // A value the list does not offer is kept as an option of its own, so
  // that saving the form never silently changes it to the first one.
  const all = value === undefined || value === null || values.includes(value) ? options : [...options, value];
  for (const opt of all) {
    const [v, text] = Array.isArray(opt) ? opt : [opt, opt];
    s.append(el("option", { value: v, selected: v === value }, text));
  }
  return s;
}
/** A table in a horizontally scrolling box; rows are arrays of cells (text, nodes or arrays of them). */
export function table(headers, rows, caption) {
  return el("div", { class: "table-wrap" },
    el("table", {}, caption ? el("caption", { class: "muted" }, caption) : null,
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows.length ? rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))
        : el("tr", {}, el("td", { colspan: headers.length, class: "muted" }, "Nothing yet.")))));
}
export function cards(items) {
  return el("ul", { class: "cards" }, items.map(([label, value]) =>
    el("li", {}, el("span", { class: "value" }, fmt(value)), el("span", { class: "label" }, label))));
}
/** Shows a page: its one heading (focused) and its content. */
export function page(title, ...children) {
  document.title = title + " · matchplane console";
  const heading = el("h1", { tabindex: "-1" }, title);
  fill(main, heading, children);
  heading.focus();
}
/**
 * A webhook signing secret shown once (docs/webhooks.md): in full, with a
 * *Copy* button, kept on the page until the page changes, since the API
 * never shows it again.
 */
export function secretBox(what, secret) {
  const code = el("code", { class: "secret" }, secret);
  return el("div", { class: "secret-box", role: "status" },
    el("p", {}, what + " (shown this once: copy it now and keep it where your webhook receiver reads it):"),
    el("p", {}, code, " ", el("button", { type: "button", class: "secondary", onclick: async () => {
      try { await navigator.clipboard.writeText(secret); say("Copied."); } catch (_) { say("Select the secret and copy it.", true); }
    } }, "Copy")));
}
let unsaved = null;
/**
 * Sets what tells whether the page shown holds unsaved edits (`null`: it
 * holds none); leaving such a page asks first (the router and reloads).
 */
export function guardUnsaved(fn) { unsaved = fn; }
/** Whether the page shown holds unsaved edits. */
export const hasUnsaved = () => !!(unsaved && unsaved());
/** Whether a webhook secret from an answer is the secret itself, not its masked form. */
export const unmasked = (secret) => typeof secret === "string" && secret !== "" && !secret.includes("*");
export function clearErrors(form, summary) {
  summary.replaceChildren();
  for (const c of form.querySelectorAll("[aria-invalid]")) c.removeAttribute("aria-invalid");
  for (const e of form.querySelectorAll(".error")) e.textContent = "";
}
/**
 * The paths an error's field may be shown at, nearest first: the field and
 * each parent (`rules[0].relax[1].max`, `rules[0].relax[1]`,
 * `rules[0].relax`, `rules[0]`, `rules`), then the same without indexes.
 */
function fieldPaths(field) {
  const paths = [];
  const up = (p) => {
    while (p) {
      paths.push(p);
      const cut = Math.max(p.lastIndexOf("."), p.lastIndexOf("["));
      p = cut > 0 ? p.slice(0, cut) : "";
    }
  };
  up(field);
  up(field.replace(/\[\d+\]/g, ""));
  return paths;
}
/**
 * Puts each error next to its `control` if it names one, else next to the
 * control of its field (the nearest named parent path; a control's
 * data-field may name several, one a line: a name may hold spaces), else beside "other
 * settings"; a form without that lists it in the summary only. The first
 * error's control gets the focus, else the summary.
 */
export function showErrors(form, summary, errors) {
  const controls = Array.from(form.querySelectorAll("[data-field]"));
  let first = null;
  const list = el("ul", {});
  for (const e of errors) {
    let control = e.control || null;
    for (const p of control ? [] : fieldPaths(String(e.field || ""))) {
      control = controls.find((c) => c.dataset.field.split("\n").includes(p)) || null;
      if (control) break;
    }
    control = control || controls.find((c) => c.dataset.field === "$other") || null;
    const text = (e.field && e.field !== "$other" ? e.field + ": " : "") + e.message;
    if (!control) {
      list.append(el("li", {}, text));
      continue;
    }
    const slot = document.getElementById(control.id + "-error");
    slot.textContent = (slot.textContent ? slot.textContent + " " : "") + text;
    control.setAttribute("aria-invalid", "true");
    first = first || control;
    list.append(el("li", {}, el("a", { href: "#" + control.id, onclick: (ev) => { ev.preventDefault(); control.focus(); } }, text)));
  }
  fill(summary, el("p", {}, errors.length + (errors.length === 1 ? " problem" : " problems") + " to fix:"), list);
  if (first) first.focus();
  else {
    summary.setAttribute("tabindex", "-1");
    summary.focus();
  }
}
