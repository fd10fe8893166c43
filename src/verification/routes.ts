import type { AppDeps } from "../deps.ts";
import { type Handlers, operationRoutes, principalOf } from "../http/operations.ts";
import { verifyMeter, verifySmartcard } from "./service.ts";

export function verificationRoutes(deps: AppDeps) {
  const handlers: Handlers = {
    verifyMeter: async (input) => ({
      status: 200,
      message: "Meter verified",
      data: await verifyMeter(deps.db, deps.providers, principalOf(input).mode, input.body),
    }),
    verifySmartcard: async (input) => ({
      status: 200,
      message: "Smartcard verified",
      data: await verifySmartcard(deps.db, deps.providers, principalOf(input).mode, input.body),
    }),
  };
  return { handlers, routes: operationRoutes("verification", deps, handlers) };
}
