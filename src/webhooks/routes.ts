import type { AppDeps } from "../deps.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { listEvents, resendEvent } from "./account-events.ts";
import { rotateWebhookEndpointSecret, updateWebhookEndpoint } from "./endpoint-update.ts";
import { createWebhookEndpoint, deleteWebhookEndpoint, getWebhookEndpoint, listWebhookEndpoints } from "./manage-endpoints.ts";
import { pingWebhookEndpoint } from "./ping.ts";
import { resendFailedDeliveries } from "./resend-failed.ts";

/** What the webhook routes use. */
export type WebhookRouteDeps = Pick<AppDeps, "config" | "cursors" | "db" | "logger">;

export function webhookRoutes(deps: WebhookRouteDeps) {
  const urlOptions = () => ({ allowPrivateUrls: deps.config.webhooks.allowPrivateUrls });
  const handlers = {
    createWebhookEndpoint: async (input) => ({
      status: 201,
      message: "Webhook endpoint created; store the secret now, it is not shown again",
      data: await createWebhookEndpoint(deps.db, principalOf(input), input.body, urlOptions()),
    }),
    listWebhookEndpoints: async (input) => ({ status: 200, data: await listWebhookEndpoints(deps.db, principalOf(input)) }),
    getWebhookEndpoint: async (input) => ({
      status: 200,
      data: await getWebhookEndpoint(deps.db, principalOf(input), input.params.id),
    }),
    updateWebhookEndpoint: async (input) => ({
      status: 200,
      message: "Webhook endpoint updated",
      data: await updateWebhookEndpoint(deps.db, principalOf(input), input.params.id, input.body, urlOptions()),
    }),
    rotateWebhookEndpointSecret: async (input) => ({
      status: 200,
      message: "Signing secret rotated; store the new secret now, it is not shown again",
      data: await rotateWebhookEndpointSecret(deps.db, principalOf(input), input.params.id, input.body?.overlap_seconds),
    }),
    pingWebhookEndpoint: async (input) => {
      const result = await pingWebhookEndpoint(deps, principalOf(input), input.params.id);
      return { status: 200, message: result.delivered ? "Ping delivered" : "Ping not delivered", data: result };
    },
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
    resendFailedDeliveries: async (input) => {
      const result = await resendFailedDeliveries(deps.db, principalOf(input), input.body);
      return { status: 200, message: `${result.scheduled} failed deliveries scheduled again`, data: result };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
