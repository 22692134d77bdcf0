// A real `matchplane dev --demo` on a free port, from MATCHPLANE_BIN (default
// ../../target/debug/matchplane), for the tests; `stop()` ends it.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const bin = process.env.MATCHPLANE_BIN ?? resolve(here, "../../../target/debug/matchplane");

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

export async function startDev() {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build it (cargo build -p matchplane) or set MATCHPLANE_BIN`);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "mp-sdk-ts-"));
  const env = { ...process.env };
  delete env.REDIS_URL; // the in-process pool store
  const child = spawn(bin, [
    "dev", "--demo", "--listen", `127.0.0.1:${port}`,
    "--database-url", `sqlite://${join(dir, "dev.db")}?mode=rwc`, "--operator-token", "sdk-ts-operator",
  ], { stdio: ["ignore", "pipe", "ignore"], env });
  const line = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error("dev --demo printed no demo line")), 60_000);
    child.once("exit", (code) => fail(new Error(`matchplane dev exited ${code}`)));
    createInterface({ input: child.stdout }).on("line", (l) => {
      if (l.startsWith("demo: project")) {
        clearTimeout(timer);
        ok(l);
      }
    });
  });
  // "demo: project prj_…, API key mp_sk_…"
  const words = line.split(/\s+/);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    projectId: words[2].replace(/,$/, ""),
    apiKey: words[5],
    /** Stops the server and, once it has exited (it may still be writing its database), removes its folder. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((ok) => child.once("exit", ok));
        child.kill();
        await exited;
      }
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    },
  };
}

/** A webhook receiver on a free port: resolves each request's headers and raw body in turn. */
export async function receiver() {
  const { createServer: http } = await import("node:http");
  const queue = [];
  const waiting = [];
  const server = http((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const hit = { headers: req.headers, body: Buffer.concat(chunks) };
      const w = waiting.shift();
      if (w) w(hit);
      else queue.push(hit);
      res.writeHead(204).end();
    });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((ok) => waiting.push(ok))),
    close: () => server.close(),
  };
}

export function duel(name, hook) {
  return {
    name, matchShape: [1, 1], matchmakingCycleDurationSeconds: 1,
    algorithm: { type: "mmr", minMmr: 0, maxMmr: 3000, baseTolerance: 100, expansionMultiplier: 2 },
    webhook: { url: hook },
  };
}

/** Every message of a search until it ends. */
export async function all(search) {
  const seen = [];
  for await (const m of search) seen.push(m);
  return seen;
}
