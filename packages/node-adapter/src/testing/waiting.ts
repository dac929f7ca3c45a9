/** Waiting in tests: a plain delay, and polling until a condition holds. */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `condition` every 10 ms until it holds, or fails after `timeoutMs`. */
export async function eventually(
  condition: () => boolean,
  timeoutMs = 3_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await sleep(10);
  }
}
