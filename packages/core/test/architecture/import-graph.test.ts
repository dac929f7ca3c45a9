/**
 * The structure drawn from the imports: no circle between files, and none between core's folders
 * (math, auth, evm, encoding, stores, http, fixtures), so each layer can be read on its own.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { cycles, describeGraph, fileGraph, folderGraph } from "./import-graph.js";

const files = fileGraph();

test("the graph is read from the sources (a check that it sees the imports at all)", () => {
  assert.ok(files.get("index.ts")!.has("http/partner-api.ts"));
  assert.ok(files.get("http/partner-api.ts")!.has("http/routes.ts"));
  // type-only imports count
  assert.ok(files.get("http/handler.ts")!.has("http/dependencies.ts"));
  assert.ok(files.size > 40, `${files.size} files`);
});

test("no import circle between files", () => {
  assert.deepEqual(cycles(files), []);
});

test("no import circle between folders", () => {
  const folders = folderGraph(files);
  assert.deepEqual(cycles(folders), [], describeGraph(folders));
});

test("the cycle finder finds a circle (so the two tests above can fail)", () => {
  const graph = new Map([
    ["a", new Set(["b"])],
    ["b", new Set(["c"])],
    ["c", new Set(["a"])],
    ["d", new Set(["d"])],
    ["e", new Set<string>()],
  ]);
  assert.deepEqual(cycles(graph), [["a", "b", "c"], ["d"]]);
});

test("the lower layers import nothing above them", () => {
  const folders = folderGraph(files);
  for (const leaf of ["math", "encoding", "evm"]) {
    const above = [...folders.get(leaf)!].filter((f) => f !== "result.ts");
    assert.deepEqual(above, [], `${leaf} imports ${above.join(", ")}`);
  }
  assert.ok(!folders.get("stores")!.has("http"), "stores must not know about HTTP");
  assert.ok(!folders.get("http")!.has("fixtures"), "the API must not depend on the fixture loader");
});
