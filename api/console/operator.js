// The operator's page: projects, their keys, and tier limits.
import { clearErrors, el, enc, field, fill, fmt, input, page, say, select, table, when } from "./dom.js";
import { api, failure, formFailure, isOperator, PROJECT, store } from "./api.js";

export async function operatorPage(showWho, rerender) {
  if (!isOperator()) { page("Operator only", el("p", {}, "Sign in with the operator token to manage projects, keys and tiers.")); return; }
  const [projects, tiers] = await Promise.all([api("GET", "/v1/projects"), api("GET", "/v1/tiers")]);
  const nameIn = input({ required: true, autocomplete: "off" });
  const tierIn = select(tiers.map((t) => t.name), "pro");
  const createForm = el("form", { class: "grid", novalidate: true }, field("Project name", nameIn, { name: "name" }), field("Tier", tierIn, { name: "tier" }),
    el("div", { class: "actions" }, el("button", { type: "submit" }, "Create project")));
  const summary = el("div", { role: "alert", class: "error" });
  createForm.addEventListener("submit", async (ev) => {
    ev.preventDefault(); clearErrors(createForm, summary);
    try { const p = await api("POST", "/v1/projects", { name: nameIn.value.trim(), tier: tierIn.value }); say("Created " + p.id); rerender(); }
    catch (e) { formFailure(createForm, summary, e); }
  });
  const keysBox = el("div", {});
  page("Projects, keys and tiers",
    el("h2", {}, "Projects"),
    table(["Project", "Name", "Tier", "Created", ""], projects.map((p) => [p.id, p.name, p.tier, when(p.createdAt),
      el("span", {}, el("button", { type: "button", class: "secondary", onclick: () => { store.setItem(PROJECT, p.id); showWho(); say("Using " + p.id); location.hash = "#/modes"; } }, "Use"), " ",
        el("button", { type: "button", class: "secondary", onclick: () => showKeys(p.id, keysBox).catch(failure) }, "Keys"))])),
    el("h2", {}, "New project"), summary, createForm, keysBox,
    el("h2", {}, "Tiers"),
    table(["Tier", "Modes", "Searches", "Requests/s", "Largest match", "Min cycle (s)", ""], tiers.map((t) => [t.name, fmt(t.maxGameModes), fmt(t.maxConcurrentSearches), fmt(t.requestsPerSecond), fmt(t.maxMatchSize), fmt(t.minCycleDurationSeconds),
      el("a", { href: "#/operator/tiers/" + enc(t.name) }, "Edit " + t.name)])));
}
/** The keys of `projectId` in `box`; `created`: a key just made, shown once (and focused). */
async function showKeys(projectId, box, created) {
  const keys = await api("GET", "/v1/projects/" + enc(projectId) + "/keys");
  const nameIn = input({ required: true, autocomplete: "off" });
  const summary = el("div", { role: "alert", class: "error" });
  // Shown once, as text in this page only; never stored by the console.
  const made = created ? el("div", {}, el("p", {}, "The new key (copy it now, it is not shown again):"),
    el("pre", { class: "secret", tabindex: "-1", "aria-label": "The new key" }, created)) : el("div", {});
  const form = el("form", { class: "grid", novalidate: true }, field("Key name", nameIn, { name: "name" }), el("div", { class: "actions" }, el("button", { type: "submit" }, "Create key")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault(); clearErrors(form, summary);
    try {
      const k = await api("POST", "/v1/projects/" + enc(projectId) + "/keys", { name: nameIn.value.trim() });
      await showKeys(projectId, box, k.key);
    } catch (e) { formFailure(form, summary, e); }
  });
  fill(box, el("h2", {}, "Keys of " + projectId),
    table(["Key", "Name", "Prefix", "Scopes", "Last used", "Revoked", ""], keys.map((k) => [k.id, k.name, k.prefix, (k.scopes || []).join(" "), when(k.lastUsedAt), when(k.revokedAt),
      k.revokedAt ? "" : el("button", { type: "button", class: "secondary", onclick: async () => {
        if (!confirm("Revoke " + k.name + "?")) return;
        try { await api("DELETE", "/v1/projects/" + enc(projectId) + "/keys/" + enc(k.id)); await showKeys(projectId, box); } catch (e) { failure(e); }
      } }, "Revoke")])), summary, form, made);
  box.querySelector("h2").setAttribute("tabindex", "-1");
  (created ? made.querySelector("pre") : box.querySelector("h2")).focus();
}
/** A tier's limits as the form names them (docs/game-modes.md, "Tier limits"), by field. */
const TIER_LABELS = {
  maxConcurrentSearches: "Live searches, at most",
  maxGameModes: "Game modes, at most",
  maxMatchSize: "Players in a match, at most",
  maxPendingTickets: "Tickets not yet searching, at most",
  minBaseTolerance: "Base tolerance, at least",
  minCycleDurationSeconds: "Cycle duration (seconds), at least",
  minExpansionMultiplier: "Expansion multiplier, at least",
  requestsPerSecond: "Requests per second",
  retentionDays: "Days matches are kept",
};
export async function tierPage(name) {
  const tier = await api("GET", "/v1/tiers/" + enc(name));
  const numeric = Object.keys(tier).filter((k) => typeof tier[k] === "number");
  const inputs = {};
  const summary = el("div", { role: "alert", class: "error" });
  const form = el("form", { class: "grid", novalidate: true }, numeric.map((k) => field(TIER_LABELS[k] || k, inputs[k] = input({ type: "number", step: "any", value: tier[k] }), { name: k, hint: k })),
    el("div", { class: "actions" }, el("button", { type: "submit" }, "Save tier"), el("a", { href: "#/operator" }, "Back")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault(); clearErrors(form, summary);
    const body = {};
    for (const k of numeric) body[k] = Number(inputs[k].value);
    try { await api("PUT", "/v1/tiers/" + enc(name), body); say("Saved " + name); location.hash = "#/operator"; }
    catch (e) { formFailure(form, summary, e); }
  });
  page("Tier " + name, summary, form);
}
