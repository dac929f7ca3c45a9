/**
 * The `RateLimiter` contract (CONTRACT §7, and the failed-authentication limit of §4) as a suite:
 * an exact rolling window with the same decisions, remaining counts and reset times as the
 * in-memory limiter — checked hit by hit against `MemoryRateLimiter` on a seeded random sequence —
 * and a window that holds under concurrent load.
 *
 * @example
 * import { describe, test } from "vitest"; // or node:test, or bun:test
 * runRateLimiterSuite({ name: "memory", makeLimiter: async (now) => new MemoryRateLimiter({ now }), describe, test });
 */
import { MemoryRateLimiter, type RateDecision, type RateLimiter } from "../stores/rate-limiter.js";
import { assertDeepEqual, assertEqual, assertTrue } from "./assertions.js";
import { type SuiteOptions, seededRandom, uniqueTag, using } from "./suite.js";

export interface RateLimiterSuiteOptions extends SuiteOptions {
  /**
   * A limiter to test. With `now`, it must take the time from it (milliseconds since the epoch);
   * without, from its own clock. It may share its backend with other tests (keys are unique).
   */
  readonly makeLimiter: (now?: () => number) => Promise<RateLimiter>;
  /** Seed of the random sequences (default fixed); printed with a failure to replay it. */
  readonly seed?: number | undefined;
}

const WINDOW = 60_000;

export function runRateLimiterSuite(options: RateLimiterSuiteOptions): void {
  const { describe, test, makeLimiter } = options;
  const seed = options.seed ?? 20261123;
  const key = (name: string) => `suite:${uniqueTag()}:${name}`;
  /** A limiter on a clock the test moves. */
  const onClock = async (start = 1_763_000_000_000) => {
    const clock = { now: start };
    return { clock, limiter: await makeLimiter(() => clock.now) };
  };

  describe(`RateLimiter conformance: ${options.name}`, () => {
    test("allows exactly the quota, then refuses until the oldest hit leaves the window", async () => {
      const { clock, limiter } = await onClock();
      await using(limiter, async () => {
        const k = key("quota");
        for (let i = 0; i < 5; i++) {
          const d = await limiter.hit(k, 5, WINDOW);
          // The oldest hit, at the start, leaves 60 s after it: `i` seconds ago.
          assertDeepEqual(d, {
            allowed: true,
            limit: 5,
            remaining: 4 - i,
            resetSeconds: 60 - i,
            retryAfterSeconds: 0,
          });
          clock.now += 1000;
        }
        const refused = await limiter.hit(k, 5, WINDOW);
        // The oldest hit leaves at start + 60 s; now is start + 5 s.
        assertDeepEqual(refused, {
          allowed: false,
          limit: 5,
          remaining: 0,
          resetSeconds: 55,
          retryAfterSeconds: 55,
        });
        clock.now += 54_999;
        assertEqual((await limiter.hit(k, 5, WINDOW)).allowed, false, "1 ms before the oldest hit leaves");
        clock.now += 1;
        assertEqual((await limiter.hit(k, 5, WINDOW)).allowed, true, "when the oldest hit leaves");
      });
    });

    test("no fixed-window edge: a burst at the end of one minute blocks the start of the next", async () => {
      const { clock, limiter } = await onClock(1_763_000_059_000);
      await using(limiter, async () => {
        const k = key("edge");
        for (let i = 0; i < 10; i++) assertEqual((await limiter.hit(k, 10, WINDOW)).allowed, true);
        clock.now += 2000;
        assertEqual((await limiter.hit(k, 10, WINDOW)).allowed, false);
      });
    });

    test("refused hits are not counted; peek counts nothing", async () => {
      const { clock, limiter } = await onClock();
      await using(limiter, async () => {
        const k = key("refused");
        for (let i = 0; i < 3; i++) await limiter.hit(k, 3, WINDOW);
        for (let i = 0; i < 20; i++) assertEqual((await limiter.hit(k, 3, WINDOW)).allowed, false);
        clock.now += WINDOW;
        for (let i = 0; i < 3; i++) assertEqual((await limiter.hit(k, 3, WINDOW)).allowed, true);
        const p = key("peek");
        for (let i = 0; i < 5; i++)
          assertDeepEqual(await limiter.peek(p, 1, WINDOW), {
            allowed: true,
            limit: 1,
            remaining: 1,
            resetSeconds: 0,
            retryAfterSeconds: 0,
          });
        assertEqual((await limiter.hit(p, 1, WINDOW)).allowed, true);
        assertEqual((await limiter.peek(p, 1, WINDOW)).allowed, false);
      });
    });

    test("reset and Retry-After round up to whole seconds; keys are independent", async () => {
      const { clock, limiter } = await onClock();
      await using(limiter, async () => {
        const k = key("round");
        await limiter.hit(k, 1, WINDOW);
        clock.now += 30_600;
        const refused = await limiter.hit(k, 1, WINDOW);
        assertEqual(refused.retryAfterSeconds, 30, "29.4 s is 30");
        assertEqual(refused.resetSeconds, 30);
        assertEqual((await limiter.hit(key("other"), 1, WINDOW)).allowed, true, "another key is unaffected");
      });
    });

    test(`the same decisions as the in-memory limiter, hit by hit (seed ${seed})`, async () => {
      const { clock, limiter } = await onClock();
      const reference = new MemoryRateLimiter({ now: () => clock.now });
      await using(limiter, async () => {
        const random = seededRandom(seed);
        const keys = [key("a"), key("b"), key("c")];
        const limits = [1, 3, 7];
        for (let step = 0; step < 600; step++) {
          // Mostly short gaps (bursts), sometimes long ones (the window slides past hits).
          const roll = random(100);
          clock.now += roll < 60 ? random(400) : roll < 95 ? random(15_000) : random(70_000);
          const i = random(keys.length);
          const peek = random(5) === 0;
          const args = [keys[i]!, limits[i]!, WINDOW] as const;
          const [got, want] = peek
            ? await Promise.all([limiter.peek(...args), reference.peek(...args)])
            : await Promise.all([limiter.hit(...args), reference.hit(...args)]);
          assertDeepEqual(got, want, `seed ${seed}, step ${step} (${peek ? "peek" : "hit"} ${args[1]}/min)`);
        }
      });
    });

    test(`hits of several keys made in the same turn: the same decisions as the in-memory limiter, key by key (seed ${seed})`, async () => {
      const { clock, limiter } = await onClock();
      const reference = new MemoryRateLimiter({ now: () => clock.now });
      await using(limiter, async () => {
        const random = seededRandom(seed + 2);
        const keys = Array.from({ length: 6 }, (_, i) => key(`turn-${i}`));
        const limits = [1, 2, 4, 8, 16, 32];
        for (let turn = 0; turn < 60; turn++) {
          clock.now += random(10) < 7 ? random(2000) : random(40_000);
          const made = Array.from({ length: 1 + random(20) }, () => random(keys.length));
          // Made in one turn, in this order; the reference decides them one after the other.
          const got = await Promise.all(made.map((i) => limiter.hit(keys[i]!, limits[i]!, WINDOW)));
          const want = [];
          for (const i of made) want.push(await reference.hit(keys[i]!, limits[i]!, WINDOW));
          assertDeepEqual(got, want, `seed ${seed}, turn ${turn} (keys ${made.join(",")})`);
        }
      });
    });

    test("200 concurrent hits on one key: exactly the quota is allowed, each with its own remaining count", async () => {
      const { limiter } = await onClock();
      await using(limiter, async () => {
        const k = key("burst");
        const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.hit(k, 50, WINDOW)));
        const allowed = decisions.filter((d) => d.allowed);
        assertEqual(allowed.length, 50, "allowed hits");
        assertDeepEqual(
          allowed.map((d) => d.remaining).sort((a, b) => a - b),
          Array.from({ length: 50 }, (_, i) => i),
          "remaining counts",
        );
        for (const d of decisions.filter((x) => !x.allowed)) assertEqual(d.retryAfterSeconds, 60);
      });
    });

    test(`the rolling window is never exceeded under concurrent load, and never stricter (seed ${seed})`, async () => {
      const { clock, limiter } = await onClock();
      await using(limiter, async () => {
        const random = seededRandom(seed + 1);
        const k = key("load");
        const quota = 40;
        const allowedAt: number[] = [];
        for (let batch = 0; batch < 40; batch++) {
          clock.now += random(10) < 7 ? random(3000) : random(40_000);
          const size = 1 + random(30);
          const decisions = await Promise.all(
            Array.from({ length: size }, () => limiter.hit(k, quota, WINDOW)),
          );
          const before = allowedAt.filter((t) => t > clock.now - WINDOW).length;
          const granted = decisions.filter((d) => d.allowed).length;
          assertEqual(
            granted,
            Math.min(size, quota - before),
            `seed ${seed}, batch ${batch}: allowed in the batch`,
          );
          for (let i = 0; i < granted; i++) allowedAt.push(clock.now);
        }
        for (let i = 0; i < allowedAt.length; i++) {
          let j = i;
          while (j < allowedAt.length && allowedAt[j]! - allowedAt[i]! < WINDOW) j++;
          assertTrue(j - i <= quota, `seed ${seed}: ${j - i} hits allowed within 60 s of ${allowedAt[i]}`);
        }
      });
    });

    test("on its own clock: the quota holds and Retry-After is within the window", async () => {
      const limiter = await makeLimiter();
      await using(limiter, async () => {
        const k = key("wall");
        const decisions: RateDecision[] = [];
        for (let i = 0; i < 4; i++) decisions.push(await limiter.hit(k, 3, WINDOW));
        assertDeepEqual(
          decisions.map((d) => d.allowed),
          [true, true, true, false],
        );
        const refused = decisions[3]!;
        assertTrue(
          refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60,
          `Retry-After ${refused.retryAfterSeconds}`,
        );
        assertTrue(refused.retryAfterSeconds >= refused.resetSeconds, "Retry-After ≥ reset");
      });
    });
  });
}
