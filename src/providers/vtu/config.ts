import type { EnvReader } from "../../config.ts";

export interface VtuConfig {
  baseUrl: string;
  apiKey: string;
  secretKey: string;
  callbackToken: string;
  callbackSecret: string;
  /** Bound on one call (pay, requery, merchant-verify). */
  timeoutMs: number;
}

/** The live VTU provider: all of its variables, or none (undefined when `VTU_BASE_URL` is unset). */
export function readVtuConfig(read: EnvReader): VtuConfig | undefined {
  const baseUrl = read.url("VTU_BASE_URL");
  if (!baseUrl) return undefined;
  const required = (name: string) => read.secret(name) ?? read.refuse(name, "is required when VTU_BASE_URL is set");
  return {
    baseUrl,
    apiKey: required("VTU_API_KEY"),
    secretKey: required("VTU_SECRET_KEY"),
    callbackToken: required("VTU_CALLBACK_TOKEN"),
    callbackSecret: required("VTU_CALLBACK_SECRET"),
    timeoutMs: read.integer("VTU_TIMEOUT_MS", 15_000, 100, 120_000),
  };
}
