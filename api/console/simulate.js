// Simulate: a scenario run in the server on the matching core, and its report.
import { cards, clearErrors, el, field, fill, fmt, page, showErrors, table } from "./dom.js";
import { api, failure, P, Problem } from "./api.js";
import { binsChart, figure } from "./charts.js";
import { needProject } from "./modes.js";

/** The field an answer's error belongs to: the CSV upload for the arrivals CSV, else the scenario. */
const fieldOf = (name) => (/^arrivalsCsv/.test(name || "") ? "arrivalsCsv" : "$other");

export function simulatePage() {
  if (needProject()) return;
  const text = el("textarea", { rows: 14, spellcheck: "false", placeholder: "{ \"gameMode\": {…}, \"tier\": \"pro\", \"seed\": 7, \"until\": 300, \"arrivals\": […] }" });
  const file = el("input", { type: "file", accept: ".json,application/json" });
  const csv = el("input", { type: "file", accept: ".csv,text/csv" });
  const out = el("div", { "aria-live": "polite" });
  const summary = el("div", { role: "alert", class: "error" });
  file.addEventListener("change", async () => { if (file.files[0]) text.value = await file.files[0].text(); });
  const form = el("form", { class: "grid", novalidate: true },
    field("Scenario (JSON)", text, { name: "$other", wide: true, hint: "The scenario of matchplane simulate. It runs in the server on the real matching core; live pools are never touched." }),
    field("Or upload a scenario file", file),
    field("Arrivals CSV (optional)", csv, { name: "arrivalsCsv", hint: "Columns at,playerId,mmr,pingMs,partyId,partyMembers. Needed when the scenario names a file in arrivalsCsv: the browser cannot read that path." }),
    el("div", { class: "actions" }, el("button", { type: "submit" }, "Run the simulation")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form, summary);
    let scenario;
    try { scenario = JSON.parse(text.value); } catch (e) { return showErrors(form, summary, [{ field: "$other", message: "Not JSON: " + e.message }]); }
    if (!scenario || typeof scenario !== "object" || Array.isArray(scenario)) return showErrors(form, summary, [{ field: "$other", message: "A scenario is a JSON object." }]);
    if (csv.files[0]) {
      // The uploaded file takes the place of the file the scenario names.
      delete scenario.arrivalsCsv;
      scenario.arrivalsCsvText = await csv.files[0].text();
    } else if (scenario.arrivalsCsv !== undefined) {
      // Never dropped silently: its arrivals would be missing from the run.
      return showErrors(form, summary, [{ field: "arrivalsCsv", message: "The scenario's arrivalsCsv names the file " + JSON.stringify(scenario.arrivalsCsv) + ", which the browser cannot read: upload it here, or remove arrivalsCsv from the scenario." }]);
    }
    fill(out, el("p", {}, "Running…"));
    try {
      const report = await api("POST", P("/simulate"), scenario);
      fill(out, simulationReport(report, scenario));
      out.querySelector("h2").focus();
    } catch (error) {
      fill(out);
      if (!(error instanceof Problem)) return failure(error);
      const errors = (error.body.errors && error.body.errors.length) ? error.body.errors : [{ field: "", message: error.message }];
      showErrors(form, summary, errors.map((e) => ({ field: fieldOf(e.field), message: (e.field ? e.field + ": " : "") + e.message })));
    }
  });
  page("Simulate", summary, form, out);
}
function simulationReport(report, scenario) {
  const s = report.stats || {};
  const arrived = {};
  for (const a of (scenario.arrivals || []).concat(csvArrivals(scenario.arrivalsCsvText))) if (a.playerId !== undefined && arrived[a.playerId] === undefined) arrived[a.playerId] = a.at;
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
/** The `at` and `playerId` of each row of arrivals CSV `text` (for the waits' histogram). */
function csvArrivals(text) {
  if (typeof text !== "string") return [];
  const lines = text.split(/\r?\n/).filter((l) => l.trim());
  const head = (lines.shift() || "").split(",").map((h) => h.trim());
  const at = head.indexOf("at"), id = head.indexOf("playerId");
  if (at < 0 || id < 0) return [];
  return lines.map((l) => l.split(",")).map((c) => ({ at: Number(c[at]), playerId: c[id] }));
}
