import type { EnvReader } from "../../config.ts";
import {
  defaultSandboxCallbackDelayMs,
  defaultSandboxCallbackSecret,
  defaultSandboxCallbackToken,
  defaultSandboxLatencyMs,
} from "./defaults.ts";

export interface SandboxConfig {
  callbackDelayMs: number;
  callbackToken: string;
  callbackSecret: string;
  latencyMs: number;
}

/** The sandbox is always there: every variable has a default. */
export function readSandboxConfig(read: EnvReader): SandboxConfig {
  return {
    callbackDelayMs: read.integer("SANDBOX_CALLBACK_DELAY_MS", defaultSandboxCallbackDelayMs, 0, 3_600_000),
    callbackToken: read.secret("SANDBOX_CALLBACK_TOKEN") ?? defaultSandboxCallbackToken,
    callbackSecret: read.secret("SANDBOX_CALLBACK_SECRET") ?? defaultSandboxCallbackSecret,
    latencyMs: read.integer("SANDBOX_LATENCY_MS", defaultSandboxLatencyMs, 0, 60_000),
  };
}
