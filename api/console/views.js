// A mode's views over its figures: the live pool, the charts over time and
// the leaderboard.
import { cards, el, enc, fill, fmt, page, table, when } from "./dom.js";
import { api, failure, M } from "./api.js";
import { barChart, binsChart, figure, forget, lineChart } from "./charts.js";

export async function livePage(name, every) {
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
    const waits = minute.waitSeconds || {};
    const reasons = Object.entries(pool.waitingReasons || {});
    stamp.textContent = pool.at ? "Last cycle " + when(pool.at) + "; refreshed every 3 seconds." : "No cycle has run yet; refreshed every 3 seconds.";
    forget(live);
    fill(live,
      cards([["Searching", pool.searching], ["Candidates", pool.candidates], ["Matched last cycle", pool.matched],
        ["Matches this minute", minute.matches || 0], ["Wait p50 (s)", waits.p50], ["Wait p90 (s)", waits.p90], ["Wait p99 (s)", waits.p99]]),
      el("div", { class: "charts" },
        figure("Waiting reasons", reasons.length ? barChart(reasons.map(([c]) => c), [{ values: reasons.map(([, n]) => n) }],
          "Searches waiting by reason: " + reasons.map(([c, n]) => c + " " + n).join(", "), true) : el("p", { class: "muted" }, "Nobody is waiting.")),
        figure("MMR of the pool", binsChart(pool.mmr, "MMR", "Histogram of the pool's MMR")),
        figure("Latency of the pool (ms)", binsChart(pool.latencyMs, "latency", "Histogram of the pool's latency"))));
    live.dataset.searching = String(pool.searching);
  };
  await refresh();
  every(3000, () => refresh().catch(failure));
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
  const history = await api("GET", M(name, "/stats/history?from=" + enc(from.toISOString()) + "&to=" + enc(to.toISOString()) + "&bucketSeconds=" + range[3]));
  const buckets = history.buckets;
  const slots = slotsOf(from, to, range[3]);
  const byStart = new Map(buckets.map((x) => [new Date(x.start).getTime(), x]));
  const perMinute = range[3] / 60;
  // A slot without a bucket is a gap (null), never a zero joined by a ramp.
  const pick = (f) => slots.map((t) => { const x = byStart.get(t); const v = x ? f(x) : null; return typeof v === "number" ? v : null; });
  const anyProposals = buckets.some((x) => x.proposals || x.declines);
  const chart = (series, description, integer) => lineChart(slots, series.map((values) => ({ values })), description, integer);
  page("Charts of " + name,
    el("div", { class: "range", role: "group", "aria-label": "Time range" }, RANGES.map(([id, label]) =>
      el("button", { type: "button", class: "secondary", "aria-pressed": id === range[0] ? "true" : "false", onclick: () => { location.hash = "#/modes/" + enc(name) + "/charts/" + id; } }, label))),
    buckets.length ? null : el("p", { class: "muted" }, "No searches or matches in this range."),
    el("div", { class: "charts" },
      figure("Wait time (seconds)", chart([pick((x) => x.waitSeconds && x.waitSeconds.p50), pick((x) => x.waitSeconds && x.waitSeconds.p90), pick((x) => x.waitSeconds && x.waitSeconds.p99)], "Wait time percentiles over time"), ["p50", "p90", "p99"]),
      figure("Matches per minute", chart([pick((x) => x.matches / perMinute)], "Matches per minute over time", perMinute === 1)),
      figure("MMR spread of matches", chart([pick((x) => x.mmrSpread && x.mmrSpread.p50), pick((x) => x.mmrSpread && x.mmrSpread.p90)], "MMR spread percentiles over time"), ["p50", "p90"]),
      figure("Searching (mean per cycle)", chart([pick((x) => x.searching)], "Pool size over time", true)),
      anyProposals ? figure("Proposals and declines", chart([pick((x) => x.proposals), pick((x) => x.declines)], "Proposals and declines over time", true), ["proposals", "declines"]) : null),
    el("p", { class: "muted" }, "A gap in a line is a " + (perMinute === 1 ? "minute" : "period") + " with nothing to show: no searches and no matches, or (for waits and MMR spread) no match."));
}

export async function leaderboardPage(name) {
  const board = await api("GET", M(name, "/leaderboard?limit=100"));
  page("Leaderboard of " + name, table(["Rank", "Player", "Rating", "Deviation", "Conservative", "Games"], board.items.map((r, i) => [String(i + 1), r.playerId, fmt(r.rating), fmt(r.deviation), fmt(r.conservative), fmt(r.games)])));
}
