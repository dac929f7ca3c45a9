/**
 * One request answered by the core through Fastify's reply, so the app's own `onSend` and
 * `onResponse` hooks and its request log see it like any other route's answer.
 * @module
 */
import type { PartnerApiHandler } from "@partner-yield/core";
import { answerFromCore } from "@partner-yield/node-adapter";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * The core's answer to `request`, written with `reply`. The body is read by the core from
 * `request.raw`, only when it asks; the request id is the client's acceptable `X-Request-Id`, else
 * Fastify's `request.id` (the one its log lines carry), else one the core makes (CONTRACT §9).
 */
export async function replyFromCore(
  api: PartnerApiHandler,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { response } = await answerFromCore(api, request.raw, {
    clientAddress: request.ip,
    requestId: request.id,
    onError: (error, requestId) =>
      request.log.error({ err: error, requestId }, "partner-yield: answered 500 internal_error"),
  });
  return reply.code(response.status).headers(response.headers).send(response.body);
}
