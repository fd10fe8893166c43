import { createServer, type Server } from "node:http";
import { constructEvent, type WebhookPayload, WebhookVerificationError } from "@vend/sdk";

/**
 * A webhook receiver: verifies each request's signature over its raw body with the endpoint's secret, answers
 * 400 to anything that does not verify, and hands each verified event to `onEvent` before answering 200.
 * Deliveries are at least once: use the event `id` to skip one already handled.
 */
export function createWebhookServer(secret: string, onEvent: (event: WebhookPayload) => void | Promise<void>): Server {
  return createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    try {
      const event = await constructEvent(Buffer.concat(chunks), request.headers, secret);
      await onEvent(event);
      response.writeHead(200).end("ok");
    } catch (error) {
      const refused = error instanceof WebhookVerificationError;
      response.writeHead(refused ? 400 : 500).end(refused ? "invalid signature" : "error");
      if (!refused) console.error(error);
    }
  });
}
