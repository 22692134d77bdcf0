// Acceptance and assignment against a real `matchplane dev`
// (docs/acceptance.md): proposals answered over the socket and over REST,
// declines, the backend's assignment reaching both players, and `auto`
// falling back to REST.
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

/** A duel with acceptance (20 s to answer) and, when asked, assignment (60 s). */
async function lifecycleMode(name, { assignment = true } = {}) {
  const mode = { ...duel(name, "http://127.0.0.1:9/hook"), acceptance: { timeoutSeconds: 20 } };
  if (assignment) mode.assignment = { waitSeconds: 60 };
  await backend.putGameMode(name, mode);
}

const ticket = (gameMode, playerId) => backend.createTicket({ gameMode, playerId, attributes: { mmr: 1500 } });
const rest = { transport: "rest", pollIntervalMs: 500 };

/**
 * Reads a search, answering every proposal with `answer`, until `stop(message)`
 * or its end (closed after 30 s). Stopping leaves the search open: leaving a
 * `for await` loop would close it.
 */
async function readUntil(s, answer, stop = () => false) {
  const seen = [];
  const timer = setTimeout(() => s.close(), 30_000);
  const messages = s[Symbol.asyncIterator]();
  try {
    for (;;) {
      const { value: m, done } = await messages.next();
      if (done) return seen;
      seen.push(m);
      if (m.type === "proposed") await s[answer]();
      if (stop(m)) return seen;
    }
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` every 200 ms until it answers something, for 30 s at most. */
async function eventually(what, probe) {
  const until = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    assert.ok(Date.now() < until, `${what} within 30 s`);
    await new Promise((ok) => setTimeout(ok, 200));
  }
}

test("both accept and the assignment reaches each player with its own data", async () => {
  await lifecycleMode("ts-assign");
  const ana = await ticket("ts-assign", "ana");
  const ben = await ticket("ts-assign", "ben");
  const overSocket = await search(ana.token, { baseUrl: dev.baseUrl });
  const overRest = await search(ben.token, { baseUrl: dev.baseUrl, ...rest });
  // The studio assigns a server once the match is made (when its match.made
  // webhook would arrive): its status turns `made` after the last accept.
  const studio = (async () => {
    const matchId = await eventually("a made match", async () => {
      const id = (await backend.ticket(ana.ticketId)).match?.matchId;
      return id && (await backend.getMatch(id)).status === "made" ? id : undefined;
    });
    await backend.assign(matchId, {
      connection: "203.0.113.7:7777", data: { map: "dust" },
      players: { ana: { data: { joinToken: "a1" } }, ben: { data: { joinToken: "b2" } } },
    });
    return matchId;
  })();
  const [a, b, matchId] = await Promise.all([readUntil(overSocket, "accept"), readUntil(overRest, "accept"), studio]);
  for (const [seen, joinToken] of [[a, "a1"], [b, "b2"]]) {
    const kinds = seen.map((m) => m.type);
    assert.ok(kinds.includes("proposed"), JSON.stringify(kinds));
    assert.equal(seen.find((m) => m.type === "matched")?.match.matchId, matchId, JSON.stringify(kinds));
    assert.deepEqual(seen.at(-1), { type: "assigned", connection: "203.0.113.7:7777", data: { map: "dust", joinToken } });
  }
  assert.equal((await backend.ticket(ben.ticketId)).assignment?.connection, "203.0.113.7:7777");
});

for (const declinerRest of [false, true]) {
  test(`a decline over ${declinerRest ? "REST" : "the socket"} fails the decliner and requeues the other`, async () => {
    const mode = `ts-decline-${declinerRest ? "rest" : "socket"}`;
    await lifecycleMode(mode);
    const decliner = await ticket(mode, "ana");
    const other = await ticket(mode, "ben");
    const declining = await search(decliner.token, { baseUrl: dev.baseUrl, ...(declinerRest ? rest : {}) });
    const accepting = await search(other.token, { baseUrl: dev.baseUrl, ...(declinerRest ? {} : rest) });
    // One accepts first, then the other declines: the order is fixed.
    assert.equal((await readUntil(accepting, "accept", (m) => m.type === "proposed")).at(-1)?.type, "proposed");
    const declined = await readUntil(declining, "decline");
    assert.ok(declined.some((m) => m.type === "proposed"), JSON.stringify(declined));
    assert.equal(declined.at(-1).type, "failed", JSON.stringify(declined));
    assert.equal(declined.at(-1).code, "MATCH_DECLINED");
    // The one who accepted is back in the queue, its search still open.
    const requeued = await readUntil(accepting, "accept", (m) => m.type === "requeued");
    assert.equal(requeued.at(-1)?.type, "requeued", JSON.stringify(requeued));
    if (declinerRest) {
      // On the socket: its proposal closed with the requeue, so an answer now is refused.
      await assert.rejects(accepting.accept(), (e) => e instanceof ProblemError && e.code === "NOT_PROPOSED");
    }
    assert.equal((await backend.ticket(other.ticketId)).status, "searching");
    await accepting.cancel();
    const kinds = (await readUntil(accepting, "accept")).map((m) => m.type);
    assert.equal(kinds.at(-1), "cancelled", JSON.stringify(kinds));
    assert.ok(!kinds.includes("matched"), JSON.stringify(kinds));
  });
}

/** `e` is the 409 NOT_PROPOSED problem. */
const notProposed = (e) => e instanceof ProblemError && e.status === 409 && e.code === "NOT_PROPOSED";

test("accept and decline without an open proposal reject with NOT_PROPOSED on both transports, and on a closed socket", async () => {
  await lifecycleMode("ts-unproposed-socket", { assignment: false });
  await lifecycleMode("ts-unproposed-rest", { assignment: false });
  const ana = await ticket("ts-unproposed-socket", "ana");
  const ben = await ticket("ts-unproposed-rest", "ben");
  const overSocket = await search(ana.token, { baseUrl: dev.baseUrl });
  const overRest = await search(ben.token, { baseUrl: dev.baseUrl, ...rest });
  assert.equal((await readUntil(overSocket, "accept", (m) => m.type === "searching")).at(-1)?.type, "searching");
  for (const s of [overSocket, overRest]) {
    await assert.rejects(s.accept(), notProposed, s.transport);
    await assert.rejects(s.decline(), notProposed, s.transport);
  }
  await overRest.cancel();
  await overSocket.cancel();
  assert.equal((await readUntil(overSocket, "accept")).at(-1)?.type, "cancelled");
  for (const answer of ["accept", "decline"]) {
    await assert.rejects(overSocket[answer](), (e) => !(e instanceof ProblemError) && /WebSocket is closed/.test(e.message));
  }
});

test("auto falls back to REST when the socket cannot be opened, and accepts there", async () => {
  await lifecycleMode("ts-auto", { assignment: false });
  class Refused {
    constructor() {
      setTimeout(() => this.onerror?.(new Error("refused")), 0);
    }
    close() {}
  }
  const ana = await ticket("ts-auto", "ana");
  const ben = await ticket("ts-auto", "ben");
  const fallen = await search(ana.token, { baseUrl: dev.baseUrl, WebSocket: Refused, pollIntervalMs: 500 });
  assert.equal(fallen.transport, "rest");
  const other = await search(ben.token, { baseUrl: dev.baseUrl });
  const [a, b] = await Promise.all([readUntil(fallen, "accept"), readUntil(other, "accept")]);
  for (const seen of [a, b]) {
    const kinds = seen.map((m) => m.type);
    assert.ok(kinds.includes("proposed") && kinds.at(-1) === "matched", JSON.stringify(kinds));
  }
});

test("over REST an assignment timeout is reported as assignment_timeout, a release as a requeue only", async () => {
  // The server's own released statuses (docs/acceptance.md): `reason`
  // ASSIGNMENT_TIMEOUT after a wait of one second, MATCH_RELEASED after the studio's release.
  for (const [name, wait, release] of [["ts-rest-timeout", 1, false], ["ts-rest-release", 60, true]]) {
    await backend.putGameMode(name, { ...duel(name, "http://127.0.0.1:9/hook"), assignment: { waitSeconds: wait } });
    const ana = await ticket(name, "ana");
    const ben = await ticket(name, "ben");
    const searches = [await search(ana.token, { baseUrl: dev.baseUrl, ...rest }), await search(ben.token, { baseUrl: dev.baseUrl, ...rest })];
    const first = await Promise.all(searches.map((s) => readUntil(s, "accept", (m) => m.type === "matched")));
    if (release) await backend.release(first[0].at(-1).match.matchId);
    const then = await Promise.all(searches.map((s) => readUntil(s, "accept", (m) => m.type === "requeued")));
    // Closed, not cancelled: a timed-out pair is matched again within a cycle.
    for (const s of searches) s.close();
    for (const [i, messages] of then.entries()) {
      const kinds = [...first[i], ...messages].map((m) => m.type).filter((k) => k !== "status");
      const expected = release ? ["searching", "matched", "requeued"] : ["searching", "matched", "assignment_timeout", "requeued"];
      assert.deepEqual(kinds, expected, `${name}: ${JSON.stringify(kinds)}`);
    }
  }
});
