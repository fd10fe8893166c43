import type { components } from "../../generated/openapi-fetch-client.ts";
import { call, type VendClient } from "../client.ts";
import { newIdempotencyKey } from "../context.ts";
import { tell } from "../prompt.ts";
import { type Transaction, transactionDetailColumns } from "../views.ts";
import { type CommonVendFlags, commonBody, vendParams } from "./options.ts";
import type { VendSession } from "./session.ts";
import { isFinal, stillOpenHint, waitForFinal } from "./wait.ts";

interface TransactionAnswer {
  data?: { data: Transaction };
  error?: unknown;
  response: Response;
}

type VendParams = ReturnType<typeof vendParams>;
type WithCommon<B> = B & ReturnType<typeof commonBody>;
type Schemas = components["schemas"];

/** Where each vend is sent: airtime and data both to POST /api/v1/vend, each bill to its own endpoint. */
export const vendTo = {
  phone: (api: VendClient, params: VendParams, body: Schemas["VendRequest"]) => api.POST("/api/v1/vend", { params, body }),
  electricity: (api: VendClient, params: VendParams, body: Schemas["ElectricityVendRequest"]) =>
    api.POST("/api/v1/bills/electricity", { params, body }),
  cable: (api: VendClient, params: VendParams, body: Schemas["CableVendRequest"]) =>
    api.POST("/api/v1/bills/cable", { params, body }),
};

/**
 * Sends one vend under an Idempotency-Key (printed first, so a failed attempt can be retried with it) with
 * `body` and the fields every vend shares; with --wait follows it until it is final or the time is up. Prints
 * the transaction as the API returned it, and on stderr how to follow one that is still not final.
 */
export async function submitVend<B extends object>(
  session: VendSession,
  flags: CommonVendFlags,
  body: B,
  send: (client: VendClient, params: VendParams, body: WithCommon<B>) => Promise<TransactionAnswer>,
): Promise<void> {
  const { ctx } = session;
  const key = flags.idempotencyKey ?? newIdempotencyKey();
  await ctx.printer.note(`Idempotency-Key: ${key}`);
  const { data, response } = await call(send(session.client, vendParams(key), { ...body, ...commonBody(flags) }));
  if (response.headers.get("idempotent-replayed") === "true") {
    await ctx.printer.note("Replayed: the answer stored for this Idempotency-Key (no new transaction)");
  }
  const seconds = flags.wait ?? 0;
  const { transaction, waitedSeconds } = await waitForFinal(session.client, data, seconds);
  await ctx.printer.record(transaction, transactionDetailColumns);
  if (seconds > 0 && !isFinal(transaction)) tell(stillOpenHint(transaction, waitedSeconds, seconds));
}
