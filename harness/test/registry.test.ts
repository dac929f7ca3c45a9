/**
 * The check registry: stable IDs, kinds, levels, and citations that can be checked: every quote
 * is found, verbatim, in the section of interface.md, the CONTRACT or our decisions it names.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { CHECKS } from "../src/checks/registry.js";
import { CATEGORIES, type Citation } from "../src/checks/types.js";
import { ALTERNATIVES } from "../src/faults/alternatives.js";
import { FAILED_AUTH_BUDGET } from "../src/runner.js";

/** The normative documents as the repository holds them: docs/interface.md and docs/contract.md. */
const NORMATIVE: Readonly<Record<"interface.md" | "CONTRACT", string>> = {
  "interface.md": readFileSync(new URL("../../docs/interface.md", import.meta.url), "utf8"),
  CONTRACT: readFileSync(new URL("../../docs/contract.md", import.meta.url), "utf8"),
};
const DOCS = new URL("../../docs/", import.meta.url);

/** Our decisions: the subsections of docs/contract.md, under the contract section each extends. */
const DECISIONS = readFileSync(new URL("contract.md", DOCS), "utf8");

function flat(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The text of a section: from its heading to the next heading of the same or a higher level. */
function sectionText(document: string, heading: RegExp): string | undefined {
  const lines = document.split("\n");
  const start = lines.findIndex((l) => heading.test(l));
  if (start === -1) return undefined;
  const level = /^#+/.exec(lines[start]!)![0].length;
  let end = start + 1;
  while (end < lines.length && !(/^#+ /.test(lines[end]!) && /^#+/.exec(lines[end]!)![0].length <= level))
    end++;
  return lines.slice(start, end).join("\n");
}

function citedText(c: Citation): string | undefined {
  if (c.document === "decisions")
    return sectionText(DECISIONS, new RegExp(`^#{2,3} ${escapeRegExp(c.section)}$`));
  const number = /^§([0-9]+)(?:\.([0-9]+))?$/.exec(c.section);
  if (number === null) return undefined;
  const doc = NORMATIVE[c.document];
  const sub =
    number[2] === undefined ? undefined : sectionText(doc, new RegExp(`^### ${number[1]}\\.${number[2]} `));
  // A numbered rule (§5.5, §6.1) lives in the list of its section.
  return sub ?? sectionText(doc, new RegExp(`^## ${number[1]}\\. `));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const ALL_CITATIONS: Array<[string, Citation]> = [
  ...CHECKS.flatMap((c) => [
    ...c.cites.map((cite): [string, Citation] => [c.id, cite]),
    ...(c.tolerates ?? []).map((cite): [string, Citation] => [c.id, cite]),
    ...(c.reference?.cites ?? []).map((cite): [string, Citation] => [`${c.id} (reference)`, cite]),
  ]),
  ...ALTERNATIVES.map((a): [string, Citation] => [a.id, a.allowedBy]),
];

describe("the check registry", () => {
  test("holds at least 35 checks with unique, stable-looking IDs, numbered in order per category", () => {
    assert.ok(CHECKS.length >= 35, `${CHECKS.length} checks`);
    const ids = CHECKS.map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const c of CHECKS) assert.match(c.id, /^(AUTH|PRD|POS|YLD|EVT|ERR|SCH|RL)-[0-9]{2}$/);
    for (const category of CATEGORIES) {
      const inCategory = CHECKS.filter((c) => c.category === category).map((c) => c.id);
      assert.ok(inCategory.length > 0, category);
      const prefix = inCategory[0]!.split("-")[0];
      for (const [i, id] of inCategory.sort().entries())
        assert.equal(id, `${prefix}-${String(i + 1).padStart(2, "0")}`);
    }
  });

  test("response checks judge responses; scenarios run; the quota-spending probe is the last scenario", () => {
    const kinds = new Set(CHECKS.map((c) => c.kind));
    assert.deepEqual([...kinds].sort(), ["response", "scenario"]);
    for (const c of CHECKS) {
      if (c.kind === "response") assert.equal(typeof c.inspect, "function", c.id);
      else assert.equal(typeof c.run, "function", c.id);
    }
    const scenarios = CHECKS.filter((c) => c.kind === "scenario");
    assert.equal(scenarios.at(-1)!.id, "RL-03");
  });

  test("spec checks enforce lines of interface.md (ERR-05 aside: level spec adds 'no 5xx'); reference checks the CONTRACT or our decisions", () => {
    for (const c of CHECKS) {
      assert.ok(c.cites.length > 0, c.id);
      const documents = new Set(c.cites.map((cite) => cite.document));
      if (c.level === "spec" && c.id !== "ERR-05") assert.deepEqual([...documents], ["interface.md"], c.id);
      if (c.level === "reference") assert.ok(!documents.has("interface.md"), c.id);
      for (const gap of c.tolerates ?? []) {
        assert.equal(gap.document, "interface.md", c.id);
        assert.match(gap.quote, /not shown/, `${c.id} leaves open only what interface.md does not show`);
      }
      if (c.reference !== undefined)
        assert.equal(c.level, "spec", `${c.id}: only spec checks add at reference`);
      assert.ok(c.title.length > 10 && c.title.length < 100, c.id);
    }
  });

  test(`every quote (${ALL_CITATIONS.length}) is found verbatim in the section it names`, () => {
    const missing = ALL_CITATIONS.filter(([, c]) => !flat(citedText(c) ?? "").includes(flat(c.quote)));
    assert.deepEqual(
      missing.map(([id, c]) => `${id}: ${c.document} ${c.section}: ${c.quote}`),
      [],
    );
  });

  test("a full plan keeps its failing-auth requests well under the target's 30 a minute", () => {
    const failing = CHECKS.reduce((n, c) => n + (c.failedAuth ?? 0), 0);
    assert.ok(failing <= FAILED_AUTH_BUDGET && FAILED_AUTH_BUDGET < 30, `${failing}`);
  });
});
