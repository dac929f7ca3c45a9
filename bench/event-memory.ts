/**
 * Memory per event held by the in-memory event store (not a test): appends N events of a given
 * body size through the same path the API takes (UTF-8 decode, JSON.parse, the event appended with
 * `dataFromRawBody`, so the store keeps the raw body and parses `data` when read; `HOLD_DATA=1`
 * keeps the parsed `data` too, as for an event appended without it), then compares the memory
 * taken (`process.memoryUsage()`) after a forced GC with the store's own accounting (`MemoryEventStore.bytes`, the figure `--max-event-bytes` bounds). The store holds its
 * strings in byte chunks outside the heap, so the measure is `heapUsed + arrayBuffers`.
 *
 *   node --expose-gc --conditions=@partner-yield/source --import tsx bench/event-memory.ts [N] [BODY_BYTES]
 *   [SHAPE: members | empty | numbers | floats | string]
 *   (defaults: 10000 events of about 100 bytes; e.g. `… 2000 65536 empty` for 64 KiB of `[{},{},…]`)
 */
import { MemoryEventStore } from "../packages/core/src/index.js";

const count = Number(process.argv[2] ?? "10000");
const bodyBytes = Number(process.argv[3] ?? "0");
/** members: many small members; empty: `[{},{},…]`; numbers: `[1,2,…]`; string: one long string. */
const shape = process.argv[4] ?? "members";
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc");

function body(i: number): string {
  const base = {
    event_type: "partner.user.created",
    occurred_at: "2026-11-20T10:15:00Z",
    data: { user_id: `u_${i}` },
  };
  const small = JSON.stringify(base);
  if (bodyBytes <= small.length) return small;
  const room = bodyBytes - small.length - 30;
  if (shape === "empty")
    return JSON.stringify({
      ...base,
      data: { items: Array.from({ length: Math.floor(room / 3) }, () => ({})) },
    });
  if (shape === "numbers")
    return JSON.stringify({
      ...base,
      data: { items: Array.from({ length: Math.floor(room / 2) }, (_, k) => k % 10) },
    });
  if (shape === "floats")
    return JSON.stringify({
      ...base,
      data: { items: Array.from({ length: Math.floor(room / 4) }, (_, k) => (k % 10) + 0.5) },
    });
  if (shape === "string") return JSON.stringify({ ...base, data: { items: `${i}${"x".repeat(room)}` } });
  // Many small members.
  const items: Record<string, string> = {};
  let size = small.length;
  let n = 0;
  while (size < bodyBytes - 40) {
    const key = `k${n}`;
    const value = `v${i}_${n}_${"x".repeat(20)}`;
    items[key] = value;
    size += key.length + value.length + 6;
    n++;
  }
  return JSON.stringify({ ...base, data: { user_id: `u_${i}`, items } });
}

const store = new MemoryEventStore({
  maxEvents: Number.MAX_SAFE_INTEGER,
  maxEventBytes: Number.MAX_SAFE_INTEGER,
});
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });
/** The heap and the array buffers' memory (where the store keeps its strings). */
function used(): number {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}
gc();
const before = used();
let rawBytes = 0;
for (let i = 0; i < count; i++) {
  // Decoded from bytes, as the API does: the kept string is the decoder's, not a literal's slice.
  const text = decoder.decode(encoder.encode(body(i)));
  rawBytes += text.length;
  const value = JSON.parse(text) as {
    event_type: string;
    occurred_at: string;
    data: Record<string, unknown>;
  };
  await store.append({
    partnerId: "acme",
    environment: "sandbox",
    idempotencyKey: `evt-${i}-${"k".repeat(24)}`,
    fingerprint: "f".repeat(64),
    eventType: value.event_type,
    occurredAt: value.occurred_at,
    data: value.data,
    rawBody: text,
    receivedAt: Date.now(),
    // As the API appends: `data` is `JSON.parse(rawBody).data`, so only the raw body is held.
    // `HOLD_DATA=1` appends without it (the store then keeps the parsed data too).
    dataFromRawBody: process.env["HOLD_DATA"] !== "1",
  });
}
gc();
const after = used();
const measured = (after - before) / count;
const accounted = store.bytes / count;
console.log(
  JSON.stringify({
    events: count,
    shape,
    mean_body_bytes: Math.round(rawBytes / count),
    memory_bytes_per_event: Math.round(measured),
    accounted_bytes_per_event: Math.round(accounted),
    accounted_over_measured: Number((accounted / measured).toFixed(2)),
  }),
);
