import { and, eq, getTableColumns } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { Config } from "../config.ts";
import { webhookEndpoints } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import { randomBase62 } from "../lib/random.ts";
import type { Scope } from "../lib/scope.ts";
import type { Logger } from "../logger.ts";
import { publicError } from "./delivery.ts";
import { currentEndpointOf } from "./endpoint-view.ts";
import { previousSecretInOverlap, signingSecretsOf } from "./secret.ts";
import { postWebhook } from "./send.ts";
import { signedWebhookHeaders } from "./signing.ts";
import { type HostResolver, privateUrlsAllowedFor, resolveWithSystemDns } from "./url-guard.ts";

type WebhookPingResult = components["schemas"]["WebhookPingResult"];
type WebhookPingEvent = components["schemas"]["WebhookPingEvent"];

export interface PingDeps {
  db: Executor;
  config: Pick<Config, "webhooks">;
  logger: Logger;
  resolveHost?: HostResolver;
}

/**
 * POSTs a signed `webhook_endpoint.ping` to one of the scope's endpoints, now, once, through the same
 * guarded sender as deliveries, and reports how it went. Enabled or not; nothing is stored or changed.
 */
export async function pingWebhookEndpoint(deps: PingDeps, scope: Scope, id: string): Promise<WebhookPingResult> {
  const [endpoint] = await deps.db
    .select({ ...getTableColumns(webhookEndpoints), previousSecretInOverlap })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), currentEndpointOf(scope)))
    .limit(1);
  if (!endpoint) throw notFound("Webhook endpoint");
  const webhookId = `evt_${randomBase62(24)}`;
  const at = new Date();
  const event: WebhookPingEvent = {
    id: webhookId,
    type: "webhook_endpoint.ping",
    created_at: at.toISOString(),
    mode: endpoint.mode,
    data: { endpoint_id: endpoint.id, message: "A test event: any 2xx answer means this endpoint receives webhooks." },
  };
  const body = JSON.stringify(event);
  const started = performance.now();
  const result = await postWebhook(endpoint.url, body, signedWebhookHeaders(signingSecretsOf(endpoint), webhookId, body, at), {
    timeoutMs: deps.config.webhooks.timeoutMs,
    allowPrivateUrls: privateUrlsAllowedFor(deps.config.webhooks.allowPrivateUrls, endpoint.mode),
    resolveHost: deps.resolveHost ?? resolveWithSystemDns,
  });
  const durationMs = Math.round(performance.now() - started);
  if (result.kind === "refused" || result.kind === "unreachable") {
    deps.logger.warn({ endpointId: endpoint.id, outcome: result.kind, detail: result.detail }, "webhook ping not delivered");
  }
  const statusCode = result.kind === "response" ? result.statusCode : null;
  return {
    endpoint_id: endpoint.id,
    webhook_id: webhookId,
    delivered: statusCode !== null && statusCode >= 200 && statusCode < 300,
    status_code: statusCode,
    error: publicError(result),
    duration_ms: durationMs,
  };
}
