import type { AppDeps } from "../deps.ts";
import { AppError } from "../errors.ts";
import { contextOf } from "../http/context.ts";
import type { Handlers } from "../http/operations.ts";
import { componentCheck } from "../http/validation.ts";
import { transitionsAfterCommit } from "../metrics/after-commit.ts";
import { callbackAuthentic, handleCallback, scheduleHintedRequery } from "./apply.ts";
import { findStoredCallback, listStoredCallbacks, presentStoredCallback } from "./stored.ts";

/** What the callback routes use. */
export type CallbackRouteDeps = Pick<
  AppDeps,
  "announceWork" | "authGuard" | "callbackProviders" | "cursors" | "db" | "logger" | "metrics" | "reads" | "spec"
>;

export function callbackRoutes(deps: CallbackRouteDeps) {
  const providers = deps.callbackProviders;
  const check = componentCheck(deps.spec, "ProviderCallback");
  const handlers = {
    receiveProviderCallback: async ({ params, rawBody, request }) => {
      const client = contextOf(request).ip ?? "in-process";
      const incoming = {
        provider: params.provider,
        rawBody,
        authorization: request.headers.get("authorization"),
        signature: request.headers.get("x-provider-signature"),
      };
      // A callback with its provider's token and signature is served whatever other callers from its (often
      // shared) address got wrong; anything else meets the address's failure budget before any database work.
      if (!callbackAuthentic(providers, incoming)) deps.authGuard.admit(client);
      const result = await handleCallback(deps, providers, check, incoming).catch((error: unknown) => {
        // A wrong bearer token is a guess at a secret: it counts against the address's failure budget.
        if (error instanceof AppError && error.code === "UNAUTHENTICATED") deps.authGuard.recordFailure(client);
        throw error;
      });
      if (result.error?.code === "UNAUTHENTICATED") deps.authGuard.recordFailure(client);
      if (result.error) throw result.error;
      if (!result.transaction) throw new Error("callback applied without a transaction");
      return { status: 200, message: "Callback applied", data: result.transaction };
    },
    receiveProviderCallbackHint: async ({ params, query }) => {
      const scheduled = await scheduleHintedRequery(deps.db, providers, params.provider, query as Record<string, string>);
      if (scheduled) deps.announceWork();
      return {
        status: 200,
        message: scheduled
          ? "Noted; the order is re-queried at the provider now"
          : "Noted; it names no order open with this provider",
        data: { requery_scheduled: scheduled },
      };
    },
    listCallbacks: async ({ query }) => ({
      status: 200,
      data: await deps.reads.read((db) => listStoredCallbacks(db, deps.cursors, query)),
    }),
    replayCallback: async ({ params, db, afterCommit }) => {
      const original = await findStoredCallback(db, params.id);
      const metrics = transitionsAfterCommit(deps.metrics, afterCommit);
      const result = await handleCallback({ db, logger: deps.logger, metrics }, providers, check, {
        provider: original.provider,
        rawBody: original.rawBody,
        authorization: null,
        signature: original.headers["x-provider-signature"] ?? null,
        replayOf: original.id,
      });
      if (!result.storedId) throw new Error("a replayed callback is always stored");
      return {
        status: 200,
        message: result.error ? `Replayed: ${result.error.code}` : "Replayed: applied",
        data: presentStoredCallback(await findStoredCallback(db, result.storedId)),
      };
    },
  } satisfies Partial<Handlers>;
  return handlers;
}
