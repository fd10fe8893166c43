import { randomBytes } from "node:crypto";

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** The secrets a delivery is signed with now: the current one, and the previous one during its overlap. */
export function signingSecretsOf(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  now = new Date(),
): string[] {
  const { secret, previousSecret, previousSecretExpiresAt } = endpoint;
  return previousSecret && previousSecretExpiresAt && previousSecretExpiresAt > now ? [secret, previousSecret] : [secret];
}
