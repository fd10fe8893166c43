import { Webhook } from "standardwebhooks";

/**
 * The headers of a webhook signed per Standard Webhooks under a `whsec_…` secret: `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`).
 * Client webhooks and operator webhooks are signed the same way.
 */
export function signedWebhookHeaders(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "vend-webhooks/1",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}
