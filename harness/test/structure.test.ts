/**
 * The shape of the harness: no import circle among its modules, and the core imported only where
 * it must be (its schemas and EIP-55 in one module, the fault server that wraps it, the in-process
 * property suite that tests it, the embedded server that runs it). Every expected figure comes
 * from the harness's own oracle.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : [];
  });
}

const FILES = sources(SRC);
const SPECIFIER = /(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;

function specifiers(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(SPECIFIER)].map((m) => (m[1] ?? m[2])!);
}

/** Module → the harness modules it imports (type-only imports included: they draw the structure too). */
const GRAPH = new Map(
  FILES.map((file) => [
    relative(SRC, file),
    specifiers(file)
      .filter((s) => s.startsWith("."))
      .map((s) => relative(SRC, resolve(dirname(file), s.replace(/\.js$/, ".ts")))),
  ]),
);

/** Every import circle of `graph`, as `a → b → a` (depth-first search). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === "done") return;
    if (state.get(node) === "open") {
      found.push([...path.slice(path.indexOf(node)), node].join(" → "));
      return;
    }
    state.set(node, "open");
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, "done");
  };
  for (const node of graph.keys()) visit(node, []);
  return found;
}

describe("the harness's module structure", () => {
  test("has no import circle", () => {
    assert.ok(GRAPH.size > 30, `${GRAPH.size} modules read`);
    assert.ok((GRAPH.get("runner.ts") ?? []).includes("checks/context.ts"), "relative imports are resolved");
    assert.deepEqual(circles(GRAPH), []);
    // The search finds one when there is one (the circle this harness once had, type imports and all).
    const once = new Map([
      ["checks/context.ts", ["fixtures.ts"]],
      ["fixtures.ts", ["config.ts"]],
      ["config.ts", ["checks/types.ts"]],
      ["checks/types.ts", ["checks/context.ts"]],
    ]);
    assert.deepEqual(circles(once), [
      "checks/context.ts → fixtures.ts → config.ts → checks/types.ts → checks/context.ts",
    ]);
  });

  test("imports the core only where it must: schemas and EIP-55 in one module, the fault server, the in-process properties, the CLI's terminal escaping", () => {
    const allowed = [
      "checks/from-core.ts",
      "embedded.ts",
      "faults/alternatives.ts",
      "faults/faults.ts",
      "faults/interceptors.ts",
      "properties/arbitraries.ts",
      "properties/registry.ts",
      "terminal.ts",
    ];
    const importers = [...GRAPH.keys()].filter((file) =>
      specifiers(join(SRC, file)).some(
        (s) => s === "@partner-yield/core" || s.startsWith("@partner-yield/core/"),
      ),
    );
    assert.deepEqual(importers.sort(), allowed);
    const fromCore = readFileSync(join(SRC, "checks/from-core.ts"), "utf8");
    const names = /export \{([^}]*)\} from "@partner-yield\/core"/
      .exec(fromCore)![1]!
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean);
    assert.deepEqual(
      names.sort(),
      [
        "EventAck",
        "PositionResponse",
        "Problem",
        "ProductListResponse",
        "ProductResponse",
        "YieldCalculationResponse",
        "toChecksumAddress",
      ].sort(),
    );
  });

  test("the oracle stands alone: it imports nothing from the core or the checks", () => {
    for (const [file, imports] of GRAPH) {
      if (!file.startsWith("oracle/")) continue;
      assert.ok(!specifiers(join(SRC, file)).some((s) => s.startsWith("@partner-yield/")), file);
      assert.ok(
        imports.every((i) => i.startsWith("oracle/") || i === "config.ts"),
        `${file}: ${imports.join(", ")}`,
      );
    }
  });
});
