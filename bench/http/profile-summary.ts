/**
 * Top self-time functions of a V8 `.cpuprofile` (from `pnpm bench:http --profile dir`):
 *   tsx bench/http/profile-summary.ts dir/ours-product.cpuprofile [top=25]
 * Self time is attributed from the profile's samples; idle and GC are listed as V8 names them.
 * @module
 */
import { readFileSync } from "node:fs";

// A reader that stops early (`… | head`) is not an error: what it did not read is dropped.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

const USAGE = `usage: profile-summary.ts file.cpuprofile [top]

The functions with the most self time in a V8 CPU profile (\`pnpm bench:http --profile dir\`,
\`node --cpu-prof\`), then the most inclusive time as a share of the non-idle time. top: how many
(default 25; the inclusive list, without (root) and (idle), shows 10 more).`;

const [file, topArg] = process.argv.slice(2);
if (file === "--help" || file === "-h") {
  console.log(USAGE);
  process.exit(0);
}
if (file === undefined || (topArg !== undefined && !/^[1-9][0-9]*$/.test(topArg))) {
  console.error(
    file === undefined
      ? USAGE
      : `profile-summary.ts: top must be a positive integer, not ${JSON.stringify(topArg)}\n\n${USAGE}`,
  );
  process.exit(2);
}
const profile = readProfile(file);

/** The profile at `path`, or exit 1 saying why it cannot be read. */
function readProfile(path: string): Profile {
  let parsed: Partial<Profile>;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<Profile>;
  } catch (error) {
    console.error(`profile-summary.ts: cannot read ${path}: ${(error as Error).message}`);
    process.exit(1);
  }
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    !Array.isArray(parsed.nodes) ||
    parsed.nodes.length === 0 ||
    !Array.isArray(parsed.samples) ||
    !Array.isArray(parsed.timeDeltas)
  ) {
    console.error(`profile-summary.ts: ${path} is not a V8 CPU profile (no nodes, samples and timeDeltas)`);
    process.exit(1);
  }
  return parsed as Profile;
}
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  const frame = byId.get(id)?.callFrame;
  const where = frame?.url
    ? `${frame.url.replace(/^.*\/(packages|node_modules|bench)\//, "$1/")}:${frame.lineNumber + 1}`
    : "";
  const name = `${frame?.functionName || "(anonymous)"} ${where}`.trim();
  self.set(name, (self.get(name) ?? 0) + dt);
  total += dt;
});
const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 25));
console.log(`${(total / 1000).toFixed(0)} ms sampled`);
for (const [name, us] of top) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);

// Inclusive time of the busiest functions (self time of the node and all its descendants).
interface TreeNode extends ProfileNode {
  readonly children?: number[];
}
const selfById = new Map<number, number>();
profile.samples.forEach((id, i) => {
  selfById.set(id, (selfById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const inclusive = new Map<string, number>();
function walk(id: number, onStack: Set<string>): number {
  const node = byId.get(id) as TreeNode | undefined;
  if (node === undefined) return 0;
  let sum = selfById.get(id) ?? 0;
  const f = node.callFrame;
  const name = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(packages|node_modules|bench)\//, "$1/")}:${f.lineNumber + 1}`;
  const fresh = !onStack.has(name);
  if (fresh) onStack.add(name);
  for (const child of node.children ?? []) sum += walk(child, onStack);
  if (fresh) {
    onStack.delete(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + sum);
  }
  return sum;
}
walk(profile.nodes[0]!.id, new Set());
const busy = total - (self.get("(idle)") ?? 0);
console.log(`\ninclusive, % of non-idle time (${(busy / 1000).toFixed(0)} ms):`);
// (root) holds every sample and (idle) the idle ones: neither is a share of the non-idle time.
const busiest = [...inclusive]
  .filter(([name]) => !/^\((root|idle)\) /.test(name))
  .sort((a, b) => b[1] - a[1]);
for (const [name, us] of busiest.slice(0, Number(topArg ?? 25) + 10)) {
  console.log(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`);
}
