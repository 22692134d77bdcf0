// The generated types are scripts/generate.mjs's output for the checked-in
// OpenAPI document (`npm run generate` refreshes them), every object in them
// takes what the document lets it hold, and the SDK names the document's
// API version.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { API_VERSION } from "../dist/src/index.js";
import { generate } from "../scripts/generate.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const document = resolve(root, "../../openapi/openapi.json");

test("src/generated/openapi.ts is up to date with openapi/openapi.json", async () => {
  const committed = readFileSync(join(root, "src/generated/openapi.ts"), "utf8");
  assert.ok((await generate(document)) === committed, "src/generated/openapi.ts is stale: run `npm run generate` in sdk/typescript and commit it");
});

test("no generated object refuses every key", () => {
  // A free-form object the document left bare became `Record<string, never>`
  // (a ticket's `data` took nothing); `$defs` is openapi-typescript's own.
  const committed = readFileSync(join(root, "src/generated/openapi.ts"), "utf8");
  const never = committed.split("\n").filter((l) => l.includes("Record<string, never>") && !l.startsWith("export type $defs"));
  assert.deepEqual(never, []);
});

test("the SDK speaks the document's API version", () => {
  const version = JSON.parse(readFileSync(document, "utf8")).info.version;
  assert.equal(API_VERSION, version);
  assert.equal(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).matchplane.apiVersion, version);
});
