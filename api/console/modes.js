// Game mode pages: the list, the form (new / edit, with its attributes and
// rules as fields, the webhook's health and deliveries) and the version
// history with a line diff.
import { clearErrors, el, enc, field, fill, fmt, guardUnsaved, input, page, say, secretBox, select, showErrors, table, unmasked, when } from "./dom.js";
import { api, failure, formFailure, M, P, Problem, project } from "./api.js";
import { healthCell, healthLine, projectEndpointSet, projectEndpointSection, webhookSection } from "./webhook.js";
import { FieldErrors, rulesEditor } from "./rules.js";

/** The operator has not picked a project yet: says so and returns true. */
export function needProject() {
  if (project()) return false;
  page("Choose a project", el("p", {}, "Signed in as the operator: pick a project on ", el("a", { href: "#/operator" }, "Projects, keys and tiers"), "."));
  return true;
}
/** Whether a mode keeps ratings (docs/ratings.md): only then has it a leaderboard. */
export const rated = (mode) => !!(mode && mode.ratings && mode.ratings.enabled !== false);
const VIEWS = [["edit", "Edit"], ["live", "Live pool"], ["charts", "Charts"], ["versions", "History"], ["leaderboard", "Leaderboard", rated]];
export async function modesPage() {
  if (needProject()) return;
  const modes = await api("GET", P("/game-modes"));
  const endpointSet = await projectEndpointSet(modes);
  page("Game modes",
    el("p", {}, el("a", { href: "#/modes/new" }, "New game mode")),
    table(["Name", "Enabled", "Shape", "Cycle (s)", "Version", "Webhook", "Held", "Views"], modes.map((m) => [
      m.name, m.enabled === false ? "no" : "yes", JSON.stringify(m.matchShape), fmt(m.matchmakingCycleDurationSeconds), fmt(m.version),
      healthCell(m, endpointSet), m.hold ? "since " + when(m.hold.since) + " by " + m.hold.by : "no",
      el("span", { class: "views" }, VIEWS.filter(([, , shows]) => !shows || shows(m)).map(([p, t]) => [el("a", { href: "#/modes/" + enc(m.name) + "/" + p, "aria-label": t + " of " + m.name }, t), " "]))])),
    projectEndpointSection(modes));
}

const SERVER_FIELDS = ["version", "createdAt", "updatedAt", "id", "projectId", "hold"];
/** The parts of a mode the form edits; the rest stays in "other settings". */
const FORM_KEYS = ["name", "enabled", "matchShape", "matchmakingCycleDurationSeconds", "ticketTtlSeconds", "algorithm", "teamAssignment", "parties", "webhook", "attributes", "rules"];
/** The blocks the attributes-and-rules editor holds. */
const RULE_KEYS = ["attributes", "rules"];
const NEW_MODE = { name: "", enabled: true, matchShape: [1, 1], matchmakingCycleDurationSeconds: 1, ticketTtlSeconds: 600,
  algorithm: { type: "mmr", minMmr: 0, maxMmr: 3000, baseTolerance: 50, expansionMultiplier: 2 }, teamAssignment: "balanced",
  parties: { allowParties: false, maxSize: 1, keepTogether: true } };
/** The fields of the form's webhook; `secret` and `status` are set by the server (ignored when sent). */
const HOOK_KEYS = ["url", "enabled", "useProjectEndpoint", "secret", "status"];
/** `object` (a block of the mode) without `keys`: what the form does not edit, kept as it is. */
const without = (object, keys) => Object.fromEntries(Object.entries(object || {}).filter(([k]) => !keys.includes(k)));
/** A number field's text: "" when absent. */
const shown = (v) => (v === undefined || v === null ? "" : v);
/** A webhook secret the last save answered in full, shown on the page it opens: `{ name, secret }`. */
let revealed = null;

const num = (control) => (control.value.trim() === "" ? undefined : Number(control.value));

export async function modeFormPage(name) {
  if (needProject()) return;
  const mode = name ? await api("GET", M(name)) : NEW_MODE;
  const endpointSet = name ? await projectEndpointSet([mode]) : true;
  const algo = mode.algorithm || {};
  const parties = mode.parties || {};
  const hook = mode.webhook || {};
  const f = {
    name: input({ value: mode.name, required: true, readonly: !!name, autocomplete: "off" }),
    enabled: el("input", { type: "checkbox", checked: mode.enabled !== false }),
    matchShape: input({ value: JSON.stringify(mode.matchShape), autocomplete: "off" }),
    cycle: input({ type: "number", step: "any", value: shown(mode.matchmakingCycleDurationSeconds) }),
    ttl: input({ type: "number", value: shown(mode.ticketTtlSeconds) }),
    algoType: select(["mmr", "ping", "fifo"], algo.type || "mmr"),
    minMmr: input({ type: "number", step: "any", value: shown(algo.minMmr) }),
    maxMmr: input({ type: "number", step: "any", value: shown(algo.maxMmr) }),
    baseTolerance: input({ type: "number", step: "any", value: shown(algo.baseTolerance) }),
    expansion: input({ type: "number", step: "any", value: shown(algo.expansionMultiplier) }),
    maxDelta: input({ type: "number", step: "any", value: shown(algo.maxDelta) }),
    teams: select(["balanced", "snake"], mode.teamAssignment || "balanced"),
    allowParties: el("input", { type: "checkbox", checked: !!parties.allowParties }),
    partyMax: input({ type: "number", value: shown(parties.maxSize) }),
    keepTogether: el("input", { type: "checkbox", checked: parties.keepTogether !== false }),
    hookUrl: input({ type: "url", value: hook.url || "", autocomplete: "off" }),
    hookEnabled: el("input", { type: "checkbox", checked: hook.enabled !== false }),
    hookProject: el("input", { type: "checkbox", checked: !!hook.useProjectEndpoint }),
  };
  // Each algorithm's own fields, shown for it only.
  const mmrFields = [
    field("Minimum MMR", f.minMmr, { name: "algorithm.minMmr" }),
    field("Maximum MMR", f.maxMmr, { name: "algorithm.maxMmr" }),
    field("Base tolerance", f.baseTolerance, { name: "algorithm.baseTolerance" }),
    field("Expansion multiplier", f.expansion, { name: "algorithm.expansionMultiplier" })];
  const pingFields = [field("Largest ping difference (ms)", f.maxDelta, { name: "algorithm.maxDelta", hint: "Every two players of a match are at most this many milliseconds apart in measured round trip." })];
  const algoFields = [...mmrFields, ...pingFields];
  const showAlgo = () => {
    for (const node of mmrFields) node.hidden = f.algoType.value !== "mmr";
    for (const node of pingFields) node.hidden = f.algoType.value !== "ping";
  };
  f.algoType.addEventListener("change", showAlgo);
  showAlgo();
  /** The algorithm block: the mode's own (when the type is unchanged) with the shown type's fields over it. */
  const algorithm = () => {
    const type = f.algoType.value;
    const kept = type === algo.type ? algo : {};
    if (type === "mmr") return Object.assign({}, kept, { type, minMmr: num(f.minMmr), maxMmr: num(f.maxMmr), baseTolerance: num(f.baseTolerance), expansionMultiplier: num(f.expansion) });
    if (type === "ping") return Object.assign({}, kept, { type, maxDelta: num(f.maxDelta) });
    return Object.assign({}, kept, { type });
  };
  const other = {};
  for (const [k, v] of Object.entries(mode)) if (!FORM_KEYS.includes(k) && !SERVER_FIELDS.includes(k)) other[k] = v;
  f.other = el("textarea", { rows: 8, spellcheck: "false" }, JSON.stringify(other, null, 2));
  const summary = el("div", { role: "alert", class: "error" });
  const rules = rulesEditor({ attributes: mode.attributes, rules: mode.rules }, (errors) => { clearErrors(form, summary); showErrors(form, summary, errors); });
  /**
   * Attributes or rules written in "other settings" (a mode's JSON pasted
   * whole) go to their editor, replacing what it held; returns the other
   * settings without them.
   */
  const moveRules = (extra) => {
    if (!extra || typeof extra !== "object" || Array.isArray(extra) || !RULE_KEYS.some((k) => k in extra)) return extra;
    const moved = {};
    for (const k of RULE_KEYS) if (k in extra) { moved[k] = extra[k]; delete extra[k]; }
    rules.take(moved);
    f.other.value = JSON.stringify(extra, null, 2);
    say("Moved " + Object.keys(moved).join(" and ") + " to Attributes and rules.");
    return extra;
  };
  f.other.addEventListener("change", () => { try { moveRules(JSON.parse(f.other.value)); } catch (_) { /* said at saving */ } });
  const form = el("form", { class: "grid", novalidate: true },
    field("Name", f.name, { name: "name", hint: name ? "A mode's name cannot change." : "1 to 63 lower-case letters, digits, - and _, starting with a letter or digit." }),
    field("Enabled", f.enabled, { name: "enabled" }),
    field("Match shape", f.matchShape, { name: "matchShape", hint: "Players per team as JSON, e.g. [2, 2], or a flexible shape object." }),
    field("Cycle duration (seconds)", f.cycle, { name: "matchmakingCycleDurationSeconds" }),
    field("Ticket time to live (seconds)", f.ttl, { name: "ticketTtlSeconds" }),
    field("Algorithm", f.algoType, { name: "algorithm.type", hint: "mmr: by rating within a widening tolerance; ping: by measured round trip; fifo: first come, first matched." }),
    ...algoFields,
    field("Team assignment", f.teams, { name: "teamAssignment" }),
    field("Allow parties", f.allowParties, { name: "parties.allowParties" }),
    field("Largest party", f.partyMax, { name: "parties.maxSize" }),
    field("Keep parties together", f.keepTogether, { name: "parties.keepTogether" }),
    field("Webhook URL", f.hookUrl, { name: "webhook.url", hint: "Leave empty for no webhook." }),
    field("Webhook enabled", f.hookEnabled, { name: "webhook.enabled" }),
    field("Use the project's webhook endpoint", f.hookProject, { name: "webhook.useProjectEndpoint", hint: "Send to the project's one endpoint (on the Game modes page) instead of a URL of this mode's own; leave the URL empty." }),
    rules.node,
    field("Other settings (JSON)", f.other, { name: "$other", wide: true, hint: "Every other block of the mode (ratings, relaxations, bots, regions, …) as a JSON object." }),
    el("div", { class: "actions" }, el("button", { type: "submit" }, name ? "Save a new version" : "Create game mode"),
      el("a", { href: "#/modes" }, "Cancel")));
  // Edits not saved yet: leaving the page asks first.
  let dirty = false;
  form.addEventListener("input", () => { dirty = true; });
  form.addEventListener("change", () => { dirty = true; });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form, summary);
    let extra;
    try { extra = f.other.value.trim() ? JSON.parse(f.other.value) : {}; } catch (e) { return showErrors(form, summary, [{ field: "$other", message: "Not JSON: " + e.message }]); }
    let declared;
    try { extra = moveRules(extra); declared = rules.value(); } catch (e) { if (e instanceof FieldErrors) return showErrors(form, summary, e.errors); throw e; }
    let shape;
    try { shape = JSON.parse(f.matchShape.value); } catch (e) { return showErrors(form, summary, [{ field: "matchShape", message: "Not JSON: write e.g. [2, 2]" }]); }
    // Each block the form edits part of is the mode's own block with the
    // form's fields written over it: the fields it does not show (the
    // algorithm's maxTolerance or maxDelta, the parties' mmr and
    // incompleteTimeoutSeconds, …) are kept. An algorithm whose type
    // changed starts afresh: the old type's fields would be refused.
    const body = Object.assign({}, extra, declared, {
      name: f.name.value.trim(), enabled: f.enabled.checked, matchShape: shape,
      matchmakingCycleDurationSeconds: num(f.cycle), ticketTtlSeconds: num(f.ttl),
      algorithm: algorithm(),
      teamAssignment: f.teams.value,
      parties: Object.assign({}, parties, { allowParties: f.allowParties.checked, maxSize: num(f.partyMax), keepTogether: f.keepTogether.checked }),
    });
    const hookKept = without(hook, HOOK_KEYS);
    if (f.hookProject.checked) body.webhook = Object.assign(hookKept, { useProjectEndpoint: true, enabled: f.hookEnabled.checked }, f.hookUrl.value.trim() ? { url: f.hookUrl.value.trim() } : {});
    else if (f.hookUrl.value.trim()) body.webhook = Object.assign(hookKept, { url: f.hookUrl.value.trim(), enabled: f.hookEnabled.checked });
    try {
      // The version this page opened: a save made meanwhile (another tab,
      // another person) is refused rather than silently overwritten.
      const saved = name ? await api("PUT", M(name), body, undefined, { "If-Match": '"' + mode.version + '"' }) : await api("POST", P("/game-modes"), body);
      if (saved.webhook && unmasked(saved.webhook.secret)) revealed = { name: saved.name, secret: saved.webhook.secret };
      dirty = false;
      say((name ? "Saved version " : "Created, version ") + saved.version);
      location.hash = "#/modes/" + enc(saved.name) + "/edit";
      if (name) window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (error) {
      if (!(error instanceof Problem)) return failure(error);
      if (error.status === 412) {
        fill(summary, el("p", {}, "Not saved: someone saved a newer version of " + name + " since this page opened (it shows version " + mode.version + "). ",
          el("a", { href: "#/modes/" + enc(name) + "/versions" }, "See what changed"), ", then ",
          el("button", { type: "button", class: "secondary", onclick: () => { dirty = false; window.dispatchEvent(new HashChangeEvent("hashchange")); } }, "open the newest version"),
          " and make your change again."));
        return summary.querySelector("button").focus();
      }
      formFailure(form, summary, error);
    }
  });
  guardUnsaved(() => dirty);
  const secret = el("div", { id: "webhook-secret" });
  if (revealed && revealed.name === name) fill(secret, secretBox("The webhook's signing secret", revealed.secret));
  revealed = null;
  const rotate = name && mode.webhook && mode.webhook.url && !mode.webhook.useProjectEndpoint
    ? el("button", { type: "button", class: "secondary", id: "mode-webhook-rotate", onclick: async () => {
      try {
        const r = await api("POST", M(name, "/webhook/rotate-secret"));
        fill(secret, secretBox("The new signing secret (the old one signs too for 24 hours)", r.webhook.secret));
      } catch (e) { failure(e); }
    } }, "Rotate the webhook secret") : null;
  page(name ? "Edit " + name : "New game mode", name ? healthLine(mode, endpointSet) : null, secret, name ? holdSection(name, mode) : null, summary, form,
    name ? [
      el("p", {}, el("a", { href: "#/modes/" + enc(name) + "/versions" }, "Version history"), " · ", rotate, rotate ? " · " : null,
        el("button", { type: "button", class: "secondary", onclick: async () => {
          if (!confirm("Delete " + name + "? Its searches fail.")) return;
          try { await api("DELETE", M(name)); say("Deleted " + name); location.hash = "#/modes"; } catch (e) { failure(e); }
        } }, "Delete this mode")),
      webhookSection(mode)] : null);
}

/** Held matching (docs/game-modes.md, "Holding matching"): who held the mode
 * and since when, and the button that holds or releases it. */
function holdSection(name, mode) {
  const held = mode.hold;
  const line = held
    ? ["Matching is held since " + when(held.since) + " by " + held.by + ": cycles form no match; searches wait with MATCHING_HELD. "]
    : ["Matching runs. "];
  // Only this paragraph is drawn again: the form below keeps unsaved edits.
  const button = el("button", { type: "button", class: "secondary", onclick: async () => {
    try {
      let hold = null;
      if (held) { await api("DELETE", M(name, "/hold")); say("Released " + name); }
      else { hold = await api("POST", M(name, "/hold")); say("Held " + name + " since " + when(hold.since)); }
      const next = holdSection(name, Object.assign({}, mode, { hold }));
      paragraph.replaceWith(next);
      next.querySelector("button").focus();
    } catch (e) { failure(e); }
  } }, held ? "Release the hold" : "Hold matching");
  const paragraph = el("p", { class: held ? "hold held" : "hold" }, ...line, button);
  return paragraph;
}

export async function versionsPage(name) {
  const versions = await api("GET", M(name, "/versions"));
  const numbers = versions.map((v) => v.version).sort((a, b) => a - b);
  const a = select(numbers.map(String), String(numbers[Math.max(0, numbers.length - 2)]));
  const b = select(numbers.map(String), String(numbers[numbers.length - 1]));
  const out = el("div", { class: "diff", "aria-live": "polite" });
  const show = () => {
    const va = versions.find((v) => String(v.version) === a.value);
    const vb = versions.find((v) => String(v.version) === b.value);
    fill(out, diffLines(pretty(va && va.config), pretty(vb && vb.config)));
  };
  a.addEventListener("change", show); b.addEventListener("change", show);
  page("Version history of " + name,
    table(["Version", "Saved"], versions.map((v) => [String(v.version), when(v.createdAt)])),
    el("h2", {}, "Compare two versions"),
    el("form", { class: "grid" }, field("From version", a), field("To version", b)),
    el("p", { class: "hint" }, "Lines marked - are only in the From version, lines marked + only in the To version."), out);
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
    // A changed line reads old, then new.
    else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) { out.push(el("span", { class: "del" }, "- " + x[i] + "\n")); i++; }
    else { out.push(el("span", { class: "add" }, "+ " + y[j] + "\n")); j++; }
  }
  return out;
}
