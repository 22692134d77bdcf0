// A mode's views over its figures: the live pool (with, for a mode with
// rules, what each rule keeps waiting), the charts over time and the
// leaderboard.
import { cards, el, enc, fill, fmt, page, table, when } from "./dom.js";
import { api, failure, M } from "./api.js";
import { barChart, binsChart, figure, forget, lineChart } from "./charts.js";
import { rated } from "./modes.js";

/** Minutes of history the live view's Rules section covers. */
const RULE_MINUTES = 30;
/** Rules drawn at most in a chart (the rest are in the table). */
const CHART_RULES = 6;

export async function livePage(name, every) {
  const live = el("div", { "aria-live": "off" });
  const stamp = el("p", { class: "muted" });
  // The figures are redrawn every 3 seconds unless paused, so that a
  // reader (or a screen reader) keeps their place.
  let paused = false;
  const pause = el("button", { type: "button", class: "secondary", id: "pause-live", "aria-pressed": "false", onclick: () => {
    paused = !paused;
    pause.setAttribute("aria-pressed", String(paused));
  } }, "Pause updates");
  const mode = await api("GET", M(name));
  const rules = Array.isArray(mode.rules) ? mode.rules : [];
  page("Live pool of " + name, stamp, el("div", { class: "actions" }, pause), live,
    el("p", {}, el("a", { href: "#/modes/" + enc(name) + "/charts" }, "Charts over time")));
  const refresh = async () => {
    // Two small reads, whatever the pool's size: the worker's summary of
    // its last cycle, and the last minutes of the history (half an hour
    // of them for a mode with rules, for what each rule turned away).
    const since = new Date(Date.now() - (rules.length ? RULE_MINUTES * 60e3 : 120e3)).toISOString();
    // A mode with role queues also reads its stats, for their `roles`.
    const [pool, history, stats] = await Promise.all([api("GET", M(name, "/pool")),
      api("GET", M(name, "/stats/history?bucketSeconds=60&from=" + enc(since))),
      mode.composition ? api("GET", M(name, "/stats")) : null]);
    // The latest minute with figures, if within the last two.
    const recent = history.buckets.filter((x) => new Date(x.start).getTime() >= Date.now() - 120e3);
    const minute = recent[recent.length - 1] || {};
    const waits = minute.waitSeconds || {};
    const reasons = Object.entries(pool.waitingReasons || {});
    stamp.textContent = pool.at ? "Last cycle " + when(pool.at) + "; refreshed every 3 seconds unless paused." : "No cycle has run yet; refreshed every 3 seconds unless paused.";
    forget(live);
    fill(live,
      cards([["Searching", pool.searching], ["Candidates", pool.candidates], ["Matched last cycle", pool.matched],
        ["Matches this minute", minute.matches || 0], ["Wait p50 (s)", waits.p50], ["Wait p90 (s)", waits.p90], ["Wait p99 (s)", waits.p99]]),
      el("div", { class: "charts" },
        figure("Waiting reasons", reasons.length ? barChart(reasons.map(([c]) => c), [{ values: reasons.map(([, n]) => n) }],
          "Searches waiting by reason: " + reasons.map(([c, n]) => c + " " + n).join(", "), true) : el("p", { class: "muted" }, "Nobody is waiting.")),
        figure("MMR of the pool", binsChart(pool.mmr, "MMR", "Histogram of the pool's MMR")),
        figure("Latency of the pool (ms)", binsChart(pool.latencyMs, "latency", "Histogram of the pool's latency"))),
      rules.length ? rulesSection(rules, pool, history, since) : null,
      mode.composition ? rolesSection((stats && stats.roles) || {}, pool.waitingByRole || {}) : null);
    live.dataset.searching = String(pool.searching);
  };
  await refresh();
  // A failure is said once, not every 3 seconds, until a refresh works.
  let failed = "";
  every(3000, async () => {
    if (paused) return;
    try {
      await refresh();
      failed = "";
    } catch (error) {
      if (String(error.message) !== failed) failure(error);
      failed = String(error.message);
    }
  });
}

/**
 * Which rule keeps players waiting (docs/rules.md): per rule, the searches
 * waiting on it now and the candidates it turned away in the last cycle
 * (the pool view), and over the last minutes (the stats history's
 * `ruleTurnedAway`), as a table and a line per rule.
 */
function rulesSection(rules, pool, history, since) {
  const waiting = pool.waitingByRule || {};
  const turned = pool.ruleTurnedAway || {};
  const total = {};
  for (const b of history.buckets) for (const [rule, n] of Object.entries(b.ruleTurnedAway || {})) total[rule] = (total[rule] || 0) + n;
  // The mode's rules in their order, then any other name the figures hold
  // (a rule renamed or removed since).
  const names = rules.map((r) => r.name);
  for (const n of Object.keys(waiting).concat(Object.keys(turned), Object.keys(total))) if (!names.includes(n)) names.push(n);
  const what = (n) => { const r = rules.find((x) => x.name === n); return r ? r.type + " on " + r.attribute : "no longer a rule"; };
  const slots = slotsOf(new Date(since), new Date(), 60);
  const byStart = new Map(history.buckets.map((x) => [new Date(x.start).getTime(), x]));
  const drawn = names.filter((n) => total[n]).sort((a, b) => total[b] - total[a]).slice(0, CHART_RULES);
  const series = drawn.map((n) => ({ values: slots.map((t) => { const x = byStart.get(t); return x ? (x.ruleTurnedAway || {})[n] || 0 : null; }) }));
  return el("section", { class: "rules", "aria-labelledby": "rules-heading" },
    el("h2", { id: "rules-heading" }, "Rules"),
    el("p", { class: "muted" }, "Searches waiting on each rule (RULE_NOT_MET names it), and the candidates each rule turned away: a rule that turns many away costs wait time."),
    table(["Rule", "Checks", "Waiting on it now", "Turned away last cycle", "Turned away, last " + RULE_MINUTES + " minutes"],
      names.map((n) => [n, what(n), fmt(waiting[n] || 0), fmt(turned[n] || 0), fmt(total[n] || 0)])),
    drawn.length
      ? figure("Turned away by rule, per minute", lineChart(slots, series, "Candidates each rule turned away per minute: " + drawn.map((n) => n + " " + total[n]).join(", "), true, drawn), drawn)
      : el("p", { class: "muted" }, "No rule turned anyone away in the last " + RULE_MINUTES + " minutes."));
}

/**
 * A role-queue mode's figures per role seat over the last hour (the
 * stats' `roles`, docs/rules.md, "Role waits"): players matched in the
 * role and their waits' p50 and p90; with `waiting` (the pool's
 * `waitingByRole`, on the live view), the searches waiting now that
 * listed each role.
 */
function rolesSection(roles, waiting) {
  const names = Object.keys(roles);
  for (const role of Object.keys(waiting || {})) if (!names.includes(role)) names.push(role);
  const rows = names.map((role) => {
    const r = roles[role] || {};
    const w = r.waitSeconds || {};
    return (waiting ? [role, fmt(waiting[role] || 0)] : [role]).concat([fmt(r.matched || 0), w.p50 === undefined ? "–" : fmt(w.p50), w.p90 === undefined ? "–" : fmt(w.p90)]);
  });
  const head = (waiting ? ["Role", "Waiting now (listed it)"] : ["Role"]).concat(["Matched, last hour", "Wait p50 (s)", "Wait p90 (s)"]);
  return el("section", { class: "roles", "aria-labelledby": "roles-heading" },
    el("h2", { id: "roles-heading" }, waiting ? "Roles" : "Roles, last hour"),
    names.length ? table(head, rows) : el("p", { class: "muted" }, "Nobody waiting and no match in the last hour."));
}

/** The ranges of the charts: id, button text, length (s), bucket (s). */
const RANGES = [["hour", "Last hour", 3600, 60], ["day", "Last day", 86400, 900], ["14d", "Last 14 days", 14 * 86400, 3600]];

/**
 * Every slot start (ms) of a range, empty slots included: the API's
 * buckets start at multiples of the bucket length since the epoch
 * (docs/console.md, "The routes behind the pages").
 */
function slotsOf(from, to, bucketSeconds) {
  const step = bucketSeconds * 1000;
  const slots = [];
  for (let t = Math.floor(from.getTime() / step) * step; t <= to.getTime(); t += step) slots.push(t);
  return slots;
}

export async function chartsPage(name, rangeName) {
  const range = RANGES.find((r) => r[0] === rangeName) || RANGES[0];
  const to = new Date();
  const from = new Date(to.getTime() - range[2] * 1000);
  // The stats too, for a role-queue mode's per-role figures of the last
  // hour (docs/rules.md, "Role waits"); other modes have no `roles`.
  const [history, stats] = await Promise.all([
    api("GET", M(name, "/stats/history?from=" + enc(from.toISOString()) + "&to=" + enc(to.toISOString()) + "&bucketSeconds=" + range[3])),
    api("GET", M(name, "/stats"))]);
  const buckets = history.buckets;
  const slots = slotsOf(from, to, range[3]);
  const byStart = new Map(buckets.map((x) => [new Date(x.start).getTime(), x]));
  const perMinute = range[3] / 60;
  // The minutes a bucket covers so far: the current one is not over yet,
  // and a rate over its whole length would read low.
  const minutesOf = (x) => Math.max(1, Math.min(perMinute, (to.getTime() - new Date(x.start).getTime()) / 60e3));
  // A slot without a bucket is a gap (null), never a zero joined by a ramp.
  const pick = (f) => slots.map((t) => { const x = byStart.get(t); const v = x ? f(x) : null; return typeof v === "number" ? v : null; });
  const anyProposals = buckets.some((x) => x.proposals || x.declines);
  // Per rule, what it turned away over the range: the rules that turned
  // the most away get a line each (docs/rules.md).
  const ruleTotals = {};
  for (const x of buckets) for (const [rule, n] of Object.entries(x.ruleTurnedAway || {})) ruleTotals[rule] = (ruleTotals[rule] || 0) + n;
  const ruleNames = Object.keys(ruleTotals).sort((a, b) => ruleTotals[b] - ruleTotals[a]).slice(0, CHART_RULES);
  const chart = (series, description, integer, names) => lineChart(slots, series.map((values) => ({ values })), description, integer, names);
  page("Charts of " + name,
    el("div", { class: "range", role: "group", "aria-label": "Time range" }, RANGES.map(([id, label]) =>
      el("button", { type: "button", class: "secondary", "aria-pressed": id === range[0] ? "true" : "false", onclick: () => { location.hash = "#/modes/" + enc(name) + "/charts/" + id; } }, label))),
    buckets.length ? null : el("p", { class: "muted" }, "No searches or matches in this range."),
    el("div", { class: "charts" },
      figure("Wait time (seconds)", chart([pick((x) => x.waitSeconds && x.waitSeconds.p50), pick((x) => x.waitSeconds && x.waitSeconds.p90), pick((x) => x.waitSeconds && x.waitSeconds.p99)], "Wait time percentiles over time", false, ["p50", "p90", "p99"]), ["p50", "p90", "p99"]),
      figure("Matches per minute", chart([pick((x) => x.matches / minutesOf(x))], "Matches per minute over time", perMinute === 1)),
      figure("MMR spread of matches", chart([pick((x) => x.mmrSpread && x.mmrSpread.p50), pick((x) => x.mmrSpread && x.mmrSpread.p90)], "MMR spread percentiles over time", false, ["p50", "p90"]), ["p50", "p90"]),
      figure("Searching (mean per cycle)", chart([pick((x) => x.searching)], "Pool size over time", true)),
      anyProposals ? figure("Proposals and declines", chart([pick((x) => x.proposals), pick((x) => x.declines)], "Proposals and declines over time", true, ["proposals", "declines"]), ["proposals", "declines"]) : null,
      ruleNames.length ? figure("Turned away by rule, per minute", chart(ruleNames.map((n) => pick((x) => ((x.ruleTurnedAway || {})[n] || 0) / minutesOf(x))), "Candidates each rule turned away per minute over time: " + ruleNames.map((n) => n + " " + ruleTotals[n]).join(", "), perMinute === 1, ruleNames), ruleNames) : null),
    stats.roles ? rolesSection(stats.roles) : null,
    el("p", { class: "muted" }, "A gap in a line is a " + (perMinute === 1 ? "minute" : "period") + " with nothing to show: no searches and no matches, or (for waits and MMR spread) no match."));
}

export async function leaderboardPage(name) {
  // A mode without enabled ratings has no leaderboard (the API answers 422):
  // say so instead of asking.
  const mode = await api("GET", M(name));
  if (!rated(mode)) {
    return page("Leaderboard of " + name, el("p", { class: "muted", id: "no-ratings" }, "This mode keeps no ratings, so it has no leaderboard. Add a ratings block (e.g. {\"ratings\": {\"enabled\": true}}) in its Other settings to rate players from reported results (docs/ratings.md)."),
      el("p", {}, el("a", { href: "#/modes/" + enc(name) + "/edit" }, "Edit " + name)));
  }
  const board = await api("GET", M(name, "/leaderboard?limit=100"));
  page("Leaderboard of " + name, table(["Rank", "Player", "Rating", "Deviation", "Conservative", "Games"], board.items.map((r, i) => [String(i + 1), r.playerId, fmt(r.rating), fmt(r.deviation), fmt(r.conservative), fmt(r.games)])));
}
