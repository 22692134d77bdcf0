// A backend that creates a mode and two tickets and verifies its webhook,
// and two game clients that search and accept.
import { createServer } from "node:http";
import { BackendClient, search, verifyWebhook } from "@matchplane/client";

/** One player: search with the token, accept any proposal, return the outcome. */
async function play(baseUrl: string, token: string): Promise<string> {
  const s = await search(token, { baseUrl });
  for await (const message of s) {
    if (message.type === "status") console.log(`  waiting ${message.waitSeconds.toFixed(0)} s`);
    if (message.type === "proposed") await s.accept();
    if (message.type === "matched") return `matched ${message.match.matchId}`;
    if (message.type === "failed") return `failed ${message.code}`;
  }
  return "closed";
}

export async function run(options: { baseUrl: string; projectId: string; apiKey: string }): Promise<void> {
  const backend = new BackendClient(options);
  let secret = "";
  let verified: (line: string) => void = () => {};
  const webhookSeen = new Promise<string>((resolve) => (verified = resolve));
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
      const event = JSON.parse(body.toString());
      verified(`webhook ${event.type} ${event.matchId} verified`);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => hooks.listen(0, "127.0.0.1", ok));
  const port = (hooks.address() as { port: number }).port;

  const mode = await backend.putGameMode("quickstart", {
    name: "quickstart", matchShape: [1, 1], matchmakingCycleDurationSeconds: 1,
    algorithm: { type: "mmr", minMmr: 0, maxMmr: 3000, baseTolerance: 100, expansionMultiplier: 2 },
    webhook: { url: `http://127.0.0.1:${port}/matchplane` },
  });
  console.log(`mode ${mode.name} version ${mode.version}`);
  secret = mode.webhook?.secret ?? "";

  const tokens: string[] = [];
  for (const [playerId, mmr] of [["ana", 1500], ["ben", 1520]] as const) {
    const ticket = await backend.createTicket({ gameMode: "quickstart", playerId, attributes: { mmr } });
    console.log(`ticket ${ticket.ticketId} for ${playerId}`);
    tokens.push(ticket.token); // hand this to the player's game client
  }
  const [ana, ben] = await Promise.all(tokens.map((t) => play(options.baseUrl, t)));
  console.log(`ana: ${ana}\nben: ${ben}`);
  console.log(await webhookSeen);
  hooks.close();
}

// `node dist/examples/quickstart.js` with MATCHPLANE_URL, PROJECT and KEY set.
if (process.argv[1]?.endsWith("quickstart.js") && process.env.PROJECT) {
  await run({ baseUrl: process.env.MATCHPLANE_URL ?? "http://127.0.0.1:8080", projectId: process.env.PROJECT, apiKey: process.env.KEY ?? "" });
}
