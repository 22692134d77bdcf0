// The backend's typed calls against a real `matchplane dev`: backfill
// (docs/backfill.md), project settings, holding a mode's matching, webhook
// tests, deliveries and redelivery, the problems' `backfillId` and
// `gameMode`, a mode's versions, figures and pool, and the project's
// webhook endpoint.
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

/** Searches of `tokens` over the socket until each is matched; their match ids. */
async function matchAll(tokens) {
  return Promise.all(tokens.map(async (token) => {
    const s = await search(token, { baseUrl: dev.baseUrl });
    const timer = setTimeout(() => s.close(), 30_000);
    try {
      for await (const m of s) if (m.type === "matched") return m.match.matchId;
      throw new Error("not matched within 30 s");
    } finally {
      clearTimeout(timer);
      s.close();
    }
  }));
}

test("backfill, deliveries and redelivery of a made match", async () => {
  await backend.putGameMode("ts-backfill", { ...duel("ts-backfill", "http://127.0.0.1:9/hook"), backfill: { enabled: true, ttlSeconds: 120 } });
  const tickets = await Promise.all(["ana", "ben"].map((playerId) => backend.createTicket({ gameMode: "ts-backfill", playerId, attributes: { mmr: 1500 } })));
  const [matchId] = await matchAll(tickets.map((t) => t.token));

  // ben left: one seat to fill.
  const roster = { teams: [{ index: 0, players: [{ playerId: "ana", mmr: 1500 }] }] };
  const opened = await backend.openBackfill(matchId, roster);
  assert.equal(opened.matchId, matchId);
  assert.equal(opened.status, "open");
  await assert.rejects(backend.openBackfill(matchId, roster), (e) => e instanceof ProblemError && e.code === "BACKFILL_ALREADY_OPEN" && e.backfillId === opened.backfillId);
  assert.deepEqual((await backend.backfills(matchId)).map((b) => b.backfillId), [opened.backfillId]);
  assert.equal((await backend.backfill(matchId, opened.backfillId)).backfillId, opened.backfillId);
  const replaced = await backend.replaceBackfillRoster(matchId, opened.backfillId, { teams: [{ index: 1, players: [{ playerId: "ben", mmr: 1500 }] }] });
  assert.equal(replaced.backfillId, opened.backfillId);
  assert.notEqual((await backend.closeBackfill(matchId, opened.backfillId)).status, "open");

  // The match's webhook deliveries, and a redelivery queued.
  const deliveries = await backend.deliveries(matchId);
  assert.ok(deliveries.length >= 1 && deliveries.every((d) => typeof d.id === "string"), JSON.stringify(deliveries));
  assert.ok(Array.isArray(await backend.redeliver(matchId)));
});

test("a webhook test, holding a mode, the project's settings, and a problem's gameMode", async () => {
  await backend.putGameMode("ts-held", duel("ts-held", "http://127.0.0.1:9/hook"));
  const attempt = await backend.testWebhook("ts-held");
  assert.equal(attempt.delivered, false); // nothing listens on port 9
  assert.ok((await backend.gameModeDeliveries("ts-held", { limit: 5 })).some((d) => d.id === attempt.deliveryId));

  const hold = await backend.holdGameMode("ts-held");
  assert.equal(typeof hold.since, "string");
  assert.equal(typeof hold.by, "string");
  assert.ok((await backend.gameMode("ts-held")).hold);
  await backend.releaseHold("ts-held");
  assert.ok(!(await backend.gameMode("ts-held")).hold);

  assert.equal((await backend.updateProjectSettings({ playerSearchScope: "project" })).playerSearchScope, "project");
  assert.equal((await backend.projectSettings()).playerSearchScope, "project");
  await backend.updateProjectSettings({ playerSearchScope: "mode" });

  // A second ticket for a searching player names the live ticket and its mode.
  const live = await backend.createTicket({ gameMode: "ts-held", playerId: "cy", attributes: { mmr: 1500 } });
  const s = await search(live.token, { baseUrl: dev.baseUrl, transport: "rest" });
  try {
    await assert.rejects(backend.createTicket({ gameMode: "ts-held", playerId: "cy", attributes: { mmr: 1500 } }),
      (e) => e instanceof ProblemError && e.code === "PLAYER_ALREADY_SEARCHING" && e.ticketId === live.ticketId && e.gameMode === "ts-held");
  } finally {
    s.close();
  }
});

test("creating a mode, its versions, figures and pool, and the project's webhook endpoint", async () => {
  const created = await backend.createGameMode(duel("ts-figures", "http://127.0.0.1:9/hook"));
  assert.equal(created.version, 1);
  await assert.rejects(backend.createGameMode(duel("ts-figures", "http://127.0.0.1:9/hook")), (e) => e instanceof ProblemError && e.status === 409);
  await backend.putGameMode("ts-figures", { ...duel("ts-figures", "http://127.0.0.1:9/hook"), matchmakingCycleDurationSeconds: 2 });
  assert.deepEqual((await backend.gameModeVersions("ts-figures")).map((v) => v.version), [1, 2]);
  const stats = await backend.gameModeStats("ts-figures");
  assert.equal(stats.gameMode, "ts-figures");
  assert.equal(stats.searchingNow, 0);
  const pool = await backend.gameModePool("ts-figures");
  assert.equal(pool.gameMode, "ts-figures");
  assert.deepEqual(pool.waitingByRule, {});

  await assert.rejects(backend.projectWebhook(), (e) => e instanceof ProblemError && e.status === 404);
  const endpoint = await backend.putProjectWebhook({ url: "http://127.0.0.1:9/project-hook", eventTypes: ["match.made"] });
  assert.match(endpoint.secret, /^whsec_/);
  const read = await backend.projectWebhook();
  assert.equal(read.url, "http://127.0.0.1:9/project-hook");
  assert.deepEqual(read.eventTypes, ["match.made"]);
  const rotated = await backend.rotateProjectWebhookSecret();
  assert.notEqual(rotated.secret, endpoint.secret);
  await backend.deleteProjectWebhook();
  await assert.rejects(backend.projectWebhook(), (e) => e instanceof ProblemError && e.status === 404);
});
