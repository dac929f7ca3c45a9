/**
 * What refusing duplicate member names costs the JSON step (not a test): per body, microseconds of
 * `JSON.parse` alone and of `findDuplicateMember` after it, on 1 KiB and 64 KiB event bodies of
 * several shapes (many small members, one long string, escaped strings, deep nesting).
 *
 *   NODE_OPTIONS=--conditions=@partner-yield/source npx tsx bench/json-duplicates.ts [ROUNDS]
 */
import { findDuplicateMember } from "../packages/core/src/encoding/duplicate-members.js";

const rounds = Number(process.argv[2] ?? "2000");
const head = '{"event_type":"partner.user.created","occurred_at":"2026-11-20T10:15:00Z","data":';

function sized(bytes: number, shape: string): string {
  const room = bytes - head.length - 2;
  let data: string;
  if (shape === "members") {
    const parts: string[] = [];
    let size = 2;
    for (let n = 0; size < room - 30; n++) {
      const part = `"k${n}":"value_${n}_xxxxxxxx"`;
      parts.push(part);
      size += part.length + 1;
    }
    data = `{${parts.join(",")}}`;
  } else if (shape === "string") data = `{"blob":"${"x".repeat(room - 12)}"}`;
  else if (shape === "escaped") data = `{"blob":"${'a\\"b\\\\'.repeat(Math.floor((room - 12) / 7))}"}`;
  else {
    const depth = Math.min(64, Math.floor(room / 8));
    data = `${'{"a":'.repeat(depth - 1)}{"z":[${"1,".repeat(Math.floor((room - depth * 6) / 2))}1]}${"}".repeat(depth - 1)}`;
  }
  return `${head}${data}}`;
}

function perCall(fn: () => unknown): number {
  for (let i = 0; i < Math.min(200, rounds); i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) fn();
  return Number(process.hrtime.bigint() - start) / rounds / 1000;
}

for (const bytes of [1024, 65_536]) {
  for (const shape of ["members", "string", "escaped", "nested"]) {
    const text = sized(bytes, shape);
    JSON.parse(text);
    if (findDuplicateMember(text) !== undefined) throw new Error("the sample has a duplicate");
    const parse = perCall(() => JSON.parse(text));
    const scan = perCall(() => findDuplicateMember(text));
    console.log(
      JSON.stringify({
        body_bytes: text.length,
        shape,
        json_parse_us: Number(parse.toFixed(2)),
        duplicate_scan_us: Number(scan.toFixed(2)),
        scan_over_parse: Number((scan / parse).toFixed(2)),
      }),
    );
  }
}
