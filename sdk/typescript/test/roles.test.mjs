// Role queues against a real `matchplane dev` (docs/rules.md#role-waits):
// once players were matched in a role, a player waiting in a mode with
// `composition` sees `roleWaits` in its `status`, on both transports.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { BackendClient, search } from "../dist/src/index.js";
import { duel, startDev } from "./dev.mjs";

let dev;
let backend;
before(async () => {
  dev = await startDev();
  backend = new BackendClient(dev);
});
after(() => dev?.stop());

/** Two against two, each team one tank and one damage. */
async function roleMode(name) {
  const mode = { ...duel(name, "http://127.0.0.1:9/hook"), matchShape: [2, 2] };
  mode.attributes = { roles: { type: "stringSet", values: ["tank", "damage", "support"] } };
  mode.composition = { attribute: "roles", perTeam: { tank: 1, damage: 1 } };
  await backend.putGameMode(name, mode);
}

const player = (gameMode, playerId, role) => backend.createTicket({ gameMode, playerId, attributes: { mmr: 1500, roles: [role] } });

/** Messages of `s` until one `stop` holds for (closing it then), or `ms` pass. */
async function until(s, ms, stop) {
  const seen = [];
  const timer = setTimeout(() => s.close(), ms);
  try {
    for await (const m of s) {
      seen.push(m);
      if (stop(m)) break;
    }
  } finally {
    clearTimeout(timer);
    s.close();
  }
  return seen;
}

test("a waiting player's status carries roleWaits over the socket and over REST", async () => {
  await roleMode("ts-roles");
  // One match: two tanks and two damage players.
  const matched = await Promise.all(
    [["t1", "tank"], ["t2", "tank"], ["d1", "damage"], ["d2", "damage"]].map(async ([id, role]) => {
      const s = await search((await player("ts-roles", id, role)).token, { baseUrl: dev.baseUrl });
      return until(s, 30_000, (m) => m.type === "matched");
    }),
  );
  for (const seen of matched) assert.equal(seen.at(-1)?.type, "matched", JSON.stringify(seen));

  // Two tanks who cannot be matched (no damage player left) wait; each
  // sees the tank median once its server reads it (at most 10 s old).
  const hasWaits = (m) => m.type === "status" && typeof m.roleWaits?.tank === "number";
  const [socket, rest] = await Promise.all([
    player("ts-roles", "w1", "tank").then((t) => search(t.token, { baseUrl: dev.baseUrl })),
    player("ts-roles", "w2", "tank").then((t) => search(t.token, { baseUrl: dev.baseUrl, transport: "rest", pollIntervalMs: 500 })),
  ]);
  const [s, r] = await Promise.all([until(socket, 30_000, hasWaits), until(rest, 30_000, hasWaits)]);
  for (const [seen, transport] of [[s, "socket"], [r, "REST"]]) {
    const last = seen.at(-1);
    assert.ok(last && hasWaits(last), `${transport}: no status with roleWaits.tank in ${JSON.stringify(seen)}`);
    assert.deepEqual(Object.keys(last.roleWaits), ["tank"], JSON.stringify(last));
  }
});
