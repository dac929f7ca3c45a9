/**
 * Every citation in the repository resolves: `CONTRACT §N` to a section of docs/contract.md,
 * `interface.md §N.N` to a section of docs/interface.md, a `docs/….md` mention to a file, and a
 * Markdown link to a file (and heading) that exists. And nothing refers to the material the
 * repository was started from outside itself: the repository is self-contained.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, test } from "node:test";
import { ROOT } from "./support/processes.js";

type Document = "contract" | "interface";
const DOCUMENT_FILES: Record<Document, string> = {
  contract: "docs/contract.md",
  interface: "docs/interface.md",
};

/** Section numbers of a document: `## 4. …` gives "4", `### 4.3 …` gives "4.3". */
export function sectionNumbers(markdown: string): Set<string> {
  const numbers = new Set<string>();
  for (const match of markdown.matchAll(/^#{2,4} (\d+(?:\.\d+)*)\.? /gm)) numbers.add(match[1]!);
  return numbers;
}

/** GitHub's anchors for the headings of a Markdown text. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^```[\s\S]*?^```/gm, "");
  for (const match of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = match[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

export interface Citation {
  readonly document: Document;
  readonly section: string;
  readonly text: string;
}

const SECTION = String.raw`§\d+(?:\.\d+)*`;
const GROUP = new RegExp(
  String.raw`(CONTRACT(?:\.md)?|\bcontract(?:\.md)?|interface\.md|RFC ?\d+)?[ \t]*(${SECTION}(?:[ \t]*(?:,|–|-|and|or)[ \t]*${SECTION})*)`,
  "g",
);

/**
 * The `§` citations of `text`. A group names its document (`CONTRACT §4, §9`, `interface.md §5.1`);
 * a bare `§N` in one of the two documents cites that document itself; RFC sections are not ours.
 */
export function citationsIn(text: string, file: string): Citation[] {
  const self = (Object.keys(DOCUMENT_FILES) as Document[]).find((d) => DOCUMENT_FILES[d] === file);
  const found: Citation[] = [];
  for (const match of text.matchAll(GROUP)) {
    const name = match[1];
    let document: Document | undefined;
    if (name === undefined) document = self;
    else if (/^interface/.test(name)) document = "interface";
    else if (/^contract/i.test(name)) document = "contract";
    if (document === undefined) continue;
    for (const section of match[2]!.matchAll(/§(\d+(?:\.\d+)*)/g))
      found.push({ document, section: section[1]!, text: match[0] });
  }
  return found;
}

function repositoryFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return out
    .split("\0")
    .filter((f) => /\.(ts|js|md|json)$/.test(f) && f !== "pnpm-lock.yaml" && existsSync(join(ROOT, f)));
}

const FILES = repositoryFiles().map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
const SECTIONS: Record<Document, Set<string>> = {
  contract: sectionNumbers(readFileSync(join(ROOT, DOCUMENT_FILES.contract), "utf8")),
  interface: sectionNumbers(readFileSync(join(ROOT, DOCUMENT_FILES.interface), "utf8")),
};

describe("citations", () => {
  test("the normative documents have their sections: contract §1–§9, interface §1–§9 with 4.1–4.5, 5.1–5.7 and 6.1–6.4", () => {
    for (let n = 1; n <= 9; n++) {
      assert.ok(SECTIONS.contract.has(String(n)), `contract §${n}`);
      assert.ok(SECTIONS.interface.has(String(n)), `interface §${n}`);
    }
    for (let n = 1; n <= 5; n++) assert.ok(SECTIONS.interface.has(`4.${n}`), `interface §4.${n}`);
    for (let n = 1; n <= 7; n++) assert.ok(SECTIONS.interface.has(`5.${n}`), `interface §5.${n}`);
    for (let n = 1; n <= 4; n++) assert.ok(SECTIONS.interface.has(`6.${n}`), `interface §6.${n}`);
  });

  test("the scanner finds what it must, and a missing section is reported", () => {
    const cited = citationsIn(
      "CONTRACT §3–§9; interface.md §1, §4.1 and §5.5; RFC 9112 §3.2; contract §2",
      "x.ts",
    );
    assert.deepEqual(
      cited.map((c) => `${c.document} ${c.section}`),
      ["contract 3", "contract 9", "interface 1", "interface 4.1", "interface 5.5", "contract 2"],
    );
    assert.deepEqual(citationsIn("bare §6", "docs/contract.md")[0]?.document, "contract");
    assert.deepEqual(citationsIn("bare §6", "README.md"), []);
    assert.ok(!SECTIONS.contract.has("10") && !SECTIONS.interface.has("4.9"));
  });

  test("every CONTRACT § and interface.md § cited in code, docs and check sources names an existing section", () => {
    const unresolved: string[] = [];
    let count = 0;
    for (const { file, text } of FILES) {
      for (const citation of citationsIn(text, file)) {
        count++;
        if (!SECTIONS[citation.document].has(citation.section))
          unresolved.push(
            `${file}: "${citation.text}" → ${DOCUMENT_FILES[citation.document]} has no §${citation.section}`,
          );
      }
    }
    assert.deepEqual(unresolved, []);
    assert.ok(count > 300, `only ${count} citations found: is the scanner still reading the repository?`);
  });

  test("every docs/….md named in code or docs exists", () => {
    const missing: string[] = [];
    for (const { file, text } of FILES)
      for (const match of text.matchAll(/(?<![\w./-])docs\/[\w.-]+\.md/g))
        if (!existsSync(join(ROOT, match[0]))) missing.push(`${file}: ${match[0]}`);
    assert.deepEqual(missing, []);
  });

  test("every relative Markdown link reaches a file, and a heading where it names one", () => {
    const broken: string[] = [];
    for (const { file, text } of FILES.filter((f) => f.file.endsWith(".md"))) {
      const prose = text.replace(/^```[\s\S]*?^```/gm, "");
      for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const resolved = path === "" ? file : normalize(join(dirname(file), path));
        const absolute = join(ROOT, resolved);
        if (!existsSync(absolute)) {
          broken.push(`${file}: ${target} (no ${resolved})`);
          continue;
        }
        if (anchor !== undefined && statSync(absolute).isFile() && resolved.endsWith(".md")) {
          if (!headingAnchors(readFileSync(absolute, "utf8")).has(anchor))
            broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  test("the repository is self-contained: nothing refers to material outside it", () => {
    const outside = ["/work/" + "shared", "../" + "shared/"];
    const found = FILES.filter(({ text }) => outside.some((p) => text.includes(p))).map((f) => f.file);
    assert.deepEqual(found, []);
  });
});
