// The REST fallback's messages from polled statuses, served by a `fetch` of
// our own: the statuses the server answers in turn (docs/searching.md,
// docs/acceptance.md), without waiting for a cycle to produce them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { search } from "../dist/src/index.js";
import { all } from "./dev.mjs";

const searching = (code) => ({ ticketId: "tkt_1", status: "searching", gameMode: "duel", queuedAt: "2026-12-01T10:00:00Z", waitSeconds: 1, waitingReason: code ? { code } : null });
const proposed = (matchId) => ({ ticketId: "tkt_1", status: "proposed", gameMode: "duel", proposal: { matchId, acceptBy: "2026-12-01T10:00:20Z", acceptInSeconds: 20, accepted: [] } });
const matched = { ticketId: "tkt_1", status: "matched", gameMode: "duel", match: { matchId: "mat_2" } };

/** A `fetch` that starts the search and answers each poll with the next of `statuses` (the last one over and over); every other POST's path and query go to `posted`. */
function canned(statuses, posted = []) {
  const left = [...statuses];
  return async (url, init = {}) => {
    const method = init.method ?? "GET";
    const path = new URL(url).pathname;
    if (method === "POST" && path !== "/v1/searches") posted.push(path + new URL(url).search);
    let body = {};
    if (method === "POST" && path === "/v1/searches") body = { status: "searching", ticketId: "tkt_1" };
    else if (method === "GET") body = left.length > 1 ? left.shift() : left[0];
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
  };
}

/** Every message of a REST search over `statuses`, accepting each proposal (the answers' paths go to `posted`). */
async function polled(statuses, posted = []) {
  const s = await search("prj_1.duel.tkt_1.secret", { baseUrl: "http://mm.test", transport: "rest", pollIntervalMs: 500, fetch: canned(statuses, posted) });
  const seen = [];
  s.onMessage((m) => m.type === "proposed" && void s.accept());
  const timer = setTimeout(() => s.close(), 20_000);
  try {
    seen.push(...(await all(s)));
  } finally {
    clearTimeout(timer);
  }
  return seen.map((m) => (m.type === "status" ? `status ${m.waitingReason?.code ?? null}` : m.type));
}

test("REST: a search the first poll reads matched or proposed still tells searching first, as the socket does", async () => {
  assert.deepEqual(await polled([matched]), ["searching", "matched"]);
  assert.deepEqual(await polled([proposed("mat_1"), matched]), ["searching", "proposed", "matched"]);
});

test("REST: MATCH_PENDING after the last accept is no requeue", async () => {
  // After everyone accepted, the ticket reads `searching` with MATCH_PENDING
  // until the match is stored; then `matched`.
  const kinds = await polled([searching("NO_CANDIDATES"), proposed("mat_1"), searching("MATCH_PENDING"), matched]);
  assert.deepEqual(kinds, ["searching", "status NO_CANDIDATES", "proposed", "status MATCH_PENDING", "matched"]);
});

test("REST: searching after a proposal for another reason is a requeue, also after MATCH_PENDING", async () => {
  const kinds = await polled([
    searching("NO_CANDIDATES"), proposed("mat_1"), searching(null), // declined by another: back in the queue
    proposed("mat_2"), searching("MATCH_PENDING"), searching("NO_CANDIDATES"), // pending, then back in the queue
    { ...matched, match: { matchId: "mat_3" } },
  ]);
  assert.deepEqual(kinds, [
    "searching", "status NO_CANDIDATES", "proposed", "requeued", "status null",
    "proposed", "status MATCH_PENDING", "requeued", "status NO_CANDIDATES", "matched",
  ]);
});

test("REST: each accept names the proposal it answers", async () => {
  // An accept meant for a proposal that closed meanwhile must not count in
  // the next one (docs/acceptance.md, "Naming the proposal").
  const posted = [];
  await polled([searching(null), proposed("mat_1"), searching(null), proposed("mat_2"), matched], posted);
  assert.deepEqual(posted, ["/v1/searches/tkt_1/accept?matchId=mat_1", "/v1/searches/tkt_1/accept?matchId=mat_2"]);
});

test("REST: the wait in status messages keeps counting, against a real server", async (t) => {
  // A lone duel player: the waiting reason stays the same, the wait grows,
  // and each poll that sees a new whole second of it says so (README's
  // "waiting N s"), as the socket's status messages do with each ping.
  const { BackendClient } = await import("../dist/src/index.js");
  const { duel, startDev } = await import("./dev.mjs");
  const dev = await startDev();
  t.after(() => dev.stop());
  const backend = new BackendClient(dev);
  await backend.putGameMode("ts-alone", duel("ts-alone", "http://127.0.0.1:9/hook"));
  const { token } = await backend.createTicket({ gameMode: "ts-alone", playerId: "ana", attributes: { mmr: 1500 } });
  const s = await search(token, { baseUrl: dev.baseUrl, transport: "rest", pollIntervalMs: 500 });
  const timer = setTimeout(() => s.close(), 5_000);
  const waits = [];
  try {
    for await (const m of s) if (m.type === "status") waits.push(m.waitSeconds);
  } finally {
    clearTimeout(timer);
  }
  assert.ok(waits.length >= 4 && waits.at(-1) >= 3.5, `statuses' waits: ${waits}`);
  assert.deepEqual(waits, [...waits].sort((a, b) => a - b));
});
