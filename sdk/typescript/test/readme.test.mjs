// README's example, run against a real `matchplane dev`; README carries the
// example's source verbatim.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { startDev } from "./dev.mjs";
import { run } from "../dist/examples/quickstart.js";

test("README shows examples/quickstart.ts verbatim", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const example = readFileSync(new URL("../examples/quickstart.ts", import.meta.url), "utf8").trim();
  assert.ok(readme.includes(example), "README.md must carry examples/quickstart.ts verbatim");
});

test("every ts block of README is in an example file, so `npm run build` type-checks it", () => {
  // Leading spaces aside: a block may sit inside a function naming what it takes as given.
  const lines = (text) => text.split("\n").map((l) => l.trim());
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const dir = new URL("../examples/", import.meta.url);
  const examples = readdirSync(dir).filter((f) => f.endsWith(".ts")).map((f) => lines(readFileSync(new URL(f, dir), "utf8")).join("\n"));
  const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => lines(m[1].trimEnd()).join("\n"));
  assert.ok(blocks.length >= 3, `found ${blocks.length} ts blocks`);
  for (const block of blocks) {
    assert.ok(examples.some((e) => e.includes(block)), `README block not in examples/*.ts:\n${block}`);
  }
});

test("the README example runs twice against one server", async (t) => {
  // The second run replaces the mode, whose PUT answer masks the webhook secret.
  const dev = await startDev();
  t.after(() => dev.stop());
  await run(dev);
  await run(dev);
});
