// The generated types are openapi-typescript's output for the checked-in
// OpenAPI document (`npm run generate` refreshes them), and the SDK names
// the document's API version.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { API_VERSION } from "../dist/src/index.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const document = resolve(root, "../../openapi/openapi.json");

test("src/generated/openapi.ts is up to date with openapi/openapi.json", () => {
  const dir = mkdtempSync(join(tmpdir(), "mp-sdk-gen-"));
  try {
    const out = join(dir, "openapi.ts");
    execFileSync(join(root, "node_modules/.bin/openapi-typescript"), [document, "-o", out], { stdio: "ignore" });
    const fresh = readFileSync(out, "utf8");
    const committed = readFileSync(join(root, "src/generated/openapi.ts"), "utf8");
    assert.ok(fresh === committed, "src/generated/openapi.ts is stale: run `npm run generate` in sdk/typescript and commit it");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the SDK speaks the document's API version", () => {
  const version = JSON.parse(readFileSync(document, "utf8")).info.version;
  assert.equal(API_VERSION, version);
  assert.equal(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).matchplane.apiVersion, version);
});
