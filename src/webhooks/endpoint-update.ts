import { and, eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { PrivateUrlsSetting } from "../config.ts";
import { webhookEndpoints } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import type { Scope } from "../lib/scope.ts";
import { currentEndpointOf, type EndpointRow, presentEndpoint } from "./endpoint-view.ts";
import { generateWebhookSecret } from "./secret.ts";
import { stopPendingDeliveries } from "./statements/stop-pending-deliveries.ts";
import { assertEndpointUrlAllowed, type HostResolver } from "./url-guard.ts";

type WebhookEndpoint = components["schemas"]["WebhookEndpoint"];
type WebhookEndpointCreated = components["schemas"]["WebhookEndpointCreated"];
type UpdateRequest = components["schemas"]["WebhookEndpointUpdateRequest"];

/** Default and longest overlap of a rotation, in seconds: a day, and a week. */
export const defaultRotationOverlapSeconds = 86_400;

async function lockEndpoint(tx: Executor, scope: Scope, id: string): Promise<EndpointRow> {
  const [row] = await tx
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), currentEndpointOf(scope)))
    .for("update")
    .limit(1);
  if (!row) throw notFound("Webhook endpoint");
  return row;
}

/**
 * Changes the fields given. A new URL passes the creation checks and restarts `failing_since`; enabling
 * clears the disabled state; disabling (or narrowing the subscription) stops what is pending and no
 * longer wanted, so the delivery loop never sends it.
 */
export async function updateWebhookEndpoint(
  db: Executor,
  scope: Scope,
  id: string,
  input: UpdateRequest,
  options: { allowPrivateUrls: PrivateUrlsSetting; resolveHost?: HostResolver },
): Promise<WebhookEndpoint> {
  if (input.url !== undefined) await assertEndpointUrlAllowed(input.url, scope.mode, options);
  return withTransaction(db, async (tx) => {
    const row = await lockEndpoint(tx, scope, id);
    const enabling = input.enabled === true && !row.enabled;
    const disabling = input.enabled === false && row.enabled;
    const urlChanged = input.url !== undefined && input.url !== row.url;
    const [updated] = await tx
      .update(webhookEndpoints)
      .set({
        ...(input.url === undefined ? {} : { url: input.url }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.event_types === undefined ? {} : { eventTypes: input.event_types }),
        ...(urlChanged || enabling ? { failingSince: null } : {}),
        ...(enabling ? { enabled: true, disabledReason: null, disabledAt: null } : {}),
        ...(disabling ? { enabled: false, disabledReason: "disabled_by_client", disabledAt: sql`now()` } : {}),
        updatedAt: sql`now()`,
      })
      .where(eq(webhookEndpoints.id, row.id))
      .returning();
    if (!updated) throw new Error("webhook endpoint vanished under its lock");
    if (!updated.enabled) await stopPendingDeliveries(tx, { endpointId: row.id }, "endpoint disabled");
    else if (input.event_types)
      await stopPendingDeliveries(tx, { endpointId: row.id, keepTypes: input.event_types }, "not subscribed");
    return presentEndpoint(updated);
  });
}

/**
 * Issues a new secret, returned once. For `overlapSeconds` the secret it replaces keeps signing beside
 * it; 0 retires it at once. Only one previous secret is kept.
 */
export async function rotateWebhookEndpointSecret(
  db: Executor,
  scope: Scope,
  id: string,
  overlapSeconds = defaultRotationOverlapSeconds,
): Promise<WebhookEndpointCreated> {
  const secret = generateWebhookSecret();
  const overlap = overlapSeconds > 0;
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      secret,
      previousSecret: overlap ? sql`${webhookEndpoints.secret}` : null,
      previousSecretExpiresAt: overlap ? sql`now() + ${overlapSeconds}::int * interval '1 second'` : null,
      updatedAt: sql`now()`,
    })
    .where(and(eq(webhookEndpoints.id, id), currentEndpointOf(scope)))
    .returning();
  if (!row) throw notFound("Webhook endpoint");
  return { ...presentEndpoint(row), secret };
}
