import { and, asc, eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { PrivateUrlsSetting } from "../config.ts";
import { webhookEndpoints } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import type { Scope } from "../lib/scope.ts";
import { currentEndpointOf, presentEndpoint } from "./endpoint-view.ts";
import { generateWebhookSecret } from "./secret.ts";
import { stopPendingDeliveries } from "./statements/stop-pending-deliveries.ts";
import { assertEndpointUrlAllowed, type HostResolver } from "./url-guard.ts";

type WebhookEndpoint = components["schemas"]["WebhookEndpoint"];
type WebhookEndpointCreated = components["schemas"]["WebhookEndpointCreated"];
type WebhookEndpointCreateRequest = components["schemas"]["WebhookEndpointCreateRequest"];

/** Registers an endpoint after the URL guard; the secret is returned here and never again. */
export async function createWebhookEndpoint(
  db: Executor,
  scope: Scope,
  input: WebhookEndpointCreateRequest,
  options: { allowPrivateUrls: PrivateUrlsSetting; resolveHost?: HostResolver },
): Promise<WebhookEndpointCreated> {
  await assertEndpointUrlAllowed(input.url, scope.mode, options);
  const secret = generateWebhookSecret();
  const [row] = await db
    .insert(webhookEndpoints)
    .values({
      accountId: scope.accountId,
      mode: scope.mode,
      url: input.url,
      description: input.description ?? null,
      secret,
      eventTypes: input.event_types ?? null,
      updatedAt: sql`now()`,
    })
    .returning();
  if (!row) throw new Error("webhook endpoint insert returned no row");
  return { ...presentEndpoint(row), secret };
}

/** The scope's endpoints that are not deleted, oldest first; no secrets. */
export async function listWebhookEndpoints(db: Executor, scope: Scope): Promise<WebhookEndpoint[]> {
  const rows = await db
    .select()
    .from(webhookEndpoints)
    .where(currentEndpointOf(scope))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
  return rows.map(presentEndpoint);
}

/** One of the scope's endpoints; `404` for anyone else's or a deleted one. */
export async function getWebhookEndpoint(db: Executor, scope: Scope, id: string): Promise<WebhookEndpoint> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), currentEndpointOf(scope)))
    .limit(1);
  if (!row) throw notFound("Webhook endpoint");
  return presentEndpoint(row);
}

/** Soft-deletes the scope's endpoint and stops its pending deliveries; `404` for anyone else's. */
export function deleteWebhookEndpoint(db: Executor, scope: Scope, id: string): Promise<{ id: string; deleted: true }> {
  return withTransaction(db, async (tx) => {
    const [row] = await tx
      .update(webhookEndpoints)
      .set({ deletedAt: sql`now()` })
      .where(and(eq(webhookEndpoints.id, id), currentEndpointOf(scope)))
      .returning({ id: webhookEndpoints.id });
    if (!row) throw notFound("Webhook endpoint");
    await stopPendingDeliveries(tx, { endpointId: id }, "endpoint deleted");
    return { id: row.id, deleted: true as const };
  });
}
