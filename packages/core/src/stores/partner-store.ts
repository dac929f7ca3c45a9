/**
 * Partners: who they are, their per-environment rate limits (CONTRACT §7) and their active
 * signing secrets (CONTRACT §4; several during a rotation).
 */
import type { Environment } from "../auth/environment.js";
import type { MaybePromise } from "./maybe-promise.js";

export interface Partner {
  readonly id: string;
  /** The partner name shown in `Product.partner`. */
  readonly name: string;
  /** Requests per rolling minute, per environment; absent means the default (1000 / 100). */
  readonly rateLimits?: { readonly [E in Environment]?: number | undefined } | undefined;
  /** Active signing secrets (`whsec_…`), any of which signs valid events. */
  readonly signingSecrets: readonly string[];
}

export interface PartnerStore {
  /** The partner, or undefined: itself when at hand, else a promise of it (`MaybePromise`). */
  getPartner(partnerId: string): MaybePromise<Partner | undefined>;
  close(): Promise<void>;
}

export class MemoryPartnerStore implements PartnerStore {
  readonly #byId = new Map<string, Partner>();

  constructor(partners: Iterable<Partner> = []) {
    for (const partner of partners) this.put(partner);
  }

  put(partner: Partner): void {
    this.#byId.set(partner.id, partner);
  }

  /** Answered at once: the API does not wait for it (`MaybePromise`). */
  getPartner(partnerId: string): Partner | undefined {
    return this.#byId.get(partnerId);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
