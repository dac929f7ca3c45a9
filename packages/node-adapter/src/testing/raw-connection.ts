/**
 * One TCP connection speaking HTTP/1.1 by hand, for what a well-behaved client cannot do (a
 * half-sent body, a pipelined request, a connection the server must close), and the assertion on
 * the problem answers such requests get.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";

/** The head of a raw HTTP/1.1 request. */
export function requestHead(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

export interface RawResponse {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** One TCP connection speaking HTTP/1.1 by hand: for what a well-behaved client cannot do. */
export class RawConnection {
  readonly socket: Socket;
  #buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  #closed: Promise<void>;
  isClosed = false;
  error: Error | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    socket.on("error", (error) => {
      this.error = error;
    });
    this.#closed = new Promise((resolve) =>
      socket.once("close", () => {
        this.isClosed = true;
        this.#wake();
        resolve();
      }),
    );
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  write(data: string | Buffer): boolean {
    return this.socket.write(data);
  }

  /** Resolves when the server has closed the connection. */
  closed(): Promise<void> {
    return this.#closed;
  }

  /** The next response (a `100 Continue` counts as one), or rejects after `timeoutMs`. */
  async response(timeoutMs = 5_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.#take();
      if (parsed !== undefined) return parsed;
      if (this.isClosed)
        throw new Error(`connection closed; unparsed: ${JSON.stringify(this.#buffer.toString("latin1"))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no response in time");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  #take(): RawResponse | undefined {
    const end = this.#buffer.indexOf("\r\n\r\n");
    if (end === -1) return undefined;
    const [statusLine, ...lines] = this.#buffer.subarray(0, end).toString("latin1").split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine!.split(" ")[1]);
    const length = Number(headers["content-length"] ?? "0");
    if (this.#buffer.length < end + 4 + length) return undefined;
    const body = this.#buffer.subarray(end + 4, end + 4 + length).toString("utf8");
    this.#buffer = this.#buffer.subarray(end + 4 + length);
    return { status, headers, body };
  }
}

const REQUEST_ID = /^req_[0-9a-f]{12}[0-9a-z]{6,}$/;

/** A complete problem answer (CONTRACT §6, §9) with this status and code, closing the connection. */
export function assertProblem(res: RawResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(res.status, status, res.body);
  assert.equal(res.headers["content-type"], "application/problem+json; charset=utf-8");
  assert.equal(res.headers["cache-control"], "no-store");
  assert.equal(res.headers["x-content-type-options"], "nosniff");
  assert.equal(res.headers["connection"], "close");
  assert.match(res.headers["x-request-id"] ?? "", REQUEST_ID);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.deepEqual(
    { ...body, detail: typeof body["detail"] },
    {
      success: false,
      type: `https://partner-yield.dev/errors/${code}`,
      title: body["title"],
      status,
      code,
      detail: "string",
      request_id: res.headers["x-request-id"],
    },
  );
  assert.equal(typeof body["title"], "string");
  return body;
}
