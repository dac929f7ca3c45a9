/**
 * A product names its partner by id: the `partner` field of every product answer is the name the
 * partner store holds now, so products kept in a team's code cannot disagree with the partners of
 * its database, and a rename shows on the next answer.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  createPartnerApi,
  MemoryPartnerStore,
  MemoryProductSource,
  type PartnerApi,
} from "../../src/index.js";
import { DEMO, loadSandbox } from "../sandbox.js";

const get = async (api: PartnerApi, path: string) => {
  const answer = await api.handle({ method: "GET", path, headers: { "x-api-key": DEMO.sandboxApiKey } });
  assert.equal(answer.status, 200, String(answer.body));
  return JSON.parse(String(answer.body)) as { data: { partner: string } | { partner: string }[] };
};

describe("the partner name in product answers", () => {
  test("comes from the partner store, not from the product records, and follows a rename", async () => {
    const data = loadSandbox();
    const owner = data.partners.getPartner("northwind");
    assert.ok(owner !== undefined);
    // Products from the team's code, partners from its own store under another name.
    const products = new MemoryProductSource(data.products.listProducts("northwind"));
    const partners = new MemoryPartnerStore([{ ...owner, name: "FinCo Wallet" }]);
    const api = createPartnerApi({ environment: "sandbox", ...data, partners, products });
    const slug = data.products.listProducts("northwind")[0]!.slug;

    const one = await get(api, `/api/partner/products/${slug}`);
    const list = await get(api, "/api/partner/products");
    assert.equal((one.data as { partner: string }).partner, "FinCo Wallet");
    const listed = list.data as { partner: string }[];
    assert.ok(listed.length > 0);
    assert.ok(listed.every((p) => p.partner === "FinCo Wallet"));

    partners.put({ ...owner, name: "FinCo Wallet 2" });
    assert.equal(
      ((await get(api, `/api/partner/products/${slug}`)).data as { partner: string }).partner,
      "FinCo Wallet 2",
    );
    const relisted = (await get(api, "/api/partner/products")).data as { partner: string }[];
    assert.ok(relisted.every((p) => p.partner === "FinCo Wallet 2"));
  });
});
