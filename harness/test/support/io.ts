/**
 * An `Io` for `main()` that records what the CLI writes, with the environment it should see.
 */
import type { Invocation } from "../../src/invocation.js";
import type { Io } from "../../src/main.js";

export interface Captured {
  readonly out: { stdout: string; stderr: string };
  readonly io: Io;
}

/** How the tests pretend the CLI was started: from a checkout, with pnpm. */
export const CHECKOUT: Invocation = { conformance: "pnpm conformance", properties: "pnpm properties" };

export function captureIo(env: Record<string, string> = {}, invocation: Invocation = CHECKOUT): Captured {
  const out = { stdout: "", stderr: "" };
  return {
    out,
    io: {
      stdout: {
        write(text: string) {
          out.stdout += text;
        },
        isTTY: false,
      },
      stderr: {
        write(text: string) {
          out.stderr += text;
        },
        isTTY: false,
      },
      env,
      invocation,
    },
  };
}
