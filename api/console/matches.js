// The project's matches: the list (filtered by mode, newest first) and one
// match with its teams and webhook deliveries.
import { cards, el, enc, field, fill, fmt, page, say, select, table, when } from "./dom.js";
import { api, failure, P } from "./api.js";
import { needProject } from "./modes.js";
import { deliveriesTable, testButton } from "./webhook.js";

/**
 * A stored match's `status` (docs/acceptance.md): its label, and whether the
 * match was made (only a made match has a webhook to redeliver; a proposal,
 * open or cancelled, never had one). A match without a status is a made one.
 */
const STATUS = {
  proposed: ["open proposal", false],
  made: ["made", true],
  cancelled: ["cancelled proposal", false],
  released: ["made, released", true],
  unassigned: ["made, unassigned", true],
};
const statusOf = (m) => STATUS[m.status || "made"] || [String(m.status), false];
export const wasMade = (m) => statusOf(m)[1];

export async function matchesPage(query, rerender) {
  if (needProject()) return;
  const params = new URLSearchParams(query || "");
  const modes = await api("GET", P("/game-modes"));
  const mode = params.get("gameMode") || "";
  const qs = new URLSearchParams({ limit: "50" });
  if (mode) qs.set("gameMode", mode);
  if (params.get("cursor")) qs.set("cursor", params.get("cursor"));
  const pageData = await api("GET", P("/matches?" + qs));
  const filter = select([["", "Every mode"]].concat(modes.map((m) => m.name)), mode);
  // The list changes when the form is sent (Show), not at every arrow key
  // in the select.
  const filterForm = el("form", { class: "grid filter" }, field("Game mode", filter),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "secondary", id: "show-matches" }, "Show")));
  filterForm.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = "#/matches" + (filter.value ? "?gameMode=" + enc(filter.value) : "");
  });
  const players = (m) => (m.teams || []).map((t) => (t.players || []).map((p) => p.playerId).join(", ")).join(" vs ");
  const older = pageData.nextCursor
    ? el("a", { href: "#/matches?" + new URLSearchParams(Object.assign(mode ? { gameMode: mode } : {}, { cursor: pageData.nextCursor })) }, "Older matches")
    : el("span", { class: "muted" }, params.get("cursor") ? "No older matches." : null);
  page("Matches",
    filterForm,
    el("div", { class: "actions" }, el("button", { type: "button", class: "secondary", id: "refresh", onclick: rerender }, "Refresh")),
    table(["Match", "Mode", "Status", "At", "Teams", "MMR spread"], pageData.items.map((m) => [
      el("a", { href: "#/matches/" + enc(m.matchId) }, m.matchId), m.gameMode, el("span", { class: "status-" + (m.status || "made") }, statusOf(m)[0]), when(m.createdAt), players(m), fmt(m.quality && m.quality.mmrSpread)])),
    el("p", {}, older));
}

export async function matchPage(id) {
  const m = await api("GET", P("/matches/" + enc(id)));
  const deliveriesBox = el("div", {});
  const showDeliveries = async () => {
    const list = await api("GET", P("/matches/" + enc(id) + "/deliveries"));
    fill(deliveriesBox, deliveriesTable(list, "Webhook deliveries of this match"));
  };
  const quality = m.quality || {};
  const made = wasMade(m);
  const answers = m.answers && typeof m.answers === "object" ? m.answers : null;
  const headers = ["Player", "Ticket", "Party", "MMR", "Ping (ms)", "Wait (s)"].concat(answers ? ["Answer"] : []);
  page("Match " + id,
    cards([["Mode", m.gameMode], ["Status", statusOf(m)[0]], ["Version", m.gameModeVersion], ["MMR spread", quality.mmrSpread], ["Team imbalance", quality.teamImbalance]]),
    el("p", { class: "muted", id: "match-status" }, (made ? "Made " : "Proposed ") + when(m.createdAt) + (m.region ? " in " + m.region : "") +
      (made ? "" : m.status === "cancelled" ? ": a cancelled proposal, never made (no webhook was sent)" : ": waiting for the players' answers"), " · ",
      el("a", { href: "#/modes/" + enc(m.gameMode) + "/edit" }, "the mode " + m.gameMode + " and its webhook")),
    el("h2", {}, "Teams"),
    (m.teams || []).map((t, i) => table(headers, (t.players || []).map((p) =>
      [p.playerId, p.ticketId || "–", p.partyId || "–", fmt(p.mmr), fmt(p.pingMs), fmt(p.waitSeconds)].concat(answers ? [answers[p.ticketId] || "–"] : [])), "Team " + (t.index === undefined ? i : t.index) + (t.meanMmr !== undefined ? ", mean MMR " + fmt(t.meanMmr) : ""))),
    el("h2", {}, "Deliveries"), deliveriesBox,
    el("div", { class: "actions" },
      el("button", { type: "button", class: "secondary", id: "refresh-deliveries", onclick: () => showDeliveries().catch(failure) }, "Refresh deliveries"),
      // A proposal was never made: it has no match.made delivery to redeliver.
      made ? el("button", { type: "button", id: "redeliver", onclick: async () => {
        try { await api("POST", P("/matches/" + enc(id) + "/deliveries/redeliver")); say("Queued again"); await showDeliveries(); } catch (e) { failure(e); }
      } }, "Redeliver") : null,
      testButton(m.gameMode, "webhook-test")));
  await showDeliveries();
}
