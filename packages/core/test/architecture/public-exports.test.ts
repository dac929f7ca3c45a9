/**
 * The public surface of @partner-yield/core is a decision, not an accident: every entry point in
 * package.json `exports` names its exports (no `export *`), and the list of names is checked in
 * (public-exports.json). A change to it shows up in review. After a deliberate change:
 *
 *   UPDATE_PUBLIC_EXPORTS=1 NODE_OPTIONS=--conditions=@partner-yield/source \
 *     npx tsx --test packages/core/test/architecture/public-exports.test.ts
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const PACKAGE = new URL("../../", import.meta.url);
const SNAPSHOT = new URL("./public-exports.json", import.meta.url);

interface ExportTarget {
  readonly "@partner-yield/source": string;
}
const manifest = JSON.parse(readFileSync(new URL("package.json", PACKAGE), "utf8")) as {
  exports: Record<string, ExportTarget>;
};
const entries = Object.entries(manifest.exports).map(([subpath, target]) => ({
  subpath,
  file: fileURLToPath(new URL(target["@partner-yield/source"], PACKAGE)),
}));

/** `name: kind` for each export of each entry, kinds as a reader thinks of them. */
function publicExports(): Record<string, string[]> {
  const program = ts.createProgram(
    entries.map((e) => e.file),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      customConditions: ["@partner-yield/source"],
    },
  );
  const checker = program.getTypeChecker();
  const out: Record<string, string[]> = {};
  for (const { subpath, file } of entries) {
    const source = program.getSourceFile(file);
    assert.ok(source, `${subpath}: ${file} not found`);
    const module = checker.getSymbolAtLocation(source);
    assert.ok(module, `${subpath}: ${file} exports nothing`);
    out[subpath] = checker
      .getExportsOfModule(module)
      .map((symbol) => `${symbol.name}: ${kindOf(checker, symbol)}`)
      .sort((a, b) => a.localeCompare(b, "en"));
  }
  return out;
}

function kindOf(checker: ts.TypeChecker, exported: ts.Symbol): string {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return "class";
  if (f & ts.SymbolFlags.Function) return "function";
  if (f & ts.SymbolFlags.Variable) return f & ts.SymbolFlags.Type ? "const and type" : "const";
  if (f & ts.SymbolFlags.Interface) return "interface";
  if (f & ts.SymbolFlags.TypeAlias) return "type";
  return "other";
}

test("entry points name their exports: no `export *`", () => {
  for (const { subpath, file } of entries) {
    assert.doesNotMatch(readFileSync(file, "utf8"), /export\s+(type\s+)?\*/, subpath);
  }
});

test("the public export list of every entry point is the reviewed one (public-exports.json)", () => {
  const actual = publicExports();
  if (process.env["UPDATE_PUBLIC_EXPORTS"] === "1") {
    writeFileSync(SNAPSHOT, `${JSON.stringify(actual, null, 2)}\n`);
  }
  const reviewed = JSON.parse(readFileSync(SNAPSHOT, "utf8")) as Record<string, string[]>;
  assert.deepEqual(
    actual,
    reviewed,
    "the public surface changed: review the difference, then update public-exports.json (see this file's header)",
  );
});
