import { defaultSandboxCallbackSecret, defaultSandboxCallbackToken } from "../lib/shared/sandbox-outcomes.ts";
import { type RetentionKind, retentionKinds, retentionVariables } from "../retention/retention-settings.ts";
import { type SettingDoc, serviceProcesses, worker } from "./setting-doc.ts";

const provider = (does: string, extra: Partial<SettingDoc> = {}): SettingDoc => ({
  group: "Providers",
  usedBy: serviceProcesses,
  does,
  ...extra,
});

/** A live provider's `<PREFIX>TIMEOUT_MS`: a worker's lease must outlast two of its calls (`longestCall` of `liveHttpPlugin`). */
const callBound = (name: string, calls: string): SettingDoc =>
  provider(`The bound on one ${name} call (${calls}); \`WORKER_LEASE_SECONDS\` must cover two of them.`);

/** The providers file and each provider plugin's own variables (`src/providers/<name>/config.ts`). */
export const providerSettings: Record<string, SettingDoc> = {
  PROVIDERS_FILE: provider(
    "A YAML or JSON file with the live providers, their routes, product codes, float thresholds, commissions and breaker (`providers.example.yaml`). When set, the live providers come from it alone (their variables below are not read; a secret is named in the file as `<key>_env`); the sandbox keeps its variables.",
    { values: "a file path" },
  ),
  SANDBOX_CALLBACK_DELAY_MS: provider("When the sandbox calls back for destinations ending in `2222` and `3333`."),
  SANDBOX_CALLBACK_TOKEN: provider(
    "The sandbox provider's callback bearer token (test mode only; `vendctl callbacks send` assumes the same default).",
    { fallback: `\`${defaultSandboxCallbackToken}\`` },
  ),
  SANDBOX_CALLBACK_SECRET: provider("The HMAC secret of the sandbox's callback signatures (test mode only).", {
    fallback: `\`${defaultSandboxCallbackSecret}\``,
  }),
  SANDBOX_LATENCY_MS: provider("Simulated provider answer time (drills and benchmarks)."),
  VTU_BASE_URL: provider(
    "The live VTU provider's API. Set, the provider is configured and every other `VTU_` variable but `VTU_TIMEOUT_MS` is required.",
    { example: "https://vtu.example" },
  ),
  VTU_API_KEY: provider("The VTU account's API key.", { example: "vtu-api-key" }),
  VTU_SECRET_KEY: provider("The VTU account's secret key.", { example: "vtu-secret-key" }),
  VTU_CALLBACK_TOKEN: provider("The bearer token VTU's callbacks must carry.", { example: "vtu-callback-token" }),
  VTU_CALLBACK_SECRET: provider("The HMAC secret of VTU's callback signatures.", { example: "vtu-callback-secret" }),
  VTU_TIMEOUT_MS: callBound("VTU", "pay, re-query, merchant verification"),
  CLUBKONNECT_BASE_URL: provider(
    "Where the live ClubKonnect provider's `API*.asp` endpoints live. Set, the provider is configured and `CLUBKONNECT_USER_ID` and `CLUBKONNECT_API_KEY` are required.",
    { example: "https://clubkonnect.example" },
  ),
  CLUBKONNECT_USER_ID: provider("The ClubKonnect account's user id.", { example: "CK100" }),
  CLUBKONNECT_API_KEY: provider("The ClubKonnect account's API key.", { example: "clubkonnect-api-key" }),
  CLUBKONNECT_CALLBACK_URL: provider(
    "Sent as `CallBackURL` with every order, so ClubKonnect calls back when the order settles; unset: no callbacks (re-queries find the outcome).",
  ),
  CLUBKONNECT_TIMEOUT_MS: callBound("ClubKonnect", "an order, a query, a verification, the balance"),
};

/** What each kind's `RETENTION_*_DAYS` deletes, once that many days old (`0` keeps it for ever). */
const retentionDoes: Record<RetentionKind, string> = {
  webhookAttempts: "Webhook attempts (the log of each send) made longer ago.",
  deliveredWebhooks: "Delivered (`succeeded`) webhook deliveries, counted from their last change, with their attempts.",
  failedWebhooks:
    "`failed` webhook deliveries (past their last retry, or stopped), with their attempts: `POST /api/v1/events/resend-failed` can send only what is still there.",
  deliveredEvents:
    "Events none of whose deliveries is still `pending`, with their deliveries and attempts. Kept by default: `GET /api/v1/events` lists them and `POST /api/v1/events/{id}/resend` needs them.",
  providerCallbacks:
    "Stored provider callbacks (`GET /admin/v1/callbacks`); what they changed stays in the transaction and its ledger.",
  sandboxOrders: "The sandbox's own orders whose transaction is final and whose callback, if any, was sent.",
  lowBalanceAnomalies: "`low_balance` anomalies; `double_delivery` ones are kept.",
  requestLogs:
    "Recorded API requests (`GET /api/v1/request-logs`, `GET /admin/v1/request-logs`), counted from their arrival, with their bodies.",
};

const retention = (does: string): SettingDoc => ({
  group: "Retention",
  usedBy: [...worker, "vend retention run"],
  does,
});

/**
 * The retention pass's variables: one per kind of operational row, from the list the pass itself uses, then its bounds.
 * Money history has none: it is never deleted.
 */
export const retentionSettings: Record<string, SettingDoc> = {
  ...Object.fromEntries(
    retentionKinds.map((kind) => [retentionVariables[kind].variable, retention(`${retentionDoes[kind]} \`0\`: kept.`)]),
  ),
  RETENTION_BATCH_ROWS: retention("Rows one retention statement deletes at most."),
  RETENTION_PASS_SECONDS: retention(
    "A retention pass starts no statement after this long; the next pass (every worker runs one at start and every 10 minutes) goes on.",
  ),
};
