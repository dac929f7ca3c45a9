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

/** A request node has parsed to its end: the body sits in the stream's buffer, nothing flows. */
function completeRequest(headers: Record<string, string>, chunks: string[]): IncomingMessage {
  const req = new Readable({ read() {} }) as unknown as IncomingMessage;
  for (const chunk of chunks) (req as unknown as Readable).push(Buffer.from(chunk));
  (req as unknown as Readable).push(null);
  Object.assign(req, { headers, complete: true });
  return req;
}

test("a body already parsed to its end is taken from the buffer in one read, without streaming it", async () => {
  const req = completeRequest({ "content-length": "9" }, ["abc", "def", "ghi"]);
  const state = newBodyState();
  const body = await createBodyReader(req, state)(1024);
  assert.equal(Buffer.from(body).toString(), "abcdefghi");
  // No `data` listener switched the stream to flowing mode: it was read, not streamed.
  assert.notEqual(req.readableFlowing, true);
  assert.equal(req.listenerCount("data"), 0);
  assert.equal(state.abandoned, false);
  // The stream still ends as node expects after a read.
  await once(req, "end");
});

test("a complete body over the limit is BodyTooLargeError, with nothing left unread; one short of Content-Length is InvalidBodyError", async () => {
  const over = newBodyState();
  await assert.rejects(
    createBodyReader(completeRequest({ "transfer-encoding": "chunked" }, ["ab", "cde"]), over)(4),
    BodyTooLargeError,
  );
  assert.equal(over.abandoned, false, "the whole body was read: the connection can be reused");
  await assert.rejects(
    createBodyReader(completeRequest({ "content-length": "10" }, ["hello"]), newBodyState())(1024),
    (error: unknown) => {
      assert.ok(error instanceof InvalidBodyError, String(error));
      assert.match(error.message, /after 5 bytes; Content-Length declared 10/);
      return true;
    },
  );
  const empty = await createBodyReader(
    completeRequest({ "transfer-encoding": "chunked" }, []),
    newBodyState(),
  )(4);
  assert.equal(empty.length, 0);
});
