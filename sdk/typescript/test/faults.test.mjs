// A search over a network that fails in the ways real ones do: a proxy that
// refuses WebSocket upgrades (`auto` goes on over REST, and the search stays
// usable), a server that takes connections and never answers (every call
// and the socket's opening reject within `requestTimeoutMs`), and a socket
// gone silent (the iteration rejects within `silenceTimeoutMs`). Before,
// the first ended the iteration at once although the REST search went on,
// and the other two hung for good. A proxy that closes the socket with 1000
// before the search's outcome rejects the iteration too (it used to end it
// as if the search were over). Where the server's pings are hidden (a
// browser's WebSocket), the SDK's own `ping` texts tell a quiet socket from
// a cut one (such a socket used to go unnoticed until TCP gave up).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, connect } from "node:net";
import NodeWebSocket from "ws";
import { BackendClient, SearchClosedError, search } from "../dist/src/index.js";
import { duel, startDev } from "./dev.mjs";

/**
 * A TCP proxy to `port`; `refuseUpgrades` drops connections asking for a WebSocket, `strand()`
 * silences every connection, `closeNormally()` closes each client's WebSocket with a Close frame
 * 1000 of its own (as a proxy ending idle connections may) and cuts the server's side.
 */
async function proxy(port, { refuseUpgrades = false } = {}) {
  const pairs = new Set();
  let stranded = false;
  const server = createServer((client) => {
    client.once("data", (first) => {
      if (refuseUpgrades && /upgrade:\s*websocket/i.test(first.toString("latin1"))) {
        client.destroy();
        return;
      }
      const upstream = connect(port, "127.0.0.1");
      const pair = { client, upstream };
      pairs.add(pair);
      upstream.write(first);
      const relay = (from, to) => from.on("data", (chunk) => { if (!stranded) to.write(chunk); });
      relay(client, upstream);
      relay(upstream, client);
      const end = () => { if (!stranded) { client.destroy(); upstream.destroy(); } };
      client.on("close", end).on("error", end);
      upstream.on("close", end).on("error", end);
    });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    strand() { stranded = true; },
    closeNormally() {
      stranded = true;
      // An unmasked server Close frame: FIN + opcode 8, two bytes of payload, code 1000.
      for (const { client, upstream } of pairs) { client.end(Buffer.from([0x88, 0x02, 0x03, 0xe8])); upstream.destroy(); }
    },
    close() {
      for (const { client, upstream } of pairs) { client.destroy(); upstream.destroy(); }
      server.close();
    },
  };
}

/** Resolves to the iteration's next message, or rejects with its error. */
function next(messages, ms = 10_000) {
  return Promise.race([
    messages.next(),
    new Promise((_, fail) => setTimeout(() => fail(new Error(`nothing within ${ms} ms`)), ms)),
  ]);
}

test("auto falls back to REST when the upgrade is refused, and the search goes on", async () => {
  const dev = await startDev();
  const via = await proxy(Number(new URL(dev.baseUrl).port), { refuseUpgrades: true });
  try {
    const backend = new BackendClient(dev);
    await backend.putGameMode("fallback", duel("fallback", "http://127.0.0.1:9/hook"));
    const { token } = await backend.createTicket({ gameMode: "fallback", playerId: "p1", attributes: { mmr: 1500 } });
    const s = await search(token, { baseUrl: via.url, pollIntervalMs: 500 });
    assert.equal(s.transport, "rest");
    const messages = s[Symbol.asyncIterator]();
    assert.equal((await next(messages)).value.type, "searching");
    // Polls go on; nothing ends the iteration while the search waits.
    const quiet = await Promise.race([messages.next().then((r) => r, (e) => e), new Promise((ok) => setTimeout(() => ok("quiet"), 2_000))]);
    assert.ok(quiet === "quiet" || quiet.value?.type === "status", `the iteration ended: ${quiet?.message ?? JSON.stringify(quiet)}`);
    await s.cancel();
    let last;
    for (;;) {
      const r = await next(messages);
      if (r.done) break;
      last = r.value;
    }
    assert.equal(last.type, "cancelled");
  } finally {
    via.close();
    await dev.stop();
  }
});

test("a server that never answers: every start rejects within requestTimeoutMs", async () => {
  const held = [];
  const silent = createServer((socket) => held.push(socket));
  await new Promise((ok) => silent.listen(0, "127.0.0.1", ok));
  const baseUrl = `http://127.0.0.1:${silent.address().port}`;
  try {
    for (const transport of ["websocket", "rest", "auto"]) {
      const started = Date.now();
      await assert.rejects(search("prj_x.duel.tkt_x.secret", { baseUrl, transport, requestTimeoutMs: 500 }));
      assert.ok(Date.now() - started < 5_000, `${transport} took ${Date.now() - started} ms`);
    }
    const backend = new BackendClient({ baseUrl, projectId: "prj_x", apiKey: "k", requestTimeoutMs: 500 });
    await assert.rejects(backend.createTicket({ gameMode: "duel", playerId: "p1" }), (e) => e.name === "TimeoutError");
  } finally {
    for (const s of held) s.destroy();
    silent.close();
  }
});

test("a socket gone silent rejects the iteration with 1006", async () => {
  const dev = await startDev();
  const via = await proxy(Number(new URL(dev.baseUrl).port));
  try {
    const backend = new BackendClient(dev);
    await backend.putGameMode("silent", duel("silent", "http://127.0.0.1:9/hook"));
    const { token } = await backend.createTicket({ gameMode: "silent", playerId: "p1", attributes: { mmr: 1500 } });
    const s = await search(token, { baseUrl: via.url, transport: "websocket", silenceTimeoutMs: 1_500 });
    const messages = s[Symbol.asyncIterator]();
    assert.equal((await next(messages)).value.type, "searching");
    via.strand();
    const started = Date.now();
    let error;
    try {
      for (;;) {
        const r = await next(messages);
        if (r.done) break;
      }
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof SearchClosedError, `not a SearchClosedError: ${error}`);
    assert.equal(error.closeCode, 1006);
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  } finally {
    via.close();
    await dev.stop();
  }
});

test("a proxy closing the socket with 1000 before the outcome rejects the iteration", async () => {
  const dev = await startDev();
  const via = await proxy(Number(new URL(dev.baseUrl).port));
  try {
    const backend = new BackendClient(dev);
    await backend.putGameMode("proxied", duel("proxied", "http://127.0.0.1:9/hook"));
    const { token } = await backend.createTicket({ gameMode: "proxied", playerId: "p1", attributes: { mmr: 1500 } });
    const s = await search(token, { baseUrl: via.url, transport: "websocket" });
    const messages = s[Symbol.asyncIterator]();
    assert.equal((await next(messages)).value.type, "searching");
    via.closeNormally();
    let error;
    try {
      for (;;) {
        const r = await next(messages);
        if (r.done) break;
      }
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof SearchClosedError, `the iteration ended as if the search were over: ${error}`);
    assert.equal(error.closeCode, 1000);
    assert.equal(error.searchAgain, false);
  } finally {
    via.close();
    await dev.stop();
  }
});

/** A WebSocket as a browser's is: the standard interface only, the server's pings unseen. */
class BrowserLikeWebSocket {
  /** The server's `pong` texts every instance received. */
  static pongs = 0;
  constructor(url) {
    const socket = new NodeWebSocket(url);
    this.inner = socket;
    for (const event of ["open", "message", "close", "error"]) {
      socket.addEventListener(event, (e) => {
        if (event === "message" && String(e.data) === '{"type":"pong"}') BrowserLikeWebSocket.pongs += 1;
        this[`on${event}`]?.(e);
      });
    }
  }
  get readyState() { return this.inner.readyState; }
  send(data) { this.inner.send(data); }
  close(code, reason) { this.inner.close(code, reason); }
}

test("where the server's pings are hidden, the SDK's own ping tells a quiet socket from a cut one", async () => {
  const dev = await startDev();
  const via = await proxy(Number(new URL(dev.baseUrl).port));
  try {
    const backend = new BackendClient(dev);
    await backend.putGameMode("hidden", duel("hidden", "http://127.0.0.1:9/hook"));
    const { token } = await backend.createTicket({ gameMode: "hidden", playerId: "p1", attributes: { mmr: 1500 } });
    const s = await search(token, { baseUrl: via.url, transport: "websocket", silenceTimeoutMs: 2_000, WebSocket: BrowserLikeWebSocket });
    const messages = s[Symbol.asyncIterator]();
    assert.equal((await next(messages)).value.type, "searching");
    // Quiet, not cut: no message for twice the limit, and the search goes on; no `pong` reaches the game.
    const seen = [];
    s.onMessage((m) => seen.push(m));
    let ended;
    s.onEnd((e) => { ended = e ?? "ended"; });
    await new Promise((ok) => setTimeout(ok, 4_500));
    assert.equal(ended, undefined, `a quiet search was taken for a cut one: ${ended}`);
    assert.ok(seen.every((m) => m.type !== "unknown"), JSON.stringify(seen));
    assert.ok(BrowserLikeWebSocket.pongs >= 3, `${BrowserLikeWebSocket.pongs} pongs in 4.5 s`);
    // Cut: rejected within the limit (and a little).
    via.strand();
    const started = Date.now();
    let error;
    try {
      for (;;) {
        const r = await next(messages);
        if (r.done) break;
      }
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof SearchClosedError, `not a SearchClosedError: ${error}`);
    assert.equal(error.closeCode, 1006);
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  } finally {
    via.close();
    await dev.stop();
  }
});
