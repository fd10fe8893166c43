/**
 * NOTIFY channels that wake background work. Senders (the API, the completion statement, the
 * outbox, a resend) and the runner's listeners name them from here only; in the bottom layer, so every
 * layer can. SQL cannot import them: the low-balance trigger's function (migration 0020, replacing 0009's)
 * spells `vend_webhook_due` too, and test/webhooks/endpoint-rule.test.ts holds it to `webhookDueChannel`.
 */

/** The API announces accepted vends on it, so an idle worker claims them at once. */
export const workChannel = "vend_work";

/** Announces webhook deliveries that are due now (the payload is the event id). */
export const webhookDueChannel = "vend_webhook_due";

/** Announces each batch of request logs written (the payload is the batch's last id), so live tails read them. */
export const requestLogsChannel = "vend_request_logs";
