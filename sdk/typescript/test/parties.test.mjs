// Whole parties against a real `matchplane dev` (docs/game-modes.md#parties):
// the backend ends a party's searches in one call, and a party whose member
// never searches fails with PARTY_INCOMPLETE naming who is missing, on both
// transports.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { BackendClient, ProblemError, search } from "../dist/src/index.js";
import { duel, startDev } from "./dev.mjs";

let dev;
let backend;
before(async () => {
  dev = await startDev();
  backend = new BackendClient(dev);
});
after(() => dev?.stop());

const rest = { transport: "rest", pollIntervalMs: 500 };

/** Two against two, parties of up to two, an incomplete party failing after 5 s. */
async function partyMode(name) {
  const mode = { ...duel(name, "http://127.0.0.1:9/hook"), matchShape: [2, 2] };
  mode.parties = { allowParties: true, maxSize: 2, incompleteTimeoutSeconds: 5 };
  await backend.putGameMode(name, mode);
}

/** A member's ticket: every member's ticket carries the same `party`. */
const member = (gameMode, playerId, party) => backend.createTicket({ gameMode, playerId, attributes: { mmr: 1500 }, party });

/** Every message of a search until it ends; closed after `ms`, so the wait is bounded. */
async function until(s, ms) {
  const seen = [];
  const timer = setTimeout(() => s.close(), ms);
  try {
    for await (const m of s) seen.push(m);
  } finally {
    clearTimeout(timer);
  }
  return seen;
}

test("the backend ends a whole party's searches and each member's client sees cancelled", async () => {
  await partyMode("ts-party-end");
  const party = { id: "party-1", members: ["ana", "ben"] };
  const ana = await member("ts-party-end", "ana", party);
  const ben = await member("ts-party-end", "ben", party);
  const overSocket = await search(ana.token, { baseUrl: dev.baseUrl });
  const overRest = await search(ben.token, { baseUrl: dev.baseUrl, ...rest });
  // Both searches are live once the socket said `searching` (REST started on `search`).
  const first = await overSocket[Symbol.asyncIterator]().next();
  assert.equal(first.value?.type, "searching", JSON.stringify(first));

  const ended = await backend.endPartySearches("party-1", "ts-party-end");
  assert.equal(ended.partyId, "party-1");
  assert.equal(ended.gameMode, "ts-party-end");
  assert.deepEqual([...ended.cancelled].sort(), [ana.ticketId, ben.ticketId].sort());
  const [a, b] = await Promise.all([until(overSocket, 15_000), until(overRest, 15_000)]);
  for (const seen of [a, b]) assert.equal(seen.at(-1)?.type, "cancelled", JSON.stringify(seen));
  assert.equal((await backend.ticket(ana.ticketId)).status, "cancelled");

  // Nothing is left to end; an unknown mode is a problem.
  assert.deepEqual((await backend.endPartySearches("party-1", "ts-party-end")).cancelled, []);
  await assert.rejects(backend.endPartySearches("party-1", "nope"), (e) => e instanceof ProblemError && e.status === 404 && e.code === "GAME_MODE_NOT_FOUND");
});

test("a party whose member never searches fails with PARTY_INCOMPLETE naming who is missing", async () => {
  await partyMode("ts-party-incomplete");
  // cy's party waits for di, ed's for fay; neither ever searches.
  const cy = await member("ts-party-incomplete", "cy", { id: "party-2", members: ["cy", "di"] });
  const ed = await member("ts-party-incomplete", "ed", { id: "party-3", members: ["ed", "fay"] });
  const started = Date.now();
  const overSocket = await search(cy.token, { baseUrl: dev.baseUrl });
  const overRest = await search(ed.token, { baseUrl: dev.baseUrl, ...rest });
  const [c, e] = await Promise.all([until(overSocket, 15_000), until(overRest, 15_000)]);
  const elapsed = Date.now() - started;
  for (const [seen, missing] of [[c, "di"], [e, "fay"]]) {
    const last = seen.at(-1);
    assert.equal(last?.type, "failed", JSON.stringify(seen));
    assert.equal(last.code, "PARTY_INCOMPLETE", JSON.stringify(last));
    assert.ok(last.message.endsWith(`missing: ${missing}`), last.message);
    // Until then it waited, saying whom for.
    const waiting = seen.find((m) => m.type === "status" && m.waitingReason?.code === "PARTY_INCOMPLETE");
    assert.deepEqual(waiting?.waitingReason?.missing, [missing], JSON.stringify(seen));
  }
  assert.ok(elapsed >= 5_000, `failed after ${elapsed} ms, before the 5 s timeout`);
  const studio = await backend.ticket(cy.ticketId);
  assert.equal(studio.status, "failed");
  assert.equal(studio.error?.code, "PARTY_INCOMPLETE");
});
