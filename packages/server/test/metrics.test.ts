/**
 * `/metrics` (metrics.ts, metrics-server.ts): `partner-yield serve --database-url … --metrics-port 0`
 * as an operator runs it, sent a 401, an accepted and a duplicate event and requests up to a 429;
 * the scrape then holds each series with its labels and values, passes `promtool check metrics`,
 * and names every series the Grafana dashboard and the alert rules use. The alert rules pass
 * `promtool check rules` and their unit tests (`promtool test rules`). promtool (Debian's
 * `prometheus` package; .ci/run installs it) is required under CI=true; elsewhere its checks are
 * skipped loudly.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  DEMO,
  eventBody,
  eventHeaders,
  gate,
  INBOUND,
  loadSandbox,
} from "@partner-yield/node-adapter/testing";
import { dataSetOf, importData } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { parseCommandLine, UsageError } from "../src/cli-options.js";
import { runEventsCommand } from "../src/events-command.js";
import { type ServerProcess, startServerProcess } from "./server-process.js";

const DEPLOY = fileURLToPath(new URL("../../../deploy/", import.meta.url));
const RULES = `${DEPLOY}prometheus/partner-yield.rules.yml`;
const RULE_TESTS = `${DEPLOY}prometheus/partner-yield.rules.test.yml`;
const DASHBOARD = `${DEPLOY}grafana/partner-yield.json`;
/** The quota every partner gets in the server test: the fourth request of a minute is 429. */
const QUOTA = 3;

const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" });
const promtoolMissing =
  promtool.error === undefined && promtool.status === 0
    ? undefined
    : `promtool is not installed (${promtool.error?.message ?? promtool.stderr}); install Debian's prometheus package (apt-get install prometheus)`;
const withPostgres = gate({ PostgreSQL: await postgresReachable() });
const db = withPostgres.available ? await testDatabase("metrics") : undefined;

/** Runs promtool; `input` goes to its stdin. */
function runPromtool(args: readonly string[], input?: string): { status: number | null; output: string } {
  const run = spawnSync("promtool", args, { cwd: `${DEPLOY}prometheus`, input, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of a Prometheus text exposition (label values without escapes: ours have none). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g))
      labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.ok(found.length > 0, `no sample ${name}${JSON.stringify(labels)}`);
  return found.reduce((sum, s) => sum + s.value, 0);
}

/** The series names a PromQL-bearing file uses (ours and the process metrics'). */
function seriesNamesIn(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/\b((?:partner_yield|process|nodejs)_[a-z0-9_]+)/g)].map((m) =>
      m[1]!.replace(/_(bucket|sum|count)$/, ""),
    ),
  );
}

if (promtoolMissing !== undefined && process.env["CI"] !== "true")
  process.stderr.write(
    `\n${"!".repeat(100)}\n!! SKIPPED: the promtool checks: ${promtoolMissing}.\n!! Under CI=true they fail instead.\n${"!".repeat(100)}\n\n`,
  );

/** Skips the test (loudly, above) when promtool is missing; under CI=true, fails it. */
function needPromtool(t: { skip(message: string): void }): boolean {
  if (promtoolMissing === undefined) return true;
  if (process.env["CI"] === "true") assert.fail(`${promtoolMissing} (required under CI=true)`);
  t.skip(`SKIPPED: ${promtoolMissing}`);
  return false;
}

describe("the alert rules (promtool)", () => {
  test("pass promtool check rules", (t) => {
    if (!needPromtool(t)) return;
    const run = runPromtool(["check", "rules", RULES]);
    assert.equal(run.status, 0, run.output);
  });
  test("fire as their unit tests expect (promtool test rules)", (t) => {
    if (!needPromtool(t)) return;
    const run = runPromtool(["test", "rules", RULE_TESTS]);
    assert.equal(run.status, 0, run.output);
  });
});

withPostgres.describe("serve --metrics-port on PostgreSQL, after traffic", () => {
  let server: ServerProcess;
  let metricsUrl: string;
  const scrape = async (): Promise<string> => {
    const res = await fetch(metricsUrl);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  const products = () =>
    fetch(`${server.url}/api/partner/products`, { headers: { "x-api-key": DEMO.sandboxApiKey } });
  let text = "";
  let samples: Sample[] = [];

  before(async () => {
    await importData(db!.pool, dataSetOf(loadSandbox()));
    server = await startServerProcess([
      "--database-url",
      db!.url,
      "--metrics-port",
      "0",
      "--rate-limit-quota",
      String(QUOTA),
    ]);
    metricsUrl = /metrics (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(server.banner)?.[1] ?? "";
    assert.notEqual(metricsUrl, "", `no metrics URL in the banner:\n${server.banner}`);
    // The read cache answers once its LISTEN connection is subscribed (in the background).
    const end = Date.now() + 10_000;
    while (sampleValue(parseExposition(await scrape()), "partner_yield_read_cache_trusted") !== 1) {
      assert.ok(Date.now() < end, "the read cache was not trusted within 10 s");
      await delay(50);
    }

    const unknownKey = await fetch(`${server.url}/api/partner/products`, {
      headers: { "x-api-key": "ypk_test_not_a_key_of_anyone_at_all_000000000" },
    });
    assert.equal(unknownKey.status, 401);
    const body = eventBody();
    for (const expected of [false, true]) {
      const res = await fetch(`${server.url}${INBOUND}`, {
        method: "POST",
        headers: eventHeaders(body, "metrics-test-1"),
        body,
      });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { duplicate: boolean }).duplicate, expected);
    }
    let limited = 0;
    for (let i = 0; i < QUOTA + 2 && limited === 0; i++) {
      const res = await products();
      await res.arrayBuffer();
      if (res.status === 429) limited++;
    }
    assert.equal(limited, 1, "no 429 within the quota and two more");
    text = await scrape();
    samples = parseExposition(text);
  });
  after(async () => {
    await server?.stop("SIGTERM");
  });

  withPostgres.test("requests by route, status and error code; latency by route", async () => {
    const requests = "partner_yield_http_requests_total";
    assert.equal(sampleValue(samples, requests, { route: "GET /products", code: "invalid_api_key" }), 1);
    assert.equal(
      sampleValue(samples, requests, { route: "GET /products", status: "429", code: "rate_limited" }),
      1,
    );
    assert.equal(
      sampleValue(samples, requests, { route: "POST /webhooks/inbound", status: "200", code: "none" }),
      2,
    );
    assert.ok(sampleValue(samples, requests, { route: "GET /products", status: "200", code: "none" }) >= 1);
    const count = sampleValue(samples, "partner_yield_http_request_duration_seconds_count", {
      route: "POST /webhooks/inbound",
    });
    assert.equal(count, 2);
    assert.equal(
      sampleValue(samples, "partner_yield_http_request_duration_seconds_bucket", {
        route: "POST /webhooks/inbound",
        le: "+Inf",
      }),
      2,
    );
    // Route templates only: no raw path (a slug, a query) is ever a label value.
    for (const s of samples.filter((s) => s.labels["route"] !== undefined))
      assert.match(s.labels["route"]!, /^(GET|POST) \/[a-z/{}.-]*$|^unmatched$/);
  });

  withPostgres.test("429s and failed authentications by partner", async () => {
    assert.equal(
      sampleValue(samples, "partner_yield_http_rate_limited_total", {
        partner: DEMO.partnerId,
        code: "rate_limited",
      }),
      1,
    );
    assert.equal(
      sampleValue(samples, "partner_yield_http_auth_failures_total", {
        partner: "unknown",
        code: "invalid_api_key",
      }),
      1,
    );
  });

  withPostgres.test("events accepted, duplicate, refused", async () => {
    assert.equal(sampleValue(samples, "partner_yield_events_total", { outcome: "accepted" }), 1);
    assert.equal(sampleValue(samples, "partner_yield_events_total", { outcome: "duplicate" }), 1);
    assert.equal(sampleValue(samples, "partner_yield_events_total", { outcome: "refused" }), 0);
  });

  withPostgres.test("store calls, store checks, the pool", async () => {
    assert.ok(
      sampleValue(samples, "partner_yield_store_call_duration_seconds_count", { store: "events" }) >= 2,
    );
    assert.ok(
      sampleValue(samples, "partner_yield_store_call_duration_seconds_count", { store: "keys" }) >= 1,
    );
    for (const store of ["events", "keys", "partners", "products", "positions", "prices", "rate_limits"])
      assert.equal(sampleValue(samples, "partner_yield_store_up", { store }), 1, store);
    const errors = samples.filter((s) => s.name === "partner_yield_store_errors_total");
    assert.deepEqual(errors, []);
    assert.equal(sampleValue(samples, "partner_yield_pg_pool_connections", { state: "max" }), 10);
    const inUse = sampleValue(samples, "partner_yield_pg_pool_connections", { state: "in_use" });
    const idle = sampleValue(samples, "partner_yield_pg_pool_connections", { state: "idle" });
    assert.ok(inUse >= 0 && idle >= 0 && inUse + idle <= 10);
    assert.equal(sampleValue(samples, "partner_yield_pg_pool_waiting"), 0);
  });

  withPostgres.test("the read cache: hits and misses, invalidations, its lag bound", async () => {
    // The key was looked up several times while the cache was trusted: the first read it through.
    assert.ok(
      sampleValue(samples, "partner_yield_read_cache_lookups_total", { table: "keys", result: "hit" }) >= 1,
    );
    assert.ok(
      sampleValue(samples, "partner_yield_read_cache_lookups_total", { table: "keys", result: "miss" }) >= 1,
    );
    assert.ok(sampleValue(samples, "partner_yield_read_cache_invalidations_total") >= 0);
    const lag = sampleValue(samples, "partner_yield_read_cache_invalidation_lag_seconds");
    assert.ok(lag >= 0 && lag < 60, `lag bound ${lag}`);
    assert.ok(sampleValue(samples, "partner_yield_read_cache_entries", { table: "keys" }) >= 1);
  });

  withPostgres.test("the age of each product's price; process metrics", async () => {
    const products = loadSandbox().productRecords;
    for (const product of products) {
      const age = sampleValue(samples, "partner_yield_price_age_seconds", {
        partner: product.partnerId,
        product: product.slug,
      });
      assert.ok(age >= 0 && age < 3600, `${product.slug}: ${age}`);
    }
    assert.ok(sampleValue(samples, "process_cpu_seconds_total") > 0);
    assert.ok(sampleValue(samples, "nodejs_eventloop_lag_p99_seconds") >= 0);
  });

  withPostgres.test(
    "the event consumers' lag and the events pruned; reset and prune are audited",
    async () => {
      const command = async (...argv: string[]) => {
        const out: string[] = [];
        const code = await runEventsCommand(
          [...argv, "--database-url", db!.url, "--actor", "metrics-test"],
          {},
          {
            stdout: (text) => void out.push(text),
            stderr: (text) => void out.push(text),
          },
        );
        assert.equal(code, 0, out.join(""));
        return out.join("");
      };
      // A consumer at the start of the log lags by every event stored (the one accepted above).
      await command("consumers", "reset", "metrics-lag", "--to", "0");
      const stored = Number(
        (await db!.pool.query<{ n: string }>("select count(*)::text as n from events")).rows[0]!.n,
      );
      assert.ok(stored >= 1);
      let scraped = parseExposition(await scrape());
      assert.equal(
        sampleValue(scraped, "partner_yield_event_consumer_lag_events", { consumer: "metrics-lag" }),
        stored,
      );
      assert.ok(
        sampleValue(scraped, "partner_yield_event_consumer_lag_seconds", { consumer: "metrics-lag" }) >= 0,
      );
      const prunedBefore = sampleValue(scraped, "partner_yield_events_pruned");

      // An event received 40 days ago, acknowledged by the consumer, is pruned.
      const old = await db!.pool.query<{ id: string }>(
        `insert into events (partner_id, environment, idempotency_key, fingerprint, event_type, occurred_at,
         data, raw_body, received_at)
       values ($1, 'sandbox', 'metrics-old-1', repeat('a', 64), 'partner.user.created', '2026-01-01T00:00:00Z',
         '{}', '{}', now() - interval '40 days')
       returning id::text as id`,
        [DEMO.partnerId],
      );
      const last = Number(
        (await db!.pool.query<{ id: string }>("select max(id)::text as id from events")).rows[0]!.id,
      );
      assert.ok(last >= Number(old.rows[0]!.id));
      await command("consumers", "reset", "metrics-lag", "--to", String(last));
      assert.match(await command("prune", "--older-than", "30"), /deleted 1 event\(s\)/);
      scraped = parseExposition(await scrape());
      assert.equal(
        sampleValue(scraped, "partner_yield_event_consumer_lag_events", { consumer: "metrics-lag" }),
        0,
      );
      assert.equal(sampleValue(scraped, "partner_yield_events_pruned"), prunedBefore + 1);

      const audit = await db!.pool.query<{ command: string; actor: string; after: unknown }>(
        "select command, actor, after from admin_audit where actor = 'metrics-test' order by id",
      );
      assert.deepEqual(
        audit.rows.map((row) => row.command),
        ["consumers reset", "consumers reset", "events prune"],
      );
      assert.deepEqual(audit.rows[2]!.after, { older_than_days: 30, deleted: 1, kept_unacknowledged: 0 });
    },
  );

  withPostgres.test("the dashboard and the alert rules use only series the server exports", async () => {
    // Every family, also one with no sample yet (store errors): its TYPE line.
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    const dashboard = readFileSync(DASHBOARD, "utf8");
    JSON.parse(dashboard);
    for (const [file, text] of [
      ["dashboard", dashboard],
      ["rules", readFileSync(RULES, "utf8")],
    ] as const) {
      const used = seriesNamesIn(text);
      assert.ok(used.size > 5, file);
      for (const name of used) assert.ok(exported.has(name), `${file} uses ${name}, which /metrics lacks`);
    }
  });

  withPostgres.test("/metrics is not on the partner port", async () => {
    const res = await fetch(`${server.url}/metrics`);
    await res.arrayBuffer();
    assert.equal(res.status, 404);
  });

  test("the scrape passes promtool check metrics", (t) => {
    if (!needPromtool(t)) return;
    const run = runPromtool(["check", "metrics"], text);
    // prom-client's default metrics name three gauges `nodejs_active_*_total`, which the linter
    // flags; those are kept as prom-client names them (dashboards know them so). Nothing else.
    const findings = run.output
      .split("\n")
      .filter((line) => line.trim() !== "")
      .filter((line) => !/^nodejs_active_(handles|requests|resources)_total non-counter metrics/.test(line));
    assert.deepEqual(findings, []);
    assert.ok(run.status === 0 || /nodejs_active_/.test(run.output), run.output);
  });
});

describe("--metrics-port and --metrics-host", () => {
  test("off by default; loopback by default; never the API's port", () => {
    const serve = (args: string[]) => {
      const command = parseCommandLine(["serve", ...args], {});
      assert.equal(command.command, "serve");
      return command.config;
    };
    assert.equal(serve([]).metrics, undefined);
    assert.deepEqual(serve(["--metrics-port", "9464"]).metrics, { host: "127.0.0.1", port: 9464 });
    assert.deepEqual(serve(["--metrics-port", "9464", "--metrics-host", "0.0.0.0"]).metrics, {
      host: "0.0.0.0",
      port: 9464,
    });
    assert.deepEqual(parseCommandLine(["serve"], { PARTNER_YIELD_METRICS_PORT: "9464" }), {
      command: "serve",
      config: { ...serve([]), metrics: { host: "127.0.0.1", port: 9464 } },
    });
    assert.throws(() => serve(["--metrics-host", "0.0.0.0"]), UsageError);
    assert.throws(
      () => serve(["--port", "9464", "--metrics-port", "9464"]),
      /never served on the API's port/,
    );
    assert.throws(() => serve(["--metrics-port", "70000"]), UsageError);
  });
});
