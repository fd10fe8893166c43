import type { AppDeps } from "../deps.ts";
import { AppError } from "../errors.ts";
import type { Handlers } from "../http/operations.ts";

const notYet = async (): Promise<never> => {
  throw new AppError("NOT_IMPLEMENTED", "Not implemented yet");
};

export function providerAdminRoutes(_deps: AppDeps) {
  const handlers = {
    listProviders: notYet,
    disableProvider: notYet,
    enableProvider: notYet,
    getProviderStats: notYet,
    listAnomalies: notYet,
  } satisfies Partial<Handlers>;
  return handlers;
}
