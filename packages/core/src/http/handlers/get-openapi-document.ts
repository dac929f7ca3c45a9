/** `GET /openapi.json` (docs/contract.md): this API's OpenAPI 3.1 document, without a key. */
import type { PublicHandler } from "../handler.js";
import { okReply } from "../reply.js";

export const getOpenApiDocument: PublicHandler = async (_call, deps) => okReply(deps.openApiJson());
