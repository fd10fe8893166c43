/** The example's settings, from the environment. */
export interface IntegratorConfig {
  baseUrl: string;
  apiKey: string;
  /** The `whsec_…` secret of the webhook endpoint (printed when it is created); only the receiver needs it. */
  webhookSecret: string | undefined;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): IntegratorConfig {
  const baseUrl = env.VEND_BASE_URL;
  const apiKey = env.VEND_API_KEY;
  if (!baseUrl || !apiKey) throw new Error("Set VEND_BASE_URL (e.g. http://localhost:8080) and VEND_API_KEY (rg_test_…)");
  return { baseUrl, apiKey, webhookSecret: env.VEND_WEBHOOK_SECRET || undefined };
}
