import type { ServiceCode } from "../../generated/constants.ts";
import type { AppDeps } from "../deps.ts";
import { contextOf } from "../http/context.ts";
import { accountScope, answerOf, idempotencyKeyOf } from "../http/idempotent.ts";
import { type Handlers, type OperationInput, type OperationResult, principalOf, type SuccessDataOf } from "../http/operations.ts";
import { componentCheck, type ValueCheck } from "../http/validation.ts";
import { acceptBatch } from "../orders/accept-batch.ts";
import { type AcceptContext, acceptVend } from "../orders/accept-order.ts";
import { getVendBatch, listVendBatches } from "../orders/batch-lookup.ts";
import type { VendRequest } from "../orders/vend-requests.ts";

/** What the vend routes use: accepting (single and bulk), reading batches, and the contract's request schemas. */
export type VendRouteDeps = AcceptContext & Pick<AppDeps, "cursors" | "spec">;

type VendOperation = "vendProduct" | "vendElectricity" | "vendCable";

/** The caller's wallet, its Idempotency-Key and the trace the request carries. */
function acceptance(input: OperationInput<VendOperation | "createVendBatch">) {
  const principal = principalOf(input);
  return {
    wallet: { accountId: principal.accountId, mode: principal.mode },
    key: idempotencyKeyOf(input, accountScope(principal)),
    traceContext: contextOf(input.request).traceparent,
  };
}

export function vendRoutes(deps: VendRouteDeps) {
  const vend = async <Id extends VendOperation>(
    input: OperationInput<Id>,
    request: VendRequest,
  ): Promise<OperationResult<Id>> => {
    const wait = { waitSeconds: (input.query as { wait?: number }).wait ?? 0, startedAt: contextOf(input.request).startedAt };
    const answer = await acceptVend({ ctx: deps, input: { ...acceptance(input), request, ...wait } });
    if ("stored" in answer) return answerOf<Id>(answer.stored);
    return { status: 202, message: answer.message, data: answer.waited as SuccessDataOf<Id> };
  };
  const productCheck = componentCheck(deps.spec, "VendRequest");
  const checks: Record<ServiceCode, ValueCheck> = {
    airtime: productCheck,
    data: productCheck,
    electricity: componentCheck(deps.spec, "ElectricityVendRequest"),
    cable: componentCheck(deps.spec, "CableVendRequest"),
  };
  const handlers = {
    vendProduct: (input) => vend(input, { kind: "product", body: input.body }),
    vendElectricity: (input) => vend(input, { kind: "electricity", body: input.body }),
    vendCable: (input) => vend(input, { kind: "cable", body: input.body }),
    /** Each order is checked against the request schema of its single vend (`service` removed); see acceptBatch. */
    createVendBatch: async (input) => {
      const problems = input.body.orders.map(({ service, ...fields }) => checks[service](fields));
      const answer = await acceptBatch({ ctx: deps, input: { ...acceptance(input), body: input.body, problems } });
      return answerOf<"createVendBatch">(answer);
    },
    listVendBatches: async (input) => ({
      status: 200,
      data: await listVendBatches({ ctx: deps, input: { scope: principalOf(input), query: input.query } }),
    }),
    getVendBatch: async (input) => ({
      status: 200,
      data: await getVendBatch({ ctx: deps, input: { scope: principalOf(input), id: input.params.id, query: input.query } }),
    }),
  } satisfies Partial<Handlers>;
  return handlers;
}
