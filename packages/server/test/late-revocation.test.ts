/**
 * Two `partner-yield serve` processes on one PostgreSQL: an event's headers and all but the last
 * bytes of its body are sent to one instance, the secret (or the key) is revoked with the CLI or a
 * raw SQL `UPDATE`, then the body is finished: 401, and nothing stored (CONTRACT §4, §5). The same
 * event finished before the revocation is accepted, so the refusal is the revocation's.
 */
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { signBody } from "@partner-yield/core";
import {
  DEMO,
  eventBody,
  eventHeaders,
  gate,
  INBOUND,
  loadSandbox,
  RawConnection,
  requestHead,
} from "@partner-yield/node-adapter/testing";
import { dataSetOf, importData } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { runCli, type ServerProcess, startServerProcess } from "./server-process.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("laterevoke") : undefined;

/** Sends all of a signed event but its last 10 bytes; `finish()` sends them and reads the answer. */
async function slowEvent(server: ServerProcess, idempotencyKey: string, headers = {}) {
  const body = eventBody();
  const connection = await RawConnection.open(Number(new URL(server.url).port));
  connection.write(
    requestHead("POST", INBOUND, {
      ...eventHeaders(body, idempotencyKey),
      ...headers,
      "content-length": Buffer.byteLength(body),
    }),
  );
  connection.write(body.slice(0, -10));
  return {
    async finish() {
      connection.write(body.slice(-10));
      const answer = await connection.response(10_000);
      connection.socket.destroy();
      return { status: answer.status, code: (JSON.parse(answer.body) as { code?: string }).code };
    },
  };
}

async function stored(idempotencyKey: string): Promise<boolean> {
  const rows = await db!.pool.query("select 1 from events where idempotency_key = $1", [idempotencyKey]);
  return rows.rowCount === 1;
}

describe("a credential revoked while an event's body arrives, on two instances", () => {
  let servers: ServerProcess[] = [];
  const url = () => ["--database-url", db!.url];

  before(async () => {
    if (db === undefined) return;
    await importData(db.pool, dataSetOf(loadSandbox()));
    servers = await Promise.all([
      startServerProcess([...url(), "--rate-limit-quota", "100000"]),
      startServerProcess([...url(), "--rate-limit-quota", "100000"]),
    ]);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop("SIGTERM")));
  });

  test("the rotated secret revoked with the CLI: its late body is 401 invalid_signature", async () => {
    const { rotatedSigningSecret } = DEMO;
    // Signed with the rotated secret: the one the CLI revokes.
    const body = eventBody();
    const rotatedHeaders = (key: string) => ({
      ...eventHeaders(body, key),
      "x-partner-signature": signBody(rotatedSigningSecret, new TextEncoder().encode(body)),
    });
    const connectionOf = async (key: string) => {
      const connection = await RawConnection.open(Number(new URL(servers[0]!.url).port));
      connection.write(
        requestHead("POST", INBOUND, { ...rotatedHeaders(key), "content-length": Buffer.byteLength(body) }),
      );
      connection.write(body.slice(0, -10));
      return connection;
    };
    const finish = async (connection: RawConnection) => {
      connection.write(body.slice(-10));
      const answer = await connection.response(10_000);
      connection.socket.destroy();
      return { status: answer.status, code: (JSON.parse(answer.body) as { code?: string }).code };
    };
    // Before any revocation the same slow event is accepted: what follows is the revocation's doing.
    const control = await connectionOf("late-secret-control");
    assert.deepEqual((await finish(control)).status, 200);

    const late = await connectionOf("late-secret");
    const secrets = JSON.parse(
      (await runCli(["secrets", "list", "--partner", DEMO.partnerId, "--json", ...url()])).stdout,
    ) as { secrets: { id: string; last_four: string }[] };
    const id = secrets.secrets.find((s) => s.last_four === rotatedSigningSecret.slice(-4))!.id;
    const revoked = await runCli(["secrets", "revoke", id, "--partner", DEMO.partnerId, ...url()]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(await finish(late), { status: 401, code: "invalid_signature" });
    assert.equal(await stored("late-secret"), false);
    // The other active secret still signs, on the other instance too.
    const other = await slowEvent(servers[1]!, "late-secret-other");
    assert.equal((await other.finish()).status, 200);
  });

  test("the key revoked by a raw SQL UPDATE: its late body is 401 invalid_api_key", async () => {
    const late = await slowEvent(servers[1]!, "late-key");
    await db!.pool.query(
      "update api_keys set status = 'revoked', revoked_at = now() where key_hash = encode(sha256($1::bytea), 'hex')",
      [DEMO.sandboxApiKey],
    );
    assert.deepEqual(await late.finish(), { status: 401, code: "invalid_api_key" });
    assert.equal(await stored("late-key"), false);
  });
});
