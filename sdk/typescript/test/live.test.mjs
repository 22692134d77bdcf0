// The SDK against a real `matchplane dev`: backend client, both search
// transports, typed problems, webhooks verified by this SDK and by the
// official standardwebhooks package.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { BackendClient, ProblemError, search, verifyWebhook, WebhookVerificationError } from "../dist/src/index.js";
import { all, duel, receiver, startDev } from "./dev.mjs";

let dev;
before(async () => (dev = await startDev()));
after(() => dev?.stop());

const ticket = (gameMode, playerId) => ({ gameMode, playerId, attributes: { mmr: 1500 } });

test("two players match over both transports and the webhook verifies", async (t) => {
  const hooks = await receiver();
  t.after(() => hooks.close());
  const backend = new BackendClient(dev);
  const mode = await backend.putGameMode("ts-duel", duel("ts-duel", hooks.url));
  const secret = mode.webhook?.secret;
  assert.match(secret, /^whsec_[A-Za-z0-9+/=]+$/);
  const ana = await backend.createTicket(ticket("ts-duel", "ana"));
  const ben = await backend.createTicket(ticket("ts-duel", "ben"));
  const overSocket = await search(ana.token, { baseUrl: dev.baseUrl });
  const overRest = await search(ben.token, { baseUrl: dev.baseUrl, transport: "rest", pollIntervalMs: 500 });
  assert.equal(overSocket.transport, "websocket");
  assert.equal(overRest.transport, "rest");
  assert.equal(overRest.ticketId, ben.ticketId);
  const endings = [overSocket, overRest].map((s) => new Promise((ok) => s.onEnd((e) => ok({ error: e }))));
  const [a, b] = await Promise.all([all(overSocket), all(overRest)]);
  // After the outcome, `onEnd` is told without an error on both transports.
  for (const ending of await Promise.all(endings)) assert.equal(ending.error, undefined);
  for (const seen of [a, b]) {
    assert.equal(seen[0].type, "searching", JSON.stringify(seen));
    assert.equal(seen.at(-1).type, "matched", JSON.stringify(seen));
  }
  const matchId = a.at(-1).match.matchId;
  assert.equal(b.at(-1).match.matchId, matchId);
  assert.equal((await backend.ticket(ana.ticketId)).status, "matched");
  assert.equal((await backend.getMatch(matchId)).matchId, matchId);

  const { headers, body } = await hooks.next();
  assert.equal(JSON.parse(body).matchId, matchId);
  await verifyWebhook(secret, headers, body);
  await verifyWebhook(secret, new Headers(Object.entries(headers)), new Uint8Array(body));
  new Webhook(secret).verify(body.toString(), headers); // the official verifier agrees
  await assert.rejects(verifyWebhook(secret, headers, body.toString() + " "), (e) => e instanceof WebhookVerificationError && e.reason === "signature");

  // After a rotation both secrets sign, and either verifies.
  const rotated = (await backend.rotateWebhookSecret("ts-duel")).webhook.secret;
  assert.notEqual(rotated, secret);
  const cy = await backend.createTicket(ticket("ts-duel", "cy"));
  const di = await backend.createTicket(ticket("ts-duel", "di"));
  const [c, d] = await Promise.all([cy, di].map(async (t) => all(await search(t.token, { baseUrl: dev.baseUrl }))));
  assert.equal(c.at(-1).type, "matched");
  assert.equal(d.at(-1).type, "matched");
  const second = await hooks.next();
  assert.equal(second.headers["webhook-signature"].split(" ").length, 2);
  for (const s of [secret, rotated]) {
    await verifyWebhook(s, second.headers, second.body);
    new Webhook(s).verify(second.body.toString(), second.headers);
  }
});

test("problems are typed errors with code and errors[]", async () => {
  const backend = new BackendClient(dev);
  await assert.rejects(backend.createTicket(ticket("nope", "ana")), (e) => e instanceof ProblemError && e.code === "GAME_MODE_NOT_FOUND" && e.status === 404);
  const bad = { ...duel("ts-bad", "http://127.0.0.1:9/hook"), matchShape: [] };
  await assert.rejects(backend.putGameMode("ts-bad", bad), (e) => e.code === "VALIDATION_ERROR" && e.errors.some((f) => f.field === "matchShape"));
  await assert.rejects(search("prj_x.duel.tkt_x.nope", { baseUrl: dev.baseUrl }), (e) => e instanceof ProblemError && e.code === "TICKET_INVALID");
  await assert.rejects(search("prj_x.duel.tkt_x.nope", { baseUrl: dev.baseUrl, transport: "rest" }), (e) => e.code === "TICKET_INVALID");
});

test("cancel works on both transports", async () => {
  const backend = new BackendClient(dev);
  await backend.putGameMode("ts-solo", duel("ts-solo", "http://127.0.0.1:9/hook"));
  const ana = await backend.createTicket(ticket("ts-solo", "ana"));
  const overSocket = await search(ana.token, { baseUrl: dev.baseUrl });
  const events = [];
  overSocket.onMessage((m) => events.push(m.type));
  const it = overSocket[Symbol.asyncIterator]();
  assert.equal((await it.next()).value.type, "searching");
  await overSocket.cancel();
  const rest = await all(overSocket);
  assert.equal(rest.at(-1).type, "cancelled", JSON.stringify(rest));
  assert.equal(events.at(-1), "cancelled");

  const overRest = await search(ana.token, { baseUrl: dev.baseUrl, transport: "rest" });
  await overRest.cancel();
  assert.equal((await all(overRest)).at(-1).type, "cancelled");
  assert.equal((await backend.ticket(ana.ticketId)).status, "cancelled");
});

test("closing a REST search ends it as closing the socket does", async () => {
  const backend = new BackendClient(dev);
  await backend.putGameMode("ts-close", duel("ts-close", "http://127.0.0.1:9/hook"));
  const ana = await backend.createTicket(ticket("ts-close", "ana"));
  const overRest = await search(ana.token, { baseUrl: dev.baseUrl, transport: "rest", pollIntervalMs: 500 });
  const it = overRest[Symbol.asyncIterator]();
  assert.equal((await it.next()).value.type, "searching");
  overRest.close();
  // Left to lapse it would wait 30 s in the pool, where it could be matched.
  let status;
  for (let i = 0; i < 50 && status !== "cancelled"; i++) {
    await new Promise((ok) => setTimeout(ok, 100));
    status = (await backend.ticket(ana.ticketId)).status;
  }
  assert.equal(status, "cancelled");
});

test("the socket answers pings past the pong timeout", async () => {
  // The server ends a socket that sends no Pong for 10 s (PONG_TIMEOUT).
  const backend = new BackendClient(dev);
  await backend.putGameMode("ts-ping", duel("ts-ping", "http://127.0.0.1:9/hook"));
  const ana = await backend.createTicket(ticket("ts-ping", "ana"));
  const s = await search(ana.token, { baseUrl: dev.baseUrl });
  const seen = [];
  s.onMessage((m) => seen.push(m));
  await new Promise((ok) => setTimeout(ok, 13_000));
  assert.ok(!seen.some((m) => ["failed", "cancelled", "expired"].includes(m.type)), JSON.stringify(seen));
  assert.ok(seen.some((m) => m.type === "status" && typeof m.pingMs === "number"), JSON.stringify(seen));
  await s.cancel();
  assert.equal((await all(s)).at(-1).type, "cancelled");
});
