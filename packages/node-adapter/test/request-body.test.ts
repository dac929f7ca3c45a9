/** createBodyReader in isolation: what node's parser normally prevents must still be refused. */
import assert from "node:assert/strict";
import { once } from "node:events";
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { test } from "node:test";
import { BodyTooLargeError, InvalidBodyError } from "@partner-yield/core";
import { createBodyReader, newBodyState } from "../src/index.js";

function fakeRequest(headers: Record<string, string>, chunks: string[]): IncomingMessage {
  const req = Readable.from(
    chunks.map((c) => Buffer.from(c)),
    { objectMode: false },
  ) as unknown as IncomingMessage;
  Object.assign(req, { headers, complete: false });
  return req;
}

test("a body that ends short of Content-Length is refused with InvalidBodyError, not handed to the core", async () => {
  const req = fakeRequest({ "content-length": "10" }, ["hello"]);
  await assert.rejects(createBodyReader(req, newBodyState())(1024), (error: unknown) => {
    assert.ok(error instanceof InvalidBodyError, String(error));
    assert.match(error.message, /after 5 bytes; Content-Length declared 10/);
    return true;
  });
});

test("a body of exactly the limit is read; one byte more is BodyTooLargeError", async () => {
  const ok = await createBodyReader(fakeRequest({ "content-length": "4" }, ["ab", "cd"]), newBodyState())(4);
  assert.equal(Buffer.from(ok).toString(), "abcd");
  await assert.rejects(
    createBodyReader(fakeRequest({ "transfer-encoding": "chunked" }, ["ab", "cde"]), newBodyState())(4),
    BodyTooLargeError,
  );
});

test("a request already destroyed (the client went away before the core asked for the body) is refused at once", async () => {
  const req = fakeRequest({ "content-length": "10" }, ["hel"]);
  req.destroy();
  await once(req, "close");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the reader still waits for a request that is gone")), 1_000);
  });
  try {
    await assert.rejects(
      Promise.race([createBodyReader(req, newBodyState())(1024), waited]),
      (error: unknown) => {
        assert.ok(error instanceof InvalidBodyError, String(error));
        assert.match(error.message, /closed the connection before the body was complete/);
        return true;
      },
    );
  } finally {
    clearTimeout(timer);
  }
});
