// A mode's webhook as the console shows it: its health (`webhook.status`
// of the mode) and deliveries with their last answer.
import { el, enc, fill, table, when, say, secretBox } from "./dom.js";
import { api, failure, M, P, Problem } from "./api.js";

/**
 * Whether the project has a webhook endpoint, asked only when one of
 * `modes` sends to it (a project without one answers 404).
 */
export async function projectEndpointSet(modes) {
  if (!modes.some((m) => m.webhook && m.webhook.useProjectEndpoint)) return true;
  return api("GET", P("/webhook")).then(() => true, (e) => !(e instanceof Problem && e.status === 404));
}
/**
 * The health of a mode's webhook as a short text: "none", "healthy",
 * "failing", "disabled", or "no endpoint" (it sends to the project's
 * endpoint and the project has none: `endpointSet` false).
 */
export function healthWord(mode, endpointSet) {
  const hook = mode.webhook;
  if (!hook || (!hook.url && !hook.useProjectEndpoint)) return "none";
  if (hook.enabled === false) return "disabled";
  if (hook.useProjectEndpoint && endpointSet === false) return "no endpoint";
  return hook.status && hook.status.failing ? "failing" : "healthy";
}
/** A cell of the modes list: the health word, marked when failing. */
export function healthCell(mode, endpointSet) {
  const word = healthWord(mode, endpointSet);
  const s = (mode.webhook || {}).status || {};
  return el("span", { class: word === "failing" || word === "no endpoint" ? "badge bad" : "badge" }, word,
    word === "failing" && s.lastError ? " (" + s.lastError + ")" : null);
}
/** What the mode page says of its webhook's health. */
function healthText(mode, endpointSet) {
  const word = healthWord(mode, endpointSet);
  const s = (mode.webhook || {}).status || {};
  if (word === "none") return "No webhook: matches are not sent anywhere.";
  if (word === "no endpoint") return "Set to send to the project's endpoint, and the project has none: its matches are not sent until one is set (PUT /v1/projects/{projectId}/webhook, docs/webhooks.md).";
  const where = (mode.webhook || {}).useProjectEndpoint ? " (to the project's endpoint)" : "";
  if (where && word === "healthy") return "Sent to the project's endpoint" + (s.lastSuccessAt ? ": last delivered " + when(s.lastSuccessAt) : ": nothing failed") + ".";
  if (where && word === "failing") return "Failing" + where + " since " + when(s.since) + ": " + (s.consecutiveFailures || 0) + " attempts failed in a row" + (s.lastError ? " (" + s.lastError + ")" : "") + ".";
  if (word === "disabled") return "The webhook is disabled: matches are not sent.";
  if (word === "failing") {
    return "Failing since " + when(s.since) + ": " + (s.consecutiveFailures || 0) + " attempts failed in a row, the last one " +
      when(s.lastFailureAt) + (s.lastError ? " (" + s.lastError + ")" : "") + ".";
  }
  return "Healthy" + (s.lastSuccessAt ? ": last delivered " + when(s.lastSuccessAt) : ": nothing failed") + ".";
}
/** A delivery's last answer: status code or error, and when. */
function lastAnswer(d) {
  const last = (d.attempts || [])[(d.attempts || []).length - 1];
  return last ? (last.statusCode || last.error || "–") + " at " + when(last.attemptedAt) : "–";
}
/** The table of deliveries `list`; with `matchColumn`, a link to each one's match. */
export function deliveriesTable(list, caption, matchColumn) {
  const head = ["Delivery", "Event"].concat(matchColumn ? ["Match"] : [], ["Status", "Attempts", "Last answer", "Next attempt"]);
  return table(head, list.map((d) => [d.id, d.eventType].concat(
    matchColumn ? [d.matchId ? el("a", { href: "#/matches/" + enc(d.matchId) }, d.matchId) : "–"] : [],
    [el("span", { class: d.status === "failed" ? "badge bad" : "badge" }, d.status), String(d.attemptCount), lastAnswer(d), when(d.nextAttemptAt)])), caption);
}
/** A button that sends a signed test event to mode `name`'s webhook and says how it went. */
export function testButton(name, id) {
  return el("button", { type: "button", class: "secondary", id, onclick: async () => {
    try {
      const r = await api("POST", M(name, "/webhook/test"));
      say(r.delivered ? "Test delivered: " + r.statusCode : "Test failed: " + (r.error || r.statusCode), !r.delivered);
    } catch (e) { failure(e); }
  } }, "Send a webhook test to " + name);
}
/** The health of mode `mode`'s webhook, for the top of its page (marked when failing). */
export function healthLine(mode, endpointSet) {
  const word = healthWord(mode, endpointSet);
  const failing = word === "failing" || word === "no endpoint";
  return el("p", { id: "webhook-health", class: failing ? "alert" : "muted", role: failing ? "alert" : null, "data-health": word },
    el("strong", {}, "Webhook: "), healthText(mode, endpointSet), " ", el("a", { href: "#webhook", onclick: (ev) => { ev.preventDefault(); document.getElementById("webhook").focus(); } }, "Deliveries"));
}
/** The webhook section of mode page `mode`: its newest deliveries and a test button. */
export function webhookSection(mode) {
  const box = el("div", {}, el("p", { class: "muted" }, "Loading deliveries…"));
  const show = async () => {
    const list = await api("GET", M(mode.name, "/deliveries?limit=20"));
    fill(box, deliveriesTable(list, "The newest deliveries of this mode, webhook tests included", true));
  };
  show().catch((e) => { fill(box, el("p", { class: "error" }, e.message)); });
  return [
    el("h2", { id: "webhook", tabindex: "-1" }, "Webhook deliveries"),
    box,
    el("div", { class: "actions" },
      el("button", { type: "button", class: "secondary", onclick: () => show().catch(failure) }, "Refresh deliveries"),
      mode.webhook && (mode.webhook.url || mode.webhook.useProjectEndpoint) ? testButton(mode.name, "mode-webhook-test") : null),
  ];
}

/**
 * The project's one webhook endpoint (docs/webhooks.md, "One endpoint for
 * every mode of a project"): its URL, whether it is enabled, its failing
 * state, and a button to rotate its secret (shown once). Read at once when
 * one of `modes` uses it, else on a button (a project without one answers
 * 404, which a page must not ask for unasked).
 */
export function projectEndpointSection(modes) {
  const box = el("div", { id: "project-webhook" }, el("p", { class: "muted" }, "Loading…"));
  const show = (hook) => {
    if (!hook) {
      return fill(box, el("p", { class: "muted" }, "No project endpoint: each mode sends to its own URL. Set one with PUT /v1/projects/{projectId}/webhook."));
    }
    const s = hook.status || {};
    const failing = !!s.failing;
    fill(box,
      table(["URL", "Enabled", "Event types", "Health"], [[hook.url, hook.enabled ? "yes" : "no",
        hook.eventTypes ? hook.eventTypes.join(", ") : "every type",
        el("span", { class: failing ? "badge bad" : "badge", "data-health": failing ? "failing" : "healthy" },
          failing ? "failing since " + when(s.since) + (s.lastError ? " (" + s.lastError + ")" : "") : "healthy")]],
      "The project's webhook endpoint, used by modes with useProjectEndpoint"),
      el("div", { class: "actions" }, el("button", { type: "button", class: "secondary", id: "project-webhook-rotate", onclick: async () => {
        try {
          const r = await api("POST", P("/webhook/rotate-secret"));
          const shown = box.querySelector(".secret-box");
          const next = secretBox("The endpoint's new signing secret (the old one signs too for 24 hours)", r.secret);
          if (shown) shown.replaceWith(next); else box.append(next);
        } catch (e) { failure(e); }
      } }, "Rotate the endpoint's secret")));
  };
  const load = () => api("GET", P("/webhook")).then(show, (e) => {
    if (e instanceof Problem && e.status === 404) show(null);
    else fill(box, el("p", { class: "error" }, e.message));
  });
  // The button that loads it is replaced: focus goes to what it showed.
  const loadHere = () => load().then(() => {
    const first = box.querySelector("input, button, a");
    if (first) first.focus();
    else { box.setAttribute("tabindex", "-1"); box.focus(); }
  });
  if ((modes || []).some((m) => m.webhook && m.webhook.useProjectEndpoint)) load();
  else fill(box, el("p", { class: "muted" }, "No mode uses the project's endpoint."),
    el("div", { class: "actions" }, el("button", { type: "button", class: "secondary", id: "project-webhook-show", onclick: loadHere }, "Show the project's endpoint")));
  return [el("h2", {}, "Project webhook endpoint"), box];
}
