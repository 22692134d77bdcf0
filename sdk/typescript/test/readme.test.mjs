// README's example, run against a real `matchplane dev`; README carries the
// example's source verbatim.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { startDev } from "./dev.mjs";
import { run } from "../dist/examples/quickstart.js";

test("README shows examples/quickstart.ts verbatim", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const example = readFileSync(new URL("../examples/quickstart.ts", import.meta.url), "utf8").trim();
  assert.ok(readme.includes(example), "README.md must carry examples/quickstart.ts verbatim");
});

test("the README example runs twice against one server", async (t) => {
  // The second run replaces the mode, whose PUT answer masks the webhook secret.
  const dev = await startDev();
  t.after(() => dev.stop());
  await run(dev);
  await run(dev);
});
