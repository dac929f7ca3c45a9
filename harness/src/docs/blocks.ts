/**
 * Which generated block goes where: the tables (from the registries) and the sample outputs
 * (from real runs) of each document.
 * @module
 */
import { apiPropertiesSample, conformanceSample, propertyFailureSample } from "./samples.js";
import {
  alternativesTable,
  apiPropertiesTable,
  checksSummary,
  checksTable,
  citationsList,
  failureKindsTable,
  faultsTable,
  propertiesTable,
  replaceGenerated,
} from "./tables.js";

type Render = () => string | Promise<string>;

export const GENERATED_BLOCKS: Readonly<
  Record<"docs/conformance.md" | "docs/math.md", Readonly<Record<string, Render>>>
> = {
  "docs/conformance.md": {
    summary: checksSummary,
    checks: checksTable,
    citations: citationsList,
    "failure-kinds": failureKindsTable,
    faults: faultsTable,
    alternatives: alternativesTable,
    "sample-run": conformanceSample,
  },
  "docs/math.md": {
    properties: propertiesTable,
    "api-properties": apiPropertiesTable,
    "property-failure": propertyFailureSample,
    "api-sample": apiPropertiesSample,
  },
};

/** `document` with every generated block of `file` rendered afresh. */
export async function renderBlocks(file: keyof typeof GENERATED_BLOCKS, document: string): Promise<string> {
  let out = document;
  for (const [name, render] of Object.entries(GENERATED_BLOCKS[file]))
    out = replaceGenerated(out, name, await render());
  return out;
}
