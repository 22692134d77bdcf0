// matchplane console: a small single-page app over the public REST API
// (api.js), one module per group of pages. No inline script, no other
// origin (see the page's CSP).
import { el, field, guardUnsaved, hasUnsaved, input, page, say } from "./dom.js";
import { enc } from "./dom.js";
import { api, isOperator, KEY, OPERATOR, onRefused, project, PROJECT, store } from "./api.js";
import { forgetAll } from "./charts.js";
import { modeFormPage, modesPage, versionsPage } from "./modes.js";
import { chartsPage, leaderboardPage, livePage } from "./views.js";
import { matchesPage, matchPage } from "./matches.js";
import { simulatePage } from "./simulate.js";
import { operatorPage, tierPage } from "./operator.js";

let cleanups = [];
/** Runs `fn` every `ms` while the page is shown. */
function every(ms, fn) {
  const id = setInterval(fn, ms);
  cleanups.push(() => clearInterval(id));
}

function signOut(message) {
  store.removeItem(KEY); store.removeItem(PROJECT); store.removeItem(OPERATOR);
  if (message) say(message, true);
  location.hash = "#/sign-in";
  route();
}
onRefused(signOut);

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
    for (const control of [secret, projectInput]) {
      control.setAttribute("aria-invalid", "false");
      document.getElementById(control.id + "-error").textContent = "";
    }
    // Nothing to send: said at the field (an empty credential would be
    // taken for the stored one, and its refusal for a sign-out).
    if (!credential) {
      secret.setAttribute("aria-invalid", "true");
      document.getElementById(secret.id + "-error").textContent = "Enter an API key of the project, or the operator token.";
      secret.focus();
      return;
    }
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
      // A 404: the project is not one this credential opens; else the
      // credential itself was refused.
      const wrong = error.status === 404 ? projectInput : secret;
      wrong.setAttribute("aria-invalid", "true");
      document.getElementById(wrong.id + "-error").textContent = error.status === 404 ? "No such project for this key: check the project id." : error.message;
      wrong.focus();
    }
  });
  page("Sign in", el("p", {}, "Sign in with an API key of your project, or with the operator token to manage projects, keys and tiers."), form);
}

function showWho() {
  const signedIn = !!store.getItem(KEY);
  document.getElementById("nav").hidden = !signedIn;
  for (const li of document.querySelectorAll(".operator-only")) li.hidden = !isOperator();
  // Written only when it changes: it is a live region.
  const who = document.getElementById("who");
  const text = signedIn ? (isOperator() ? "Operator" : "API key") + (project() ? " · project " + project() : "") : "";
  if (who.textContent !== text) who.textContent = text;
}
/** The hash of the page shown, to go back to when leaving it is called off. */
let shown = location.hash;
/** Shows the page of the location's hash (again, when it is the same). */
async function route() {
  if (location.hash !== shown && hasUnsaved() && !confirm("Leave this page? Its unsaved changes are lost.")) {
    // Back to the page, without drawing it again (its edits stay).
    history.replaceState(null, "", shown || "#/");
    return;
  }
  shown = location.hash;
  guardUnsaved(null);
  for (const stop of cleanups) stop();
  cleanups = [];
  forgetAll();
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
      if (view === "live") return await livePage(parts[1], every);
      if (view === "charts") return await chartsPage(parts[1], parts[3]);
      if (view === "versions") return await versionsPage(parts[1]);
      if (view === "leaderboard") return await leaderboardPage(parts[1]);
    }
    if (parts[0] === "matches" && parts[1]) return await matchPage(parts[1]);
    if (parts[0] === "matches") return await matchesPage(query, route);
    if (parts[0] === "simulate") return simulatePage();
    if (parts[0] === "operator" && parts[1] === "tiers" && parts[2]) return await tierPage(parts[2]);
    if (parts[0] === "operator") return await operatorPage(showWho, route);
    return await modesPage();
  } catch (error) {
    page("Something went wrong", el("p", { class: "error" }, error.message));
  }
}

document.getElementById("sign-out").addEventListener("click", () => signOut());
// A link to the page shown (the same hash) shows it again, fresh.
document.addEventListener("click", (event) => {
  const link = event.target instanceof Element ? event.target.closest("a[href^='#/']") : null;
  if (link && link.getAttribute("href") === location.hash) route();
});
// The skip link moves focus to the page's content; its `#main` is not a
// page to route to.
document.querySelector("a.skip").addEventListener("click", (event) => {
  event.preventDefault();
  document.getElementById("main").focus();
});
window.addEventListener("hashchange", route);
// A reload or a closed tab asks too, while a page holds unsaved edits.
window.addEventListener("beforeunload", (event) => {
  if (hasUnsaved()) { event.preventDefault(); event.returnValue = ""; }
});
route();
