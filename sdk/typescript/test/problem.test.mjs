// ProblemError's typed fields from problem bodies as the server writes them
// (docs/error-codes.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ProblemError } from "../dist/src/index.js";

test("a PLAYER_IN_MATCH problem names the match waiting for its assignment", () => {
  const body = {
    type: "about:blank", title: "Player in match", status: 409, code: "PLAYER_IN_MATCH",
    detail: "the player is in match mat_01JE of game mode ranked, which waits for its assignment",
    errors: [], ticketId: "tkt_01JE", gameMode: "ranked", matchId: "mat_01JE",
  };
  const e = new ProblemError(body, null);
  assert.equal(e.status, 409);
  assert.equal(e.code, "PLAYER_IN_MATCH");
  assert.equal(e.matchId, "mat_01JE");
  assert.equal(e.ticketId, "tkt_01JE");
  assert.equal(e.body.gameMode, "ranked");
  // Other problems carry no match.
  const searching = new ProblemError({ status: 409, code: "PLAYER_ALREADY_SEARCHING", ticketId: "tkt_1", matchId: null }, null);
  assert.equal(searching.matchId, undefined);
  assert.equal(searching.ticketId, "tkt_1");
});
