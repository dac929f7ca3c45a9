/**
 * Crash: a stream of distinct signed events to a `partner-yield serve` process on PostgreSQL, which
 * is killed with SIGKILL at a random moment, restarted, and the stream resumed with the same keys
 * (those whose answer was lost are sent again, unchanged). Afterwards every event acknowledged with
 * 200 exists exactly once under the id it was acknowledged with, and no key maps to two events.
 *
 * PARTNER_YIELD_CRASH_CYCLES sets the number of kills (default 10); PARTNER_YIELD_CRASH_SEED
 * replays a run (the seed is printed).
 */
import assert from "node:assert/strict";
import { seededRandom } from "@partner-yield/core/testing";
import { eventHeaders, gate, INBOUND, loadSandbox } from "@partner-yield/node-adapter/testing";
import { dataSetOf, importData } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { REDIS_URL, redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import { startServerProcess } from "./server-process.js";

const CYCLES = Number(process.env["PARTNER_YIELD_CRASH_CYCLES"] ?? "10");
const SEED = Number(process.env["PARTNER_YIELD_CRASH_SEED"] ?? String(Date.now() % 1_000_000));
const WORKERS = 8;

const { test, available } = gate({ PostgreSQL: await postgresReachable(), Redis: await redisReachable() });
const db = available ? await testDatabase("crash") : undefined;
const redisKeys = available ? await testRedis("crash") : undefined;

test(`SIGKILL at random moments, ${CYCLES} times: every acknowledged event is stored exactly once (seed ${SEED})`, async () => {
  await importData(db!.pool, dataSetOf(loadSandbox()));
  const random = seededRandom(SEED);
  const run = `crash-${SEED}-${Date.now()}`;
  const bodyOf = (n: number) =>
    JSON.stringify({
      event_type: "partner.user.created",
      occurred_at: "2026-11-20T10:15:00Z",
      data: { user_id: `u_${n}`, sequence: n },
    });
  /** key → the event id it was acknowledged with (every acknowledgement of a key must agree). */
  const acknowledged = new Map<string, number>();
  /** Keys sent whose answer was lost with the server: sent again first after the restart. */
  let unanswered: number[] = [];
  let next = 0;
  let kills = 0;
  /** Answers lost with the server although the event had been stored (the resend says duplicate). */
  let storedButUnanswered = 0;
  const resent = new Set<string>();
  const args = ["--database-url", db!.url, "--redis-url", REDIS_URL, "--redis-key-prefix", redisKeys!.prefix];
  args.push("--rate-limit-quota", "1000000000");

  const send = async (url: string, n: number): Promise<"ok" | "lost"> => {
    const key = `${run}-${n}`;
    const body = bodyOf(n);
    let res: Response;
    try {
      res = await fetch(url + INBOUND, { method: "POST", headers: eventHeaders(body, key), body });
    } catch {
      return "lost"; // the server died with the request in flight: stored or not, unknown
    }
    const text = await res.text().catch(() => undefined);
    if (text === undefined) return "lost";
    assert.equal(res.status, 200, `${key}: ${res.status} ${text}`);
    const id = (JSON.parse(text) as { event_id: number }).event_id;
    if (resent.has(key) && text.includes('"duplicate":true')) storedButUnanswered++;
    const before = acknowledged.get(key);
    assert.ok(before === undefined || before === id, `${key} acknowledged as ${before}, then as ${id}`);
    acknowledged.set(key, id);
    return "ok";
  };

  for (let cycle = 0; cycle <= CYCLES; cycle++) {
    const server = await startServerProcess(args);
    const queue = unanswered;
    unanswered = [];
    const last = cycle === CYCLES;
    // The final cycle only sends again what was lost, then the server is stopped cleanly.
    const target = last ? 0 : 25 + random(150);
    let sentThisCycle = 0;
    let dead = false;
    const worker = async () => {
      for (;;) {
        if (dead) return;
        const n = queue.shift() ?? (last ? undefined : next++);
        if (n === undefined) return;
        sentThisCycle++;
        if (!last && sentThisCycle === target) {
          // SIGKILL with this worker's request and the others' in flight.
          dead = true;
          kills++;
          void server.stop("SIGKILL");
        }
        if ((await send(server.url, n)) === "lost") {
          unanswered.push(n);
          resent.add(`${run}-${n}`);
          if (!last) dead = true;
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: WORKERS }, worker));
    } finally {
      await server.stop(last ? "SIGTERM" : "SIGKILL");
    }
  }

  assert.equal(kills, CYCLES);
  assert.deepEqual(unanswered, [], "every key was answered in the end");
  assert.equal(acknowledged.size, next, "every key sent was acknowledged");
  const rows = await db!.pool.query<{ key: string; ids: string[] }>(
    "select idempotency_key as key, array_agg(id::text) as ids from events where idempotency_key like $1 group by 1",
    [`${run}-%`],
  );
  assert.equal(rows.rowCount, acknowledged.size, "one stored key per key sent");
  for (const row of rows.rows) {
    assert.equal(row.ids.length, 1, `${row.key} maps to events ${row.ids}`);
    assert.equal(Number(row.ids[0]), acknowledged.get(row.key), `${row.key}: stored id`);
  }
  process.stdout.write(
    `crash: ${CYCLES} kills, ${next} events, ${resent.size} answers lost and sent again ` +
      `(${storedButUnanswered} of them had been stored: the resend was a duplicate), seed ${SEED}\n`,
  );
});
