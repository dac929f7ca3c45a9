/**
 * The count of requests in flight, and a wait for it to reach zero (graceful shutdown).
 * @module
 */
export class InFlight {
  #count = 0;
  #waiters: (() => void)[] = [];

  get count(): number {
    return this.#count;
  }

  started(): void {
    this.#count++;
  }

  ended(): void {
    this.#count--;
    if (this.#count === 0 && this.#waiters.length > 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /** Resolves true once nothing is in flight, or false after `timeoutMs`. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      if (this.#count === 0) {
        resolve(true);
        return;
      }
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== wake);
        resolve(false);
      }, timeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#waiters.push(wake);
    });
  }
}
