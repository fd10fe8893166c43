import type { AppDeps } from "../deps.ts";
import { type Handlers, principalOf } from "../http/operations.ts";
import { verifyMeter, verifySmartcard } from "./verify-customer.ts";

/** What the verification routes use. */
export type VerificationRouteDeps = Pick<AppDeps, "db" | "metrics" | "providers">;

export function verificationRoutes(deps: VerificationRouteDeps) {
  const handlers = {
    verifyMeter: async (input) => ({
      status: 200,
      message: "Meter verified",
      data: await verifyMeter(deps.db, deps.providers, principalOf(input).mode, input.body, deps),
    }),
    verifySmartcard: async (input) => ({
      status: 200,
      message: "Smartcard verified",
      data: await verifySmartcard(deps.db, deps.providers, principalOf(input).mode, input.body, deps),
    }),
  } satisfies Partial<Handlers>;
  return handlers;
}
