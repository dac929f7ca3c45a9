/**
 * The packages meet only through their published entry points. A file of a workspace package
 * (packages/*, harness, examples) imports no file outside its package by a relative path and
 * reads none of another package's files through `new URL("../…", import.meta.url)`: it imports
 * `@partner-yield/<name>` or one of its subpaths (`/testing` for shared test helpers), which its
 * package.json declares. What a package ships (src/) imports at run time only its dependencies,
 * its peers and `node:*`, so a `testing` entry works where the package is installed. The
 * repository's own tools (bench/, test/) may reach into a package's src/, never a published
 * package's test/.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

interface WorkspacePackage {
  /** Relative to the repository, `/`-separated: `packages/core`, `harness`. */
  readonly dir: string;
  readonly manifest: Manifest;
}

const PACKAGES: readonly WorkspacePackage[] = [
  ...readdirSync(join(ROOT, "packages")).map((name) => `packages/${name}`),
  "harness",
  "examples",
]
  .filter((dir) => existsSync(join(ROOT, dir, "package.json")))
  .map((dir) => ({
    dir,
    manifest: JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as Manifest,
  }));

/** The repository's tools: no package of their own, they may import a package's sources. */
const TOOLS = ["bench", "e2e"];

/** Every .ts file under `dir` (relative to the repository), without dependencies and builds. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .map((f) => f.split(sep).join("/"))
    .filter((f) => f.endsWith(".ts") && !/(^|\/)(node_modules|dist|\.build)\//.test(f))
    .map((f) => `${dir}/${f}`);
}

/** The text with comments blanked, so an `@example` import is not read as one. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/^\s*\/\/.*$/gm, " ");
}

interface Reference {
  readonly specifier: string;
  /** `import type …`, `export type …`, or every named binding marked `type`. */
  readonly typeOnly: boolean;
  readonly kind: "import" | "url";
}

const STATIC = /(?:^|[\s;])(import|export)(\s+type)?\s+([^;"'`]*?)\bfrom\s*["']([^"']+)["']/g;
const SIDE_EFFECT = /(?:^|[\s;])import\s*["']([^"']+)["']/g;
const DYNAMIC = /\bimport\(\s*["']([^"']+)["']\s*[,)]/g;
const URL_OF = /new URL\(\s*["']([^"']+)["']\s*,\s*import\.meta\.url\s*\)/g;

/** The modules a file imports and the files it names by `new URL(…, import.meta.url)`. */
function references(text: string): Reference[] {
  const code = withoutComments(text);
  const found: Reference[] = [];
  for (const m of code.matchAll(STATIC)) {
    const bindings = m[3]!.trim();
    const named = /^\{([\s\S]*)\}$/.exec(bindings)?.[1];
    const allTyped =
      named !== undefined &&
      named.split(",").filter((b) => b.trim() !== "").length > 0 &&
      named
        .split(",")
        .filter((b) => b.trim() !== "")
        .every((b) => b.trim().startsWith("type "));
    found.push({ specifier: m[4]!, typeOnly: m[2] !== undefined || allTyped, kind: "import" });
  }
  for (const m of code.matchAll(SIDE_EFFECT))
    found.push({ specifier: m[1]!, typeOnly: false, kind: "import" });
  for (const m of code.matchAll(DYNAMIC)) found.push({ specifier: m[1]!, typeOnly: false, kind: "import" });
  for (const m of code.matchAll(URL_OF)) found.push({ specifier: m[1]!, typeOnly: false, kind: "url" });
  return found;
}

/** The workspace package a path (relative to the repository) lies in, if any. */
function packageOf(path: string): WorkspacePackage | undefined {
  return PACKAGES.find((p) => path === p.dir || path.startsWith(`${p.dir}/`));
}

/** Where a relative specifier of `file` points, relative to the repository. */
function target(file: string, specifier: string): string {
  return relative(ROOT, resolve(ROOT, dirname(file), specifier))
    .split(sep)
    .join("/");
}

/** `@scope/name` or `name` of a bare specifier. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

const isRelative = (specifier: string) => specifier.startsWith("./") || specifier.startsWith("../");

test("the scan sees the workspace (a check that the tests below can fail)", () => {
  assert.ok(PACKAGES.some((p) => p.manifest.name === "@partner-yield/core"));
  assert.ok(PACKAGES.length >= 10, PACKAGES.map((p) => p.dir).join(", "));
  const refs = references(
    'import { a } from "../../core/src/x.js";\nimport type { B } from "pg";\n' +
      'import { type C, type D } from "e";\n/** @example import { f } from "vitest"; */\n' +
      'const u = new URL("../../node-adapter/fixtures/", import.meta.url);\nawait import("../y.js");\n',
  );
  assert.deepEqual(
    refs.map((r) => `${r.kind} ${r.specifier}${r.typeOnly ? " (type)" : ""}`),
    [
      "import ../../core/src/x.js",
      "import pg (type)",
      "import e (type)",
      "import ../y.js",
      "url ../../node-adapter/fixtures/",
    ],
  );
  assert.equal(target("packages/server/test/a.ts", "../../core/src/x.js"), "packages/core/src/x.js");
  assert.equal(packageOf("packages/core/src/x.js")?.dir, "packages/core");
});

test("no package imports a file outside itself, or reads another package's files, by a relative path", () => {
  const crossings: string[] = [];
  for (const pkg of PACKAGES) {
    for (const file of sourceFiles(pkg.dir)) {
      for (const ref of references(readFileSync(join(ROOT, file), "utf8"))) {
        if (!isRelative(ref.specifier)) continue;
        const to = target(file, ref.specifier);
        const inside = to === pkg.dir || to.startsWith(`${pkg.dir}/`);
        // An import stays in the package; a file read may also be the repository's own
        // (fixtures/, docs/, deploy/), but never another package's.
        const other = packageOf(to);
        if (ref.kind === "import" ? !inside : other !== undefined && other !== pkg)
          crossings.push(`${file}: ${ref.kind === "url" ? "new URL" : "import"} "${ref.specifier}" (${to})`);
      }
    }
  }
  assert.deepEqual(
    crossings,
    [],
    "import @partner-yield/<package> or its /testing entry instead (declared in package.json)",
  );
});

test("every @partner-yield/* a package imports is declared in its package.json", () => {
  const undeclared: string[] = [];
  for (const pkg of PACKAGES) {
    const { name, dependencies = {}, devDependencies = {}, peerDependencies = {} } = pkg.manifest;
    for (const file of sourceFiles(pkg.dir)) {
      for (const ref of references(readFileSync(join(ROOT, file), "utf8"))) {
        if (ref.kind !== "import" || !ref.specifier.startsWith("@partner-yield/")) continue;
        const wanted = packageName(ref.specifier);
        if (wanted !== name && !(wanted in { ...dependencies, ...devDependencies, ...peerDependencies }))
          undeclared.push(`${file}: ${ref.specifier}`);
      }
    }
  }
  assert.deepEqual(undeclared, []);
});

test("what a package ships (src/) imports at run time only node:*, itself, its dependencies and peers", () => {
  const devOnly: string[] = [];
  for (const pkg of PACKAGES) {
    if (!existsSync(join(ROOT, pkg.dir, "src"))) continue;
    const { name, dependencies = {}, peerDependencies = {} } = pkg.manifest;
    for (const file of sourceFiles(`${pkg.dir}/src`)) {
      for (const ref of references(readFileSync(join(ROOT, file), "utf8"))) {
        if (ref.kind !== "import" || ref.typeOnly || isRelative(ref.specifier)) continue;
        if (ref.specifier.startsWith("node:")) continue;
        const wanted = packageName(ref.specifier);
        if (wanted !== name && !(wanted in { ...dependencies, ...peerDependencies }))
          devOnly.push(`${file}: ${ref.specifier}`);
      }
    }
  }
  assert.deepEqual(devOnly, [], "a devDependency is not installed with the package");
});

test("the repository's tools (bench/, test/) use a package's sources, never a published package's tests", () => {
  const intoTests: string[] = [];
  for (const dir of TOOLS) {
    for (const file of sourceFiles(dir)) {
      for (const ref of references(readFileSync(join(ROOT, file), "utf8"))) {
        if (!isRelative(ref.specifier)) continue;
        const to = target(file, ref.specifier);
        const pkg = packageOf(to);
        // examples/ publishes nothing, so it has no testing entry: the packaging test reuses its checks.
        if (pkg !== undefined && pkg.manifest.private !== true && to.startsWith(`${pkg.dir}/test/`))
          intoTests.push(`${file}: "${ref.specifier}"`);
      }
    }
  }
  assert.deepEqual(intoTests, [], "share test helpers through the package's testing entry point");
});
