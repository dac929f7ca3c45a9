/**
 * Secrets never reach a report: every string a reporter writes goes through a `Redactor` that
 * knows the run's API keys and signing secret and replaces them with the environment variable
 * that holds them, so a printed curl command still works when pasted into a shell that has them.
 * @module
 */

/** One secret and the shell expression that stands for it in reports. */
export interface Secret {
  readonly value: string;
  /** e.g. `$PARTNER_API_KEY` */
  readonly placeholder: string;
}

/**
 * Replaces every occurrence of known secrets. Secrets shorter than 8 characters are still
 * replaced: a short secret is a bad secret, but it is still a secret.
 * @example new Redactor([{ value: "ypk_test_abc…", placeholder: "$PARTNER_API_KEY" }]).redact("X-Api-Key: ypk_test_abc…");
 */
export class Redactor {
  readonly #secrets: readonly Secret[];

  constructor(secrets: readonly Secret[]) {
    // Longest first, so a secret that contains another is replaced whole.
    this.#secrets = secrets.filter((s) => s.value.length > 0).sort((a, b) => b.value.length - a.value.length);
  }

  /** True when `text` contains any secret. */
  leaks(text: string): boolean {
    return this.#secrets.some((s) => text.includes(s.value));
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) out = out.split(secret.value).join(secret.placeholder);
    return out;
  }

  /** Redacts every string inside a JSON-like value (for the JSON report). */
  redactDeep<T>(value: T): T {
    if (typeof value === "string") return this.redact(value) as T;
    if (Array.isArray(value)) return value.map((item) => this.redactDeep(item)) as T;
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[key] = this.redactDeep(item);
      return out as T;
    }
    return value;
  }
}
