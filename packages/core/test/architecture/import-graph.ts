/**
 * The import graph of `packages/core/src`, read from the sources: every relative `import`/`export
 * … from` (type-only ones too: a type cycle is still a cycle a reader has to untangle).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

export const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

const SPECIFIER = /(?:^|[\s;])(?:import|export)\b[^;"']*?(?:from\s*)?["'](\.{1,2}\/[^"']+)["']/g;

/** File (relative to src, `/`-separated) → the files it imports. */
export function fileGraph(): Map<string, Set<string>> {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") || f.endsWith(".json"))
    .map((f) => f.split("\\").join("/"));
  const graph = new Map<string, Set<string>>();
  for (const file of files.filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(join(SRC, file), "utf8");
    const targets = new Set<string>();
    for (const match of text.matchAll(SPECIFIER)) {
      const target = normalize(join(dirname(file), match[1]!))
        .split("\\")
        .join("/")
        .replace(/\.js$/, ".ts");
      if (!files.includes(target)) throw new Error(`${file} imports ${match[1]}, which is not a source file`);
      targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The folder a file belongs to (`math`, `http`, …), or the file itself at the root (`index.ts`). */
export function folderOf(file: string): string {
  const slash = file.indexOf("/");
  return slash === -1 ? file : file.slice(0, slash);
}

/** Folder → the folders its files import (itself excluded). */
export function folderGraph(files: Map<string, Set<string>>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [file, targets] of files) {
    const from = folderOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target));
    graph.set(from, edges);
  }
  return graph;
}

/** Every cycle's nodes (strongly connected components with more than one node, or a self-loop). */
export function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

/** The graph as lines `from → to, to`, sorted: for failure messages and the README. */
export function describeGraph(graph: Map<string, Set<string>>): string {
  return [...graph]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([from, to]) => `${from} → ${[...to].sort().join(", ") || "(nothing)"}`)
    .join("\n");
}
