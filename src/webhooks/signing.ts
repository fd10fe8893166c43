import { Webhook } from "standardwebhooks";

/**
 * The headers of a webhook signed per Standard Webhooks under one or more `whsec_…` secrets: `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one
 * per secret, space-separated, so a receiver holding any of them verifies). Several secrets are given
 * while a rotated-out secret still signs. Client webhooks and operator webhooks are signed the same way.
 */
export function signedWebhookHeaders(
  secrets: string | readonly string[],
  id: string,
  body: string,
  at = new Date(),
): Record<string, string> {
  const signatures = (typeof secrets === "string" ? [secrets] : secrets).map((secret) => new Webhook(secret).sign(id, at, body));
  return {
    "content-type": "application/json",
    "user-agent": "vend-webhooks/1",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signatures.join(" "),
  };
}
