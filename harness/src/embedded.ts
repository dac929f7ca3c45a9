/**
 * The embedded target: the real node-adapter server on 127.0.0.1 and an ephemeral port, with the
 * sandbox fixtures and the demo credentials, so `run` without `--base-url` is a full demonstration.
 * The fault-injecting servers of the harness's own tests are the same thing with a `wrap`.
 * `@partner-yield/node-adapter` is an optional peer of the harness, loaded only here: a run
 * against `--base-url` needs nothing but the harness.
 * @module
 */
import type { PartnerApi, PartnerApiHandler, SandboxData } from "@partner-yield/core";
import { ConfigError, DEFAULTS, randomSeed } from "./config.js";
import { loadReferenceFixtures, type ReferenceFixtures } from "./oracle/fixtures.js";
import type { RunSettings } from "./runner.js";
import { defaultBurst } from "./throttle.js";

export interface EmbeddedOptions {
  /** Requests per rolling minute for every partner; default 1000 so a demo run never waits. */
  readonly quota?: number;
  /** Wraps the API's handler (fault injection); told the fixtures and credentials in use. */
  readonly wrap?: (api: PartnerApi, target: EmbeddedFixtures) => PartnerApiHandler;
  readonly fixturesDir?: string;
  /** The API's own base path (core's `basePath`); default `/api/partner`. */
  readonly basePath?: string;
  /** Credentials matching `fixturesDir`; default the adapter's DEMO_CREDENTIALS. */
  readonly credentials?: DemoCredentials;
}

/** The demo credentials' shape (node-adapter's DEMO_CREDENTIALS). */
export interface DemoCredentials {
  readonly partnerId: string;
  readonly sandboxApiKey: string;
  readonly productionApiKey: string;
  readonly signingSecret: string;
  readonly otherPartnerSandboxApiKey: string;
  readonly otherPartnerSigningSecret: string;
  readonly walletWithPositions: string;
  /** A revoked sandbox key of the same partner (AUTH-06). */
  readonly revokedSandboxApiKey?: string;
}

/** What the embedded server serves: its fixtures and the credentials that unlock them. */
export interface EmbeddedFixtures {
  readonly data: SandboxData;
  readonly credentials: DemoCredentials;
  readonly foreignSlug: string | undefined;
}

export interface EmbeddedTarget {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly signingSecret: string;
  /** The same partner's production key: refused by this sandbox server. */
  readonly otherEnvApiKey: string;
  /** A slug of the other fixture partner, not also one of the demo partner's. */
  readonly foreignSlug: string | undefined;
  /** A wallet that holds shares in the fixtures. */
  readonly wallet: string;
  /** A revoked key of the same partner, when the credentials name one. */
  readonly revokedApiKey: string | undefined;
  /** The fixtures it serves, as the position math's reference (POS-09). */
  readonly fixtures: ReferenceFixtures;
  readonly quota: number;
  /** The other fixture partner's sandbox key and secret (fault injection uses them). */
  readonly otherPartner: { readonly apiKey: string; readonly signingSecret: string };
  close(): Promise<void>;
}

export const EMBEDDED_QUOTA = 1000;

/** Starts the embedded sandbox server. Throws ConfigError when it cannot start. */
export async function startEmbeddedTarget(options: EmbeddedOptions = {}): Promise<EmbeddedTarget> {
  const adapter = await loadNodeAdapter("the embedded server");
  const { DEFAULT_FIXTURES_DIR, loadFixtureDir, startServer } = adapter;
  const DEMO_CREDENTIALS: DemoCredentials = options.credentials ?? adapter.DEMO_CREDENTIALS;
  const dir = options.fixturesDir ?? DEFAULT_FIXTURES_DIR;
  const quota = options.quota ?? EMBEDDED_QUOTA;
  let data: ReturnType<typeof loadFixtureDir>;
  let reference: ReferenceFixtures;
  try {
    data = loadFixtureDir(dir);
    reference = loadReferenceFixtures(dir);
  } catch (error) {
    throw new ConfigError(
      `the embedded server's fixtures do not load: ${(error as Error).message} ` +
        "(the demonstration runs from a checkout of the repository; pass --base-url to test a running deployment)",
    );
  }
  const foreign = foreignSlug(data.productRecords, DEMO_CREDENTIALS.partnerId);
  const fixtures: EmbeddedFixtures = { data, credentials: DEMO_CREDENTIALS, foreignSlug: foreign };
  const wrap = options.wrap;
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      port: 0,
      host: "127.0.0.1",
      environment: "sandbox",
      data,
      rateLimitQuota: quota,
      log: "none",
      ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
      ...(wrap ? { wrap: (api: PartnerApi) => wrap(api, fixtures) } : {}),
    });
  } catch (error) {
    throw new ConfigError(`the embedded server did not start: ${(error as Error).message}`);
  }
  return {
    baseUrl: server.url,
    apiKey: DEMO_CREDENTIALS.sandboxApiKey,
    signingSecret: DEMO_CREDENTIALS.signingSecret,
    otherEnvApiKey: DEMO_CREDENTIALS.productionApiKey,
    foreignSlug: foreign,
    wallet: DEMO_CREDENTIALS.walletWithPositions,
    revokedApiKey: DEMO_CREDENTIALS.revokedSandboxApiKey,
    fixtures: reference,
    quota,
    otherPartner: {
      apiKey: DEMO_CREDENTIALS.otherPartnerSandboxApiKey,
      signingSecret: DEMO_CREDENTIALS.otherPartnerSigningSecret,
    },
    close: () => server.close(),
  };
}

/**
 * The node adapter (the server, the sandbox fixtures, the demo credentials), an optional peer
 * dependency. Throws ConfigError naming the package to install when it is not there.
 */
async function loadNodeAdapter(what: string): Promise<typeof import("@partner-yield/node-adapter")> {
  try {
    return await import("@partner-yield/node-adapter");
  } catch (error) {
    const missing =
      (error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" &&
      (error as Error).message.includes("'@partner-yield/node-adapter'");
    throw new ConfigError(
      `${what} needs @partner-yield/node-adapter, an optional peer dependency of the harness, which ` +
        (missing
          ? "is not installed: install it beside the harness (npm install @partner-yield/node-adapter, or its tarball with the core's)"
          : `could not be loaded (${(error as Error).message})`) +
        "; or pass --base-url to test a running deployment",
    );
  }
}

/** The inputs that certify a sandbox server on the demo fixtures: every optional one of `run`. */
export interface SandboxInputs {
  readonly credentials: DemoCredentials;
  readonly fixturesDir: string;
  /** A slug of the other fixture partner, not also one of the demo partner's (PRD-07). */
  readonly foreignSlug: string | undefined;
}

/**
 * The demo credentials and the fixture inputs of our own sandbox (`sandbox-keys`). They are the
 * published sandbox demo credentials: a production server refuses every one of them.
 */
export async function sandboxInputs(fixturesDir?: string): Promise<SandboxInputs> {
  const adapter = await loadNodeAdapter("sandbox-keys");
  const dir = fixturesDir ?? adapter.DEFAULT_FIXTURES_DIR;
  let data: ReturnType<typeof adapter.loadFixtureDir>;
  try {
    data = adapter.loadFixtureDir(dir);
  } catch (error) {
    throw new ConfigError(`the fixtures in ${dir} do not load: ${(error as Error).message}`);
  }
  const credentials: DemoCredentials = adapter.DEMO_CREDENTIALS;
  return {
    credentials,
    fixturesDir: dir,
    foreignSlug: foreignSlug(data.productRecords, credentials.partnerId),
  };
}

/** The first slug, in order, of another partner's product that is not also one of `partnerId`'s (PRD-07). */
function foreignSlug(
  products: readonly { readonly partnerId: string; readonly slug: string }[],
  partnerId: string,
): string | undefined {
  const own = new Set(products.filter((p) => p.partnerId === partnerId).map((p) => p.slug));
  return products
    .filter((p) => p.partnerId !== partnerId && !own.has(p.slug))
    .map((p) => p.slug)
    .sort()[0];
}

/**
 * Run settings for an embedded target: its credentials and inputs, a generous throttle (the
 * server's quota is high), every check of level `reference`; `overrides` win.
 */
export function embeddedSettings(target: EmbeddedTarget, overrides: Partial<RunSettings> = {}): RunSettings {
  const rpm = overrides.rpm ?? DEFAULTS.embeddedRpm;
  return {
    baseUrl: target.baseUrl,
    embedded: true,
    apiKey: target.apiKey,
    signingSecret: target.signingSecret,
    otherEnvApiKey: target.otherEnvApiKey,
    foreignSlug: target.foreignSlug,
    wallet: target.wallet,
    fixtures: target.fixtures,
    revokedApiKey: target.revokedApiKey,
    level: "reference",
    seed: randomSeed(),
    rpm,
    burst: defaultBurst(rpm),
    maxRequests: undefined,
    only: undefined,
    rateLimitProbe: false,
    plan: {
      yieldSamples: DEFAULTS.yieldSamples,
      productSample: DEFAULTS.productSample,
      concurrentDuplicates: DEFAULTS.concurrentDuplicates,
      probeBudget: target.quota + 1,
    },
    timeoutMs: DEFAULTS.timeoutMs,
    ...overrides,
  };
}
