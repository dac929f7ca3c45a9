/** Waiting for a promise at most so long (shutdown's store close, `/readyz`'s store checks). */

/**
 * True when `promise` resolves within `ms`, false after that; its rejection is rethrown.
 * @example if (!(await settlesWithin(pool.end(), 1000))) console.error("the pool did not close");
 */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
