import { and, eq, isNull, type SQL } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { webhookEndpoints } from "../db/schema/index.ts";
import type { Scope } from "../lib/scope.ts";

type WebhookEndpoint = components["schemas"]["WebhookEndpoint"];
type EventType = components["schemas"]["EventType"];
type DisabledReason = components["schemas"]["WebhookDisabledReason"];
export type EndpointRow = typeof webhookEndpoints.$inferSelect;

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

/** The disabled reason in words, for people reading the endpoint or the event. */
export function disabledMessageOf(row: Pick<EndpointRow, "disabledReason" | "failingSince" | "disabledAt">): string | null {
  switch (row.disabledReason) {
    case null:
      return null;
    case "disabled_by_client":
      return "Disabled through the API (enabled: false); enable it again with enabled: true.";
    case "failing_deliveries":
      return (
        `Disabled automatically: every delivery attempt failed from ${iso(row.failingSince) ?? "?"} to ` +
        `${iso(row.disabledAt) ?? "?"}. Fix the receiver, check it with a ping, enable the endpoint again, ` +
        "then resend what it missed (POST /api/v1/events/resend-failed)."
      );
    default:
      return row.disabledReason;
  }
}

/** An endpoint as the API shows it: never a secret, old or new. */
export function presentEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    mode: row.mode,
    enabled: row.enabled,
    event_types: (row.eventTypes as EventType[] | null) ?? null,
    disabled_reason: row.enabled ? null : ((row.disabledReason as DisabledReason | null) ?? null),
    disabled_message: row.enabled ? null : disabledMessageOf(row),
    disabled_at: row.enabled ? null : iso(row.disabledAt),
    failing_since: iso(row.failingSince),
    previous_secret_expires_at: iso(row.previousSecretExpiresAt),
    created_at: row.createdAt.toISOString(),
    updated_at: (row.updatedAt ?? row.createdAt).toISOString(),
  };
}

/** The scope's endpoints that are not deleted. */
export const currentEndpointOf = (scope: Scope): SQL | undefined =>
  and(eq(webhookEndpoints.accountId, scope.accountId), eq(webhookEndpoints.mode, scope.mode), isNull(webhookEndpoints.deletedAt));
