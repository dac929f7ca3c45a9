/**
 * An `Io` for `main()` that records what the CLI writes, with the environment it should see.
 */
import type { Io } from "../../src/main.js";

export interface Captured {
  readonly out: { stdout: string; stderr: string };
  readonly io: Io;
}

export function captureIo(env: Record<string, string> = {}): Captured {
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
    },
  };
}
