/**
 * The event insert's plan (migrations 0008 and 0010): `partner_yield_append_events` runs its
 * statement with a generic plan, planned once per connection for any batch size, so that plan must stay cheap for
 * a lone event however large the tables grow: with 1,000 and then 100,000 API keys, and 2,000
 * signing secrets, it reads both by index, one probe per event, and never scans or hashes either
 * table (as EXISTS subqueries, the generic plan hashed the whole of a table of 1,000 keys or 2,000
 * secrets at each execution). The statement is taken from each version of the function (0008's,
 * eleven parameters, which releases of schema 8 and 9 call; 0010's, twelve) as the database holds
 * it and prepared with the function's setting.
 */
import assert from "node:assert/strict";
import { gate, loadSandbox } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { dataSetOf, importData } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("insert_plan") : undefined;

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Parent Relationship"?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, each with the node types above it. */
function nodesOf(
  node: PlanNode,
  above: readonly string[] = [],
): { node: PlanNode; above: readonly string[] }[] {
  const here = { node, above };
  const below = (node.Plans ?? []).flatMap((child) => nodesOf(child, [...above, node["Node Type"]]));
  return [here, ...below];
}

describe("the event insert's generic plan", () => {
  test("reads api_keys and signing_secrets by index, never a scan or a hash of either", async () => {
    await importData(db!.pool, dataSetOf(loadSandbox()));
    const { rows: partners } = await db!.pool.query<{ id: string }>(
      "select id from partners order by id limit 1",
    );
    const partner = partners[0]!.id;
    await db!.pool.query(
      `insert into signing_secrets (partner_id, secret)
       select $1, 'whsec_' || md5('plan-secret-' || i) from generate_series(1, 2000) as i`,
      [partner],
    );
    // 0008's function (eleven parameters), which releases of schema 8 and 9 call, and 0010's.
    const versions = [
      { name: "migration 0008's function", ...(await functionStatement(11)) },
      { name: "migration 0010's function", ...(await functionStatement(12)) },
    ];
    let keys = 0;
    for (const size of [1000, 100_000]) {
      await db!.pool.query(
        `insert into api_keys (partner_id, environment, key_hash, status)
         select $1, 'sandbox', encode(sha256(convert_to('plan-key-' || i, 'UTF8')), 'hex'), 'active'
         from generate_series($2::int, $3::int) as i`,
        [partner, keys + 1, size],
      );
      keys = size;
      await db!.pool.query("analyze api_keys; analyze signing_secrets; analyze events");
      for (const version of versions) {
        const nodes = await genericPlan(version, partner);
        for (const table of ["api_keys", "signing_secrets"]) {
          const reads = nodes.filter(({ node }) => node["Relation Name"] === table);
          const where = `${table}, ${size} keys, ${version.name}`;
          assert.equal(
            reads.length,
            1,
            `one read of ${where}: ${JSON.stringify(reads.map((r) => r.node["Node Type"]))}`,
          );
          const { node, above } = reads[0]!;
          assert.match(
            node["Node Type"],
            /^Index (Only )?Scan$/,
            `${where} read by index, not ${node["Node Type"]}`,
          );
          assert.ok(
            !above.some((step) => step === "Hash" || step.startsWith("hashed ")),
            `${where} not hashed: under ${above.join(" > ")}`,
          );
        }
      }
    }
  });
});

/**
 * The statement of the function of `parameters` parameters as the database holds it, its
 * parameters (read from the catalog too) replaced by `$1` … `$n` with their types; and their names.
 */
async function functionStatement(parameters: number): Promise<{ statement: string; names: string[] }> {
  const { rows } = await db!.pool.query<{
    source: string;
    config: string[] | null;
    names: string[];
    types: string[];
  }>(
    `select prosrc as source, proconfig as config, proargnames[1:pronargs] as names,
       array(select format_type(t, null) from unnest(proargtypes::oid[]) with ordinality as a(t, i)
         order by i) as types
     from pg_proc where proname = 'partner_yield_append_events' and pronargs = $1`,
    [parameters],
  );
  assert.equal(rows.length, 1, `the function of ${parameters} parameters is there`);
  const { source, config, names, types } = rows[0]!;
  assert.deepEqual(config, ["plan_cache_mode=force_generic_plan"]);
  const body = /return query\s+([\s\S]*?);\s*end;?\s*$/i.exec(source.trim());
  assert.ok(body, "the function returns one query");
  let statement = body[1]!;
  // Longest names first, so that no name is replaced inside a longer one.
  const byLength = names.map((name, i) => ({ name, i })).sort((a, b) => b.name.length - a.name.length);
  for (const { name, i } of byLength)
    statement = statement.replace(new RegExp(`\\b${name}\\b`, "g"), `$${i + 1}::${types[i]}`);
  assert.doesNotMatch(statement, /\bp_[a-z_]+\b/, "every parameter replaced");
  return { statement, names };
}

/** The nodes of the statement's generic plan for one event. */
async function genericPlan(
  { statement, names }: { statement: string; names: readonly string[] },
  partner: string,
): Promise<ReturnType<typeof nodesOf>> {
  const client = await db!.pool.connect();
  try {
    await client.query("set plan_cache_mode = force_generic_plan");
    // The parameters' types come from the casts written into the statement.
    await client.query(`prepare plan_check as ${statement}`);
    try {
      // EXPLAIN takes no parameters of its own: the values are written in, by parameter name.
      const hash = client.escapeLiteral("a".repeat(64));
      const values: Record<string, string> = {
        p_partner_id: client.escapeLiteral(partner),
        p_environment: "'sandbox'",
        p_idempotency_key: "'k'",
        p_fingerprint: hash,
        p_event_type: "'partner.user.created'",
        p_occurred_at: "'2026-11-20T10:15:00Z'",
        p_data: "'{}'",
        p_data_from_body: "true",
        p_raw_body: "'{}'",
        p_received_at: "now()",
        p_key_hash: hash,
        p_secret_sha256: hash,
      };
      const args = names.map((name) => {
        assert.ok(name in values, `a value for ${name}`);
        return `array[${values[name]}]`;
      });
      const explained = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        `explain (format json) execute plan_check (${args.join(", ")})`,
      );
      return nodesOf(explained.rows[0]!["QUERY PLAN"][0].Plan);
    } finally {
      await client.query("deallocate plan_check");
    }
  } finally {
    client.release();
  }
}
