import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { webhookEndpoints } from "../db/schema/index.ts";

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The previous secret while its rotation overlap lasts, else null: a column to select with the endpoint. The
 * overlap ends by the database's clock (the one that set `previous_secret_expires_at`), so every process
 * stops signing with the old secret at the same instant whatever its own clock says.
 */
export const previousSecretInOverlap = sql<
  string | null
>`case when ${webhookEndpoints.previousSecretExpiresAt} > now() then ${webhookEndpoints.previousSecret} end`;

/** The secrets a delivery is signed with now: the current one, and the previous one during its overlap. */
export function signingSecretsOf(endpoint: { secret: string; previousSecretInOverlap: string | null }): string[] {
  const { secret, previousSecretInOverlap } = endpoint;
  return previousSecretInOverlap ? [secret, previousSecretInOverlap] : [secret];
}
