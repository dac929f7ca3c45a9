import assert from "node:assert/strict";
import { test } from "node:test";
import { isRfc3339DateTime } from "../../src/http/date-time.js";

test("RFC 3339 date-times with an offset", () => {
  for (const t of [
    "2026-11-20T10:15:00Z",
    "2026-11-20t10:15:00z",
    "2024-02-29T00:00:00+00:00",
    "2016-12-31T23:59:60Z",
    "2026-11-20T10:15:00.5-08:00",
    "2000-02-29T23:59:59.999999999+14:00",
  ]) {
    assert.equal(isRfc3339DateTime(t), true, t);
  }
  for (const t of [
    "2026-11-20T10:15:00",
    "2026-11-20",
    "2026-02-29T00:00:00Z",
    "1900-02-29T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-11-20T24:00:00Z",
    "2026-11-20T10:60:00Z",
    "2026-11-20T10:15:60Z",
    "2026-11-20T10:15:00+0100",
    "2026-11-20 10:15:00Z",
    "2026-11-20T10:15:00.Z",
    "２026-11-20T10:15:00Z",
    `2026-11-20T10:15:00.${"1".repeat(60)}Z`,
  ]) {
    assert.equal(isRfc3339DateTime(t), false, t);
  }
});
