// Acceptance and assignment (proposals, answers, `assigned`) against a small
// fake of the protocol, since the server does not send them yet.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import { search } from "../dist/src/index.js";

async function fake(t) {
  let polls = 0;
  let accepted = 0;
  const server = createServer((req, res) => {
    const json = (status, body) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.method === "POST" && req.url === "/v1/searches") return json(202, { ticketId: "tkt_f", status: "searching" });
    assert.equal(req.headers.authorization, "Ticket tok");
    if (req.method === "POST" && req.url === "/v1/searches/tkt_f/accept") {
      accepted = 1;
      return json(200, { status: "proposed" });
    }
    const base = { ticketId: "tkt_f", gameMode: "duel", playerId: "ana", expiresAt: "t", queuedAt: "t" };
    const n = polls++;
    if (n === 0) return json(200, { ...base, status: "searching", waitingReason: { code: "NO_CANDIDATES" } });
    if (!accepted) return json(200, { ...base, status: "proposed", proposal: { matchId: "mat_f", acceptBy: "t", accepted: [] } });
    if (accepted === 1) {
      accepted = 2;
      return json(200, { ...base, status: "matched", match: { matchId: "mat_f" }, assignment: null });
    }
    return json(200, { ...base, status: "matched", match: { matchId: "mat_f" }, assignment: { connection: "203.0.113.7:7777", data: { map: "dust" } } });
  });
  const wss = new WebSocketServer({ server, path: "/v1/search" });
  wss.on("connection", (ws) => {
    const send = (m) => ws.send(JSON.stringify(m));
    send({ type: "searching", ticketId: "tkt_f", gameMode: "duel", queuedAt: "t" });
    send({ type: "backfill_offer", seat: 2 });
    send({ type: "proposed", matchId: "mat_f", acceptBy: "t+20s", teams: [["ana"], ["ben"]] });
    ws.on("message", (text) => {
      if (JSON.parse(String(text)).type === "accept") {
        send({ type: "matched", match: { matchId: "mat_f" } });
        send({ type: "assigned", connection: "203.0.113.7:7777", data: { map: "dust" } });
      } else {
        send({ type: "failed", code: "MATCH_DECLINED", message: "declined" });
      }
      ws.close(1000);
    });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  t.after(() => {
    wss.close();
    server.close();
  });
  return `http://127.0.0.1:${server.address().port}`;
}

async function answering(s, answer) {
  const seen = [];
  for await (const m of s) {
    if (m.type === "proposed") await s[answer]();
    seen.push(m);
  }
  return seen;
}

test("a proposal accepted on the socket ends assigned; unknown messages are kept raw", async (t) => {
  const baseUrl = await fake(t);
  const seen = await answering(await search("tok", { baseUrl }), "accept");
  assert.deepEqual(seen.map((m) => m.type), ["searching", "unknown", "proposed", "matched", "assigned"]);
  assert.deepEqual(seen[1].raw, { type: "backfill_offer", seat: 2 });
  assert.deepEqual(seen[4], { type: "assigned", connection: "203.0.113.7:7777", data: { map: "dust" } });
});

test("a proposal declined on the socket fails", async (t) => {
  const baseUrl = await fake(t);
  const seen = await answering(await search("tok", { baseUrl }), "decline");
  assert.equal(seen.at(-1).code, "MATCH_DECLINED");
});

test("the REST fallback accepts and waits for the assignment", async (t) => {
  const baseUrl = await fake(t);
  const s = await search("tok", { baseUrl, transport: "rest", pollIntervalMs: 500 });
  const seen = await answering(s, "accept");
  assert.deepEqual(seen.map((m) => m.type), ["searching", "status", "proposed", "matched", "assigned"]);
});

test("auto falls back to REST when the socket cannot be opened", async (t) => {
  const baseUrl = await fake(t);
  class Refused {
    constructor() {
      setTimeout(() => this.onerror?.(new Error("refused")), 0);
    }
    close() {}
  }
  const s = await search("tok", { baseUrl, WebSocket: Refused, pollIntervalMs: 500 });
  assert.equal(s.transport, "rest");
  assert.equal((await answering(s, "accept")).at(-1).type, "assigned");
});
