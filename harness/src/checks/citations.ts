/**
 * Citations of the normative documents, written once: `interface.md` (the interface as handed to
 * us), the `CONTRACT` (how we close its gaps) and `docs/contract.md` (our decisions where even the
 * CONTRACT is silent). A test finds every quote, verbatim, in its section.
 * @module
 */
import type { Citation } from "./types.js";

/** A line of interface.md, e.g. `spec("§4.3", "Result for a wallet that holds nothing: not shown.")`. */
export function spec(section: string, quote: string): Citation {
  return { document: "interface.md", section, quote };
}

/** A line of the contract (docs/contract.md §1–§9). */
export function contract(section: string, quote: string): Citation {
  return { document: "CONTRACT", section, quote };
}

/** A line of our decisions (docs/contract.md), under the heading `section`. */
export function decision(section: string, quote: string): Citation {
  return { document: "decisions", section, quote };
}

/** The gaps of interface.md that level `spec` must leave open, cited where checks give way to them. */
export const GAPS = {
  emptyWallet: spec("§4.3", "Result for a wallet that holds nothing: not shown."),
  formula: spec("§4.4", "Formula used for the yield figures: not shown."),
  bounds: spec("§8", "Maximum body size and bounds on `amount`: not shown."),
  absentFields: spec("§2", "Which Product fields may be absent from a response: not shown."),
  precision: spec("§2", "Units and precision of shares, assets and usd_value: not shown."),
  errorBody: spec("§7", "Error response body shape: not shown."),
  statusCodes: spec(
    "§7",
    "Status codes for failed authentication, invalid input, unknown product or bad signature: not shown.",
  ),
  eventData: spec("§6", "Content of `data` for each event type: not shown."),
  limitResponse: spec("§8", "Response given when a limit is exceeded: not shown."),
  otherStatuses: spec("§3", "Other status values: not shown."),
  chains: spec("§2", "Full list of chains and chain ids: not shown."),
} as const;
