/**
 * The partner manager's commands — `partners add|list|verify`, `keys create|list|revoke|promote`,
 * `secrets create|list|revoke` — in ONE table: each entry's usage, flags, help and exit statuses
 * drive both parsing and `--help`, and its `run` turns the core's `PartnerAdmin` answer into
 * what is printed (text, or JSON with `--json`). The runner is `admin-cli.ts`.
 * @module
 */
import type {
  AdminRefusal,
  ApiKeySummary,
  Environment,
  PartnerAdmin,
  PartnerSummary,
  Refused,
  Result,
  SigningSecretSummary,
} from "@partner-yield/core";
import { escapeUnsafe } from "@partner-yield/core/adapters";

/** Exit statuses, the same for every command (each command's help lists those it can give). */
export const ADMIN_EXIT = {
  ok: 0,
  unavailable: 1,
  usage: 2,
  schema: 3,
  notFound: 4,
  refused: 5,
} as const;
export type AdminExit = (typeof ADMIN_EXIT)[keyof typeof ADMIN_EXIT];

/** What each exit status means, for `--help`. */
export const ADMIN_EXIT_MEANING: Readonly<Record<AdminExit, string>> = {
  0: "done",
  1: "the database cannot be reached, or a statement failed",
  2: "a bad command line or value (e.g. an unknown environment, a malformed partner id or name)",
  3: "the database schema is not current (run `partner-yield db migrate`), or is newer than this partner-yield",
  4: "unknown partner, API key or signing secret",
  5: "refused by a rule, and nothing was changed",
};

/** The exit status of each refusal of the core's `PartnerAdmin`. */
export const REFUSAL_EXIT: Readonly<Record<AdminRefusal, AdminExit>> = {
  invalid_partner_id: ADMIN_EXIT.usage,
  invalid_partner_name: ADMIN_EXIT.usage,
  invalid_environment: ADMIN_EXIT.usage,
  invalid_label: ADMIN_EXIT.usage,
  partner_not_found: ADMIN_EXIT.notFound,
  key_not_found: ADMIN_EXIT.notFound,
  secret_not_found: ADMIN_EXIT.notFound,
  partner_exists: ADMIN_EXIT.refused,
  partner_not_verified: ADMIN_EXIT.refused,
  already_in_production: ADMIN_EXIT.refused,
};

export type AdminGroup = "partners" | "keys" | "secrets";

export interface AdminFlag {
  readonly flag: string;
  /** The value's placeholder; absent for a switch. */
  readonly value?: string;
  readonly required?: boolean;
  readonly help: string;
}

/** The parsed command line of one command. */
export interface AdminInput {
  readonly args: readonly string[];
  readonly flags: Readonly<Record<string, string | boolean | undefined>>;
}

/** What a command printed: text for people, an object for `--json`, warnings for stderr. */
export type AdminOutcome =
  | {
      readonly ok: true;
      readonly text: string;
      readonly json: Record<string, unknown>;
      readonly warnings?: readonly string[];
    }
  | { readonly ok: false; readonly refusal: Refused<AdminRefusal>; readonly hint: string | undefined };

export interface AdminCommand {
  readonly group: AdminGroup;
  readonly name: string;
  /** The positional arguments, e.g. `["KEY_ID"]`. */
  readonly args: readonly string[];
  readonly flags: readonly AdminFlag[];
  readonly summary: string;
  /** Paragraphs of `--help` after the usage. */
  readonly details: readonly string[];
  /** The exit statuses it can give, besides 0, 1, 2 and 3 (which every command can). */
  readonly refusals: readonly AdminExit[];
  run(admin: PartnerAdmin, input: AdminInput): Promise<AdminOutcome>;
}

const SHOWN_ONCE_KEY =
  "This key is shown only this once: only its SHA-256 hash is stored, so it can never be shown again. " +
  "Give it to the partner now; if it is lost, revoke it and create another.";
const SHOWN_ONCE_SECRET =
  "This signing secret is shown only this once: partner-yield never prints it again. " +
  "Give it to the partner now; if it is lost, create another and revoke this one.";

const PARTNER_FLAG: AdminFlag = { flag: "partner", value: "ID", required: true, help: "the partner's id" };
const LABEL_FLAG: AdminFlag = {
  flag: "label",
  value: "TEXT",
  help: "a note for operators, e.g. where the key is deployed (at most 200 characters)",
};

/** The ten commands. */
export const ADMIN_COMMANDS: readonly AdminCommand[] = [
  {
    group: "partners",
    name: "add",
    args: ["ID"],
    flags: [
      { flag: "name", value: "NAME", required: true, help: "the name shown to the partner's users" },
      { flag: "verified", help: "mark it verified at once (it may then be promoted to production)" },
    ],
    summary: "add a partner",
    details: [
      'ID is 1 to 64 characters: lower-case letters, digits, "-" and "_". A new partner is not verified',
      "(unless --verified): it may hold sandbox keys; production keys once it is verified.",
    ],
    refusals: [ADMIN_EXIT.refused],
    async run(admin, { args, flags }) {
      const added = await admin.addPartner({
        id: args[0]!,
        name: String(flags["name"]),
        verified: flags["verified"] === true,
      });
      if (!added.ok) return refused(added, "`partner-yield partners list` shows the partners");
      const p = added.value;
      return done(
        wrapped(
          `Added partner "${p.id}" (${escapeUnsafe(p.name)}), ${p.verified ? "verified" : "not verified"}: it may hold sandbox keys` +
            (p.verified
              ? " and production keys."
              : `; production keys once verified (partner-yield partners verify ${p.id}).`),
        ),
        { partner: partnerJson(p) },
      );
    },
  },
  {
    group: "partners",
    name: "list",
    args: [],
    flags: [],
    summary: "list the partners, with whether each is verified and its active keys and secrets",
    details: [],
    refusals: [],
    async run(admin) {
      const partners = await admin.listPartners();
      const rows = partners.map((p) => [
        p.id,
        p.verified ? "yes" : "no",
        String(p.activeKeys.sandbox),
        String(p.activeKeys.production),
        String(p.activeSigningSecrets),
        shortTime(p.createdAt),
        p.name,
      ]);
      return done(
        partners.length === 0
          ? "No partners yet: `partner-yield partners add ID --name NAME` adds one."
          : table(["ID", "VERIFIED", "SANDBOX KEYS", "PRODUCTION KEYS", "SECRETS", "CREATED", "NAME"], rows),
        { partners: partners.map(partnerJson) },
      );
    },
  },
  {
    group: "partners",
    name: "verify",
    args: ["ID"],
    flags: [],
    summary: "mark a partner verified (once its checks are done), so it may be promoted to production",
    details: ["Verifying twice changes nothing. There is no command to take verification back."],
    refusals: [ADMIN_EXIT.notFound],
    async run(admin, { args }) {
      const before = await admin.getPartner(args[0]!);
      if (!before.ok) return refused(before, "`partner-yield partners list` shows the partners");
      const verified = await admin.markPartnerVerified(args[0]!);
      if (!verified.ok) return refused(verified, undefined);
      const p = verified.value;
      return done(
        before.value.verified
          ? `Partner "${p.id}" was already verified; nothing changed.`
          : `Partner "${p.id}" is verified: promote it with \`partner-yield keys promote --partner ${p.id}\`.`,
        { partner: partnerJson(p), changed: !before.value.verified },
      );
    },
  },
  {
    group: "keys",
    name: "create",
    args: [],
    flags: [
      PARTNER_FLAG,
      { flag: "env", value: "ENV", required: true, help: "sandbox or production" },
      LABEL_FLAG,
    ],
    summary: "create an API key; it is printed once, only its hash is stored",
    details: [
      "A production key only for a verified partner. The key is printed once, on stdout; it authenticates",
      "on every instance from the next request. A partner may hold several active keys (rotation).",
    ],
    refusals: [ADMIN_EXIT.notFound, ADMIN_EXIT.refused],
    async run(admin, { flags }) {
      const partnerId = String(flags["partner"]);
      const issued = await admin.createKey({
        partnerId,
        environment: String(flags["env"]),
        label: flags["label"] as string | undefined,
      });
      if (!issued.ok) return refused(issued, keyRefusalHint(issued.code, partnerId));
      const { apiKey, summary } = issued.value;
      return done(
        `Created ${summary.environment} API key ${summary.id} for partner "${partnerId}" (${keyShown(summary)}).\n\n` +
          `    ${apiKey}\n\n${wrapped(SHOWN_ONCE_KEY)}`,
        createdJson("api_key", apiKey, { key: keyJson(summary) }, SHOWN_ONCE_KEY),
      );
    },
  },
  {
    group: "keys",
    name: "list",
    args: [],
    flags: [
      PARTNER_FLAG,
      { flag: "env", value: "ENV", help: "only keys of this environment: sandbox or production" },
    ],
    summary: "list a partner's keys: id, environment, prefix and last four characters, times, status",
    details: [
      "Never the key: only its prefix and last four characters (unknown for a key imported as a bare hash).",
      "LAST USED is a use at most a minute before the latest one (it is recorded once a minute per key).",
    ],
    refusals: [ADMIN_EXIT.notFound],
    async run(admin, { flags }) {
      const partnerId = String(flags["partner"]);
      const keys = await admin.listKeys(partnerId, { environment: flags["env"] as string | undefined });
      if (!keys.ok) return refused(keys, keyRefusalHint(keys.code, partnerId));
      const rows = keys.value.map((k) => [
        k.id,
        k.environment,
        keyShown(k),
        k.status,
        shortTime(k.createdAt),
        k.lastUsedAt === null ? "never" : shortTime(k.lastUsedAt),
        k.revokedAt === null ? "-" : shortTime(k.revokedAt),
        k.label ?? "",
      ]);
      return done(
        rows.length === 0
          ? `Partner "${partnerId}" has no ${flags["env"] === undefined ? "" : `${String(flags["env"])} `}keys.`
          : table(["ID", "ENV", "KEY", "STATUS", "CREATED", "LAST USED", "REVOKED", "LABEL"], rows),
        { keys: keys.value.map(keyJson) },
      );
    },
  },
  {
    group: "keys",
    name: "revoke",
    args: ["KEY_ID"],
    flags: [],
    summary: "revoke a key for good: the next request with it is 401 invalid_api_key, on every instance",
    details: [
      "KEY_ID is the id `keys list` shows, never the key. Revoking is final (a new key is the way back)",
      "and revoking twice changes nothing (exit 0). The last active key of a partner may be revoked — a",
      "leaked key cannot wait — and a warning on stderr says that partner can no longer authenticate.",
    ],
    refusals: [ADMIN_EXIT.notFound],
    async run(admin, { args }) {
      const revoked = await admin.revokeKey(args[0]!);
      if (!revoked.ok) {
        const pasted = /^ypk_|^whsec_/.test(args[0]!);
        return refused(
          revoked,
          pasted
            ? "give the key's id from `partner-yield keys list --partner ID`, never the key itself"
            : "`partner-yield keys list --partner ID` shows the ids of a partner's keys",
        );
      }
      const { summary: k, changed, activeLeft } = revoked.value;
      const text = changed
        ? `Revoked ${k.environment} API key ${k.id} of partner "${k.partnerId}" (${keyShown(k)}): requests with it ` +
          `are refused (401 invalid_api_key) from the next one, on every instance. ` +
          `${activeLeft} active ${k.environment} key${activeLeft === 1 ? "" : "s"} left.`
        : `API key ${k.id} of partner "${k.partnerId}" was already revoked at ${shortTime(k.revokedAt!)}; nothing changed.`;
      const warnings =
        changed && activeLeft === 0
          ? [
              `partner "${k.partnerId}" has no active ${k.environment} key left: its ${k.environment} requests are ` +
                `refused until a new key is created (partner-yield keys create --partner ${k.partnerId} --env ${k.environment})`,
            ]
          : [];
      return done(wrapped(text), { key: keyJson(k), changed, active_left: activeLeft }, warnings);
    },
  },
  {
    group: "keys",
    name: "promote",
    args: [],
    flags: [PARTNER_FLAG, LABEL_FLAG],
    summary: "move a verified partner to production: its first production key, printed once",
    details: [
      "Refused, changing nothing (exit 5), when the partner is not verified (`partners verify` first) or",
      "already holds an active production key (`keys create --env production` adds another).",
    ],
    refusals: [ADMIN_EXIT.notFound, ADMIN_EXIT.refused],
    async run(admin, { flags }) {
      const partnerId = String(flags["partner"]);
      const issued = await admin.promote(partnerId, { label: flags["label"] as string | undefined });
      if (!issued.ok) return refused(issued, keyRefusalHint(issued.code, partnerId));
      const { apiKey, summary } = issued.value;
      return done(
        `Promoted partner "${partnerId}" to production: created production API key ${summary.id} (${keyShown(summary)}).\n\n` +
          `    ${apiKey}\n\n${wrapped(SHOWN_ONCE_KEY)}`,
        createdJson("api_key", apiKey, { key: keyJson(summary) }, SHOWN_ONCE_KEY),
      );
    },
  },
  {
    group: "secrets",
    name: "create",
    args: [],
    flags: [PARTNER_FLAG],
    summary: "create a signing secret (whsec_…), printed once; the partner's other secrets keep verifying",
    details: [
      "Rotation: create a new secret, let the partner sign with it, then revoke the old one. Events signed",
      "with any active secret verify, on every instance from the next request.",
    ],
    refusals: [ADMIN_EXIT.notFound],
    async run(admin, { flags }) {
      const partnerId = String(flags["partner"]);
      const issued = await admin.createSigningSecret(partnerId);
      if (!issued.ok) return refused(issued, "`partner-yield partners list` shows the partners");
      const { signingSecret, summary } = issued.value;
      return done(
        wrapped(
          `Created signing secret ${summary.id} for partner "${partnerId}" (${secretShown(summary)}). Events signed ` +
            "with it verify from the next request; the partner's other active secrets keep verifying until revoked.",
        ) + `\n\n    ${signingSecret}\n\n${wrapped(SHOWN_ONCE_SECRET)}`,
        createdJson("signing_secret", signingSecret, { secret: secretJson(summary) }, SHOWN_ONCE_SECRET),
      );
    },
  },
  {
    group: "secrets",
    name: "list",
    args: [],
    flags: [PARTNER_FLAG],
    summary: "list a partner's signing secrets: id, last four characters, status, times — never the secret",
    details: [],
    refusals: [ADMIN_EXIT.notFound],
    async run(admin, { flags }) {
      const partnerId = String(flags["partner"]);
      const secrets = await admin.listSigningSecrets(partnerId);
      if (!secrets.ok) return refused(secrets, "`partner-yield partners list` shows the partners");
      const rows = secrets.value.map((s) => [
        s.id,
        secretShown(s),
        s.status,
        shortTime(s.createdAt),
        s.revokedAt === null ? "-" : shortTime(s.revokedAt),
      ]);
      return done(
        rows.length === 0
          ? `Partner "${partnerId}" has no signing secrets: its events cannot verify until one is created.`
          : table(["ID", "SECRET", "STATUS", "CREATED", "REVOKED"], rows),
        { secrets: secrets.value.map(secretJson) },
      );
    },
  },
  {
    group: "secrets",
    name: "revoke",
    args: ["SECRET_ID"],
    flags: [PARTNER_FLAG],
    summary:
      "revoke a signing secret for good: its signatures are 401 invalid_signature from the next request",
    details: [
      "SECRET_ID is the id `secrets list` shows. Revoking is final and revoking twice changes nothing",
      "(exit 0). The last active secret may be revoked; a warning on stderr says no event can verify then.",
    ],
    refusals: [ADMIN_EXIT.notFound],
    async run(admin, { args, flags }) {
      const partnerId = String(flags["partner"]);
      const revoked = await admin.revokeSigningSecret(partnerId, args[0]!);
      if (!revoked.ok)
        return refused(
          revoked,
          revoked.code === "partner_not_found"
            ? "`partner-yield partners list` shows the partners"
            : `\`partner-yield secrets list --partner ${partnerId}\` shows the ids of its secrets`,
        );
      const { summary: s, changed, activeLeft } = revoked.value;
      const text = changed
        ? `Revoked signing secret ${s.id} of partner "${partnerId}" (${secretShown(s)}): events signed with it are ` +
          "refused (401 invalid_signature) from the next request, on every instance. " +
          `${activeLeft} active signing secret${activeLeft === 1 ? "" : "s"} left.`
        : `Signing secret ${s.id} of partner "${partnerId}" was already revoked at ${shortTime(s.revokedAt!)}; nothing changed.`;
      const warnings =
        changed && activeLeft === 0
          ? [
              `partner "${partnerId}" has no active signing secret left: every event it sends is refused ` +
                `(401 invalid_signature) until a new one is created (partner-yield secrets create --partner ${partnerId})`,
            ]
          : [];
      return done(wrapped(text), { secret: secretJson(s), changed, active_left: activeLeft }, warnings);
    },
  },
];

/**
 * The `--json` of every command that creates a credential, one scheme for keys and secrets: `kind`
 * (`api_key` or `signing_secret`), `credential` (the key or secret itself, printed this once), its
 * summary under the name the list commands use (`key` or `secret`), and the notice.
 */
function createdJson(
  kind: "api_key" | "signing_secret",
  credential: string,
  summary: Record<string, unknown>,
  notice: string,
): Record<string, unknown> {
  return { kind, credential, ...summary, notice };
}

function done(text: string, json: Record<string, unknown>, warnings: readonly string[] = []): AdminOutcome {
  return { ok: true, text, json, warnings };
}

function refused(
  result: Result<unknown, AdminRefusal> & { ok: false },
  hint: string | undefined,
): AdminOutcome {
  return { ok: false, refusal: result, hint };
}

function keyRefusalHint(code: AdminRefusal, partnerId: string): string | undefined {
  switch (code) {
    case "partner_not_found":
      return "`partner-yield partners list` shows the partners";
    case "partner_not_verified":
      return `once its checks are done: \`partner-yield partners verify ${partnerId}\``;
    case "already_in_production":
      return `\`partner-yield keys create --partner ${partnerId} --env production\` adds another production key`;
    default:
      return undefined;
  }
}

/** `ypk_test_…Wx3Z`; `…????` for a key imported as a bare hash. */
function keyShown(k: ApiKeySummary): string {
  return `${k.prefix}…${k.lastFour ?? "????"}`;
}

function secretShown(s: SigningSecretSummary): string {
  return `whsec_…${s.lastFour}`;
}

/** A paragraph in lines of at most 100 characters. */
function wrapped(text: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > 100) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line].join("\n");
}

/** RFC 3339 to the second, for tables. */
function shortTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, "Z");
}

/** Cells are escaped (`escapeUnsafe`): a name or label stored before they were checked cannot reach the terminal raw. */
function table(header: readonly string[], unsafeRows: readonly (readonly string[])[]): string {
  const rows = unsafeRows.map((r) => r.map((cell) => escapeUnsafe(cell)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

function partnerJson(p: PartnerSummary): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    verified: p.verified,
    created_at: p.createdAt,
    active_keys: p.activeKeys,
    active_signing_secrets: p.activeSigningSecrets,
  };
}

function keyJson(k: ApiKeySummary): Record<string, unknown> {
  return {
    id: k.id,
    partner_id: k.partnerId,
    environment: k.environment satisfies Environment,
    status: k.status,
    prefix: k.prefix,
    last_four: k.lastFour,
    label: k.label,
    created_at: k.createdAt,
    last_used_at: k.lastUsedAt,
    revoked_at: k.revokedAt,
  };
}

function secretJson(s: SigningSecretSummary): Record<string, unknown> {
  return {
    id: s.id,
    partner_id: s.partnerId,
    status: s.status,
    last_four: s.lastFour,
    created_at: s.createdAt,
    revoked_at: s.revokedAt,
  };
}
