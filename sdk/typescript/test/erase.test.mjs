// Erasing a player against a real `matchplane dev` (docs/retention.md,
// "Erasing a player"): the player's live search is cancelled (its client sees
// `cancelled`), the answer counts what went, and a second erasure finds
// nothing more.
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

test("erasing a player cancels their search and a second erasure finds nothing", async () => {
  await backend.putGameMode("ts-erase", duel("ts-erase", "http://127.0.0.1:9/hook"));
  const eve = await backend.createTicket({ gameMode: "ts-erase", playerId: "eve/1", attributes: { mmr: 1500 } });
  const s = await search(eve.token, { baseUrl: dev.baseUrl });
  const messages = s[Symbol.asyncIterator]();
  assert.equal((await messages.next()).value?.type, "searching");

  const erased = await backend.erasePlayer("eve/1");
  assert.deepEqual(erased.cancelled, [eve.ticketId]);
  assert.equal(erased.ratingsDeleted, 0);
  assert.equal(erased.matchesRedacted, 0);
  const seen = [];
  const timer = setTimeout(() => s.close(), 15_000);
  try {
    for (;;) {
      const { value, done } = await messages.next();
      if (done) break;
      seen.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  assert.equal(seen.at(-1)?.type, "cancelled", JSON.stringify(seen));

  const again = await backend.erasePlayer("eve/1");
  for (const [field, value] of Object.entries(again)) {
    assert.deepEqual(value, field === "cancelled" ? [] : 0, field);
  }
  await assert.rejects(backend.erasePlayer(" "), (e) => e instanceof ProblemError && e.status === 422 && e.code === "VALIDATION_ERROR");
});
