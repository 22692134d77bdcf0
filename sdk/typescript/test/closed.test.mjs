// A search whose server stops (a rolling restart) is told to search again:
// the socket closes with 1001 before any final message, and the iteration
// rejects with a SearchClosedError whose `searchAgain` is true, instead of
// ending as if the search were over; `onEnd` listeners get the same error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BackendClient, SearchClosedError, search } from "../dist/src/index.js";
import { duel, startDev } from "./dev.mjs";

test("a server that stops closes the search with 1001: search again", async () => {
  const dev = await startDev();
  try {
    const backend = new BackendClient(dev);
    await backend.putGameMode("stops", duel("stops", "http://127.0.0.1:9/hook"));
    const { token } = await backend.createTicket({ gameMode: "stops", playerId: "p1", attributes: { mmr: 1500 } });
    const s = await search(token, { baseUrl: dev.baseUrl, transport: "websocket" });
    // Code that reads the search through listeners alone is told too.
    const ended = new Promise((ok) => s.onEnd(ok));
    const messages = s[Symbol.asyncIterator]();
    const first = await messages.next();
    assert.equal(first.value.type, "searching");
    const stopping = dev.stop();
    let error;
    try {
      for (;;) {
        const { done } = await messages.next();
        if (done) break;
      }
    } catch (e) {
      error = e;
    }
    await stopping;
    assert.ok(error instanceof SearchClosedError, `the iteration ended without an error: ${error}`);
    assert.equal(error.closeCode, 1001);
    assert.equal(error.searchAgain, true);
    assert.equal(await ended, error, "onEnd gets the iteration's error");
    let late;
    s.onEnd((e) => (late = e));
    assert.equal(late, error, "a listener added after the end is called at once");
  } finally {
    await dev.stop();
  }
});
