// Simulate: a scenario run in the server on the matching core, and its report.
import { cards, clearErrors, el, field, fill, fmt, page, showErrors, table } from "./dom.js";
import { api, formFailure, P } from "./api.js";
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
    field("Arrivals CSV (optional)", csv, { name: "arrivalsCsv", hint: "Columns at and playerId, and optionally mmr, pingMs, partyId, partyMembers, latencies, event and attributes (as matchplane simulate reads them). Needed when the scenario names a file in arrivalsCsv: the browser cannot read that path." }),
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
      formFailure(form, summary, error, (e) => ({ field: fieldOf(e.field), message: (e.field ? e.field + ": " : "") + e.message }));
    }
  });
  page("Simulate", summary, form, out);
}
function simulationReport(report, scenario) {
  const arrived = {};
  for (const a of (scenario.arrivals || []).concat(csvArrivals(scenario.arrivalsCsvText))) if (a.playerId !== undefined && arrived[a.playerId] === undefined) arrived[a.playerId] = a.at;
  // A scenario with `compare` is answered as `simulate --compare` prints it:
  // `{a, b, diff}`, two reports and their headline figures side by side.
  if (report && report.a && report.b && !report.stats) return comparisonReport(report, scenario, arrived);
  return [el("h2", { tabindex: "-1" }, "Report"), reportBody(report, arrived, { level: 2, of: "" })];
}
/** The figures of a comparison's `diff` with their names for reading, in the order of `simulate --compare --format table`. */
const FIGURES = [
  ["matches", "Matches"], ["matchedPlayers", "Matched players"], ["matchedShare", "Matched share"], ["stillWaiting", "Still waiting"],
  ["waitP50", "Wait p50 (s), all"], ["waitP90", "Wait p90 (s), all"], ["waitP99", "Wait p99 (s), all"],
  ["matchedWaitP50", "Wait p50 (s), matched"], ["matchedWaitP90", "Wait p90 (s), matched"],
  ["mmrSpreadP50", "MMR spread p50"], ["mmrSpreadP90", "MMR spread p90"], ["teamImbalanceP50", "Team imbalance p50"], ["teamImbalanceP90", "Team imbalance p90"],
  ["relaxedMatches", "Relaxed matches"], ["botMatches", "Bot matches"], ["ended", "Ended (failed or expired)"],
];
/** b's change relative to a, as the CLI's table says it: "+25%", "=" when both are equal, "–" without both or from 0. */
function change(a, b) {
  if (typeof a !== "number" || typeof b !== "number") return "–";
  if (a === b) return "=";
  if (a === 0) return "–";
  const pct = Math.round(((b - a) / Math.abs(a)) * 100);
  return (pct >= 0 ? "+" : "") + pct + "%";
}
function comparisonReport(report, scenario, arrived) {
  const name = (mode) => (mode && typeof mode === "object" && typeof mode.name === "string" && mode.name ? mode.name : null);
  const nameA = name(scenario.gameMode), nameB = name(scenario.compare);
  const diff = report.diff || {};
  const known = FIGURES.map(([key]) => key);
  const figures = FIGURES.filter(([key]) => key in diff).concat(Object.keys(diff).filter((key) => !known.includes(key)).map((key) => [key, key]));
  const rows = figures.map(([key, label]) => {
    const [a, b] = Array.isArray(diff[key]) ? diff[key] : [];
    const digits = key === "matchedShare" ? 2 : undefined;
    return [label, fmt(a, digits), fmt(b, digits), change(a, b)];
  });
  return [
    el("h2", { tabindex: "-1" }, "Comparison"),
    el("p", { class: "muted" }, "The same arrivals and seed run twice: a with the scenario's gameMode", nameA ? " (" + nameA + ")" : "",
      ", b with its compare", nameB ? " (" + nameB + ")" : "", ". Change is b's figure relative to a's."),
    table(["Figure", "a", "b", "Change"], rows, "a and b side by side"),
    el("section", { class: "side", "data-side": "a" }, el("h2", {}, "a: " + (nameA || "the scenario's gameMode")), reportBody(report.a, arrived, { level: 3, of: "a" })),
    el("section", { class: "side", "data-side": "b" }, el("h2", {}, "b: " + (nameB || "the scenario's compare")), reportBody(report.b, arrived, { level: 3, of: "b" })),
  ];
}
/** A waiting reason for reading: its code, and the rule a RULE_NOT_MET names. */
function reason(r) {
  if (!r || typeof r !== "object" || !r.code) return JSON.stringify(r);
  return r.rule !== undefined && r.rule !== null ? r.code + " (rule " + r.rule + ")" : r.code;
}
/**
 * One report's figures: cards, percentiles, histograms, matches and why
 * the unmatched waited. `level` is its sub-headings' level; `of` names the
 * side of a comparison ("a", "b") or is "" for a single report.
 */
function reportBody(report, arrived, { level, of }) {
  const r = report || {};
  const s = r.stats || {};
  const waits = [];
  for (const m of r.matches || []) for (const team of m.teams || []) for (const p of team) if (p !== null && arrived[p] !== undefined) waits.push(m.at - arrived[p]);
  const hist = (values, width) => {
    if (!values.length) return null;
    const w = width || Math.max(1, Math.ceil(Math.max(...values) / 20));
    const counts = [];
    for (const v of values) { const i = Math.floor(v / w); counts[i] = (counts[i] || 0) + 1; }
    return { start: 0, width: w, counts: Array.from(counts, (c) => c || 0) };
  };
  const row = (label, p) => [label, fmt(p && p.p50), fmt(p && p.p90), fmt(p && p.p99), fmt(p && p.max)];
  const h = "h" + level, pre = of ? of + ": " : "";
  return [
    cards([["Matches", s.matches], ["Matched players", s.matchedPlayers], ["Still waiting", s.stillWaiting], ["Unmatched", (r.unmatched || []).length]]),
    table(["Figure", "p50", "p90", "p99", "max"], [row("Wait (s), matched", s.waitSeconds), row("Wait (s), all", s.waitSecondsAll), row("MMR spread", s.mmrSpread), row("Team imbalance", s.teamImbalance)], of ? "Summary of " + of : "Summary"),
    el("div", { class: "charts" },
      figure("Wait of matched players (s)", binsChart(hist(waits), "waits", pre + "Histogram of matched players' waits")),
      figure("MMR spread of matches", binsChart(hist((r.matches || []).map((m) => m.mmrSpread)), "matches", pre + "Histogram of the matches' MMR spread"))),
    el(h, {}, "Matches (first 100)"),
    table(["At (s)", "Teams", "MMR spread", "Team imbalance"], (r.matches || []).slice(0, 100).map((m) => [fmt(m.at), (m.teams || []).map((t) => t.map((p) => p === null ? "bot" : p).join(", ")).join(" vs "), fmt(m.mmrSpread), fmt(m.teamImbalance)])),
    el(h, {}, "Why the unmatched waited"),
    table(["Player", "Reason"], Object.entries(r.unmatchedReasons || {}).slice(0, 100).map(([p, why]) => [p, reason(why)])),
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
