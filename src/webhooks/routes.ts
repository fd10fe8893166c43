import type { AppDeps } from "../deps.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { createWebhookEndpoint, deleteWebhookEndpoint, listEvents, listWebhookEndpoints, resendEvent } from "./service.ts";

export function webhookRoutes(deps: AppDeps) {
  const handlers = {
    createWebhookEndpoint: async (input) => ({
      status: 201,
      message: "Webhook endpoint created; store the secret now, it is not shown again",
      data: await createWebhookEndpoint(deps.db, principalOf(input), input.body, {
        allowPrivateUrls: deps.config.webhooks.allowPrivateUrls,
      }),
    }),
    listWebhookEndpoints: async (input) => ({ status: 200, data: await listWebhookEndpoints(deps.db, principalOf(input)) }),
    deleteWebhookEndpoint: async (input) => ({
      status: 200,
      message: "Webhook endpoint deleted",
      data: await deleteWebhookEndpoint(deps.db, principalOf(input), input.params.id),
    }),
    listEvents: async (input) => ({
      status: 200,
      data: await listEvents(deps.db, deps.cursors, principalOf(input), input.query),
    }),
    resendEvent: async (input) => ({
      status: 200,
      message: "Event scheduled for delivery",
      data: await resendEvent(deps.db, principalOf(input), input.params.id),
    }),
  } satisfies Partial<Handlers>;
  return handlers;
}
