import type { EnvReader } from "../../config.ts";

export interface ClubkonnectConfig {
  /** Where its `API*.asp` endpoints live (https://www.nellobytesystems.com in production). */
  baseUrl: string;
  userId: string;
  apiKey: string;
  /** Sent as `CallBackURL` on every order, so ClubKonnect calls back when the order settles; absent: no callbacks. */
  callbackUrl: string | undefined;
  /** Bound on one call (an order, a query, a verification, the balance). */
  timeoutMs: number;
}

/** The live ClubKonnect provider: its variables, or undefined when `CLUBKONNECT_BASE_URL` is unset. */
export function readClubkonnectConfig(read: EnvReader): ClubkonnectConfig | undefined {
  const baseUrl = read.url("CLUBKONNECT_BASE_URL");
  if (!baseUrl) return undefined;
  const problem = "is required when CLUBKONNECT_BASE_URL is set";
  return {
    baseUrl,
    userId: read.text("CLUBKONNECT_USER_ID") ?? read.refuse("CLUBKONNECT_USER_ID", problem),
    apiKey: read.secret("CLUBKONNECT_API_KEY") ?? read.refuse("CLUBKONNECT_API_KEY", problem),
    callbackUrl: read.url("CLUBKONNECT_CALLBACK_URL"),
    timeoutMs: read.integer("CLUBKONNECT_TIMEOUT_MS", 15_000, 100, 120_000),
  };
}
