// A backend that creates a mode and two tickets and verifies its webhook,
// and two game clients that search and accept.
import { createServer } from "node:http";
import { EventEmitter, on } from "node:events";
import { BackendClient, ProblemError, search, verifyWebhook } from "@matchplane/client";

/** How long the example waits for the match, and then for its webhook. */
const WAIT_MS = 30_000;

/** One player: search with the token, accept the proposal, return the match id. */
async function play(baseUrl: string, token: string): Promise<string> {
  const s = await search(token, { baseUrl });
  const timer = setTimeout(() => s.close(), WAIT_MS); // closing ends the loop below
  try {
    for await (const message of s) {
      if (message.type === "status") console.log(`  waiting ${message.waitSeconds.toFixed(0)} s`);
      // The other player may decline first: their `requeued` follows, and
      // an answer that came too late is no reason to leave the queue.
      if (message.type === "proposed") await s.accept().catch(proposalOver);
      if (message.type === "matched") return message.match.matchId;
      if (message.type === "failed") throw new Error(`search failed: ${message.code}`);
    }
    throw new Error(`no match within ${WAIT_MS / 1000} s`);
  } finally {
    clearTimeout(timer);
    s.close();
  }
}

/** Ignores an answer that came after its proposal closed; rethrows anything else. */
function proposalOver(error: unknown): void {
  const over = error instanceof ProblemError && (error.code === "NOT_PROPOSED" || error.code === "PROPOSAL_CLOSED");
  if (!over) throw error;
}

export async function run(options: { baseUrl: string; projectId: string; apiKey: string }): Promise<void> {
  const backend = new BackendClient(options);
  let secret = "";
  const verified = new EventEmitter();
  // The studio's webhook endpoint: verify the raw bytes, then read them.
  const hooks = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      try {
        await verifyWebhook(secret, req.headers, body);
      } catch {
        return res.writeHead(401).end();
      }
      verified.emit("event", JSON.parse(body.toString()));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => hooks.listen(0, "127.0.0.1", ok));
  const port = (hooks.address() as { port: number }).port;
  try {
    const mode = await backend.putGameMode("quickstart", {
      name: "quickstart", matchShape: [1, 1], matchmakingCycleDurationSeconds: 1,
      algorithm: { type: "mmr", minMmr: 0, maxMmr: 3000, baseTolerance: 100, expansionMultiplier: 2 },
      acceptance: { timeoutSeconds: 20 },
      webhook: { url: `http://127.0.0.1:${port}/matchplane` },
    });
    console.log(`mode ${mode.name} version ${mode.version}`);
    // Only a PUT that creates the mode shows its webhook secret; one that
    // replaces it (this example's second run) masks it. A rotation shows a
    // new secret every time, and it signs at once.
    secret = (await backend.rotateWebhookSecret("quickstart")).webhook?.secret ?? "";
    // Verified webhooks, kept from now until read (at most two waits long).
    const webhooks = on(verified, "event", { signal: AbortSignal.timeout(2 * WAIT_MS) });

    const tokens: string[] = [];
    for (const [playerId, mmr] of [["ana", 1500], ["ben", 1520]] as const) {
      const ticket = await backend.createTicket({ gameMode: "quickstart", playerId, attributes: { mmr } });
      console.log(`ticket ${ticket.ticketId} for ${playerId}`);
      tokens.push(ticket.token); // hand this to the player's game client
    }
    const [ana, ben] = await Promise.all(tokens.map((t) => play(options.baseUrl, t)));
    console.log(`ana: matched ${ana}\nben: matched ${ben}`);
    try {
      for await (const [event] of webhooks) {
        if (event.matchId !== ana) continue; // this match's, not an earlier run's
        console.log(`webhook ${event.type} ${event.matchId} verified`);
        break;
      }
    } catch {
      throw new Error(`no verified webhook for ${ana} in time`);
    }
  } finally {
    hooks.close();
    hooks.closeAllConnections();
  }
}

// `node dist/examples/quickstart.js` with MATCHPLANE_URL, PROJECT and KEY set.
if (process.argv[1]?.endsWith("quickstart.js") && process.env.PROJECT) {
  await run({ baseUrl: process.env.MATCHPLANE_URL ?? "http://127.0.0.1:8080", projectId: process.env.PROJECT, apiKey: process.env.KEY ?? "" });
}
