/**
 * NOTIFY channels that wake background work. Senders (the API, the completion statement, the
 * outbox) and the runner's listeners name them from here only.
 */

/** The API announces accepted vends on it, so an idle worker claims them at once. */
export const workChannel = "vend_work";

/** Announces webhook deliveries that are due now (the payload is the event id). */
export const webhookDueChannel = "vend_webhook_due";
