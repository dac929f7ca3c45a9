/** The core must run in any JS runtime: no `node:*` import, no Node globals, in its sources. */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const SRC = new URL("../../src/", import.meta.url);

test("packages/core/src imports nothing from node:* and uses no Node-only globals", () => {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  assert.ok(
    files.some((f) => f.startsWith("testing/")),
    "the testing entry point is checked too",
  );
  assert.ok(files.length > 10);
  for (const file of files) {
    const text = readFileSync(new URL(file, SRC), "utf8");
    assert.doesNotMatch(text, /from\s+["']node:|require\(|import\(["']node:/, file);
    assert.doesNotMatch(text, /\b(Buffer|process|__dirname|setImmediate)\b[.(]/, file);
    assert.doesNotMatch(text, /parseFloat|toFixed\(|Math\.(round|floor|pow)\(/, file);
  }
});
