/** `StoreUnavailableError`: what a store throws when its backend is down (→ 503, CONTRACT §6). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ERRORS } from "../../src/http/errors.js";
import { StoreUnavailableError } from "../../src/stores/store-unavailable-error.js";

test("its code is the error table's service_unavailable (503)", () => {
  const error = new StoreUnavailableError("postgres: connection refused");
  assert.equal(error.code, "service_unavailable");
  assert.equal(ERRORS[error.code].status, 503);
});

test("it keeps its name, message, Retry-After seconds (default 1) and cause", () => {
  const cause = new Error("ECONNREFUSED");
  const error = new StoreUnavailableError("redis: down", 5, { cause });
  assert.ok(error instanceof Error);
  assert.equal(error.name, "StoreUnavailableError");
  assert.equal(error.message, "redis: down");
  assert.equal(error.retryAfterSeconds, 5);
  assert.equal(error.cause, cause);
  assert.equal(new StoreUnavailableError("x").retryAfterSeconds, 1);
});
