import { Elysia } from "elysia";
import type { SentOperationId } from "../../generated/constants.ts";
import type { operations } from "../../generated/openapi-types.ts";
import type { Executor } from "../db/transaction.ts";
import { AppError } from "../errors.ts";
import type { RequestRecorder } from "../lib/answered-request.ts";
import { type AdminAction, type ApiPrincipal, isOperator, type OperatorPrincipal } from "../lib/scope.ts";
import type { Logger } from "../logger.ts";
import { contextOf } from "./context.ts";
import { adminActionOf, audit, auditsChanges } from "./pipeline/audit.ts";
import { type Authenticate, authenticate, clientOf } from "./pipeline/authenticate.ts";
import { authorize } from "./pipeline/authorize.ts";
import { addRateLimitHeaders, type Budget, limit } from "./pipeline/limit.ts";
import { readBody } from "./pipeline/read-body.ts";
import { type AuditDetail, type Outcome, toResponse } from "./pipeline/result.ts";
import { type AfterCommit, type RunContext, run } from "./pipeline/run.ts";
import { validate } from "./pipeline/validate.ts";
import type { RateLimiter, RateLimitStatus } from "./rate-limit.ts";
import { type AnswerCounter, errorResponse, logResponse } from "./respond.ts";
import type { ApiSpec, OperationSpec } from "./spec.ts";
import type { OperationValidators } from "./validation.ts";

export type OperationId = keyof operations;

export type { AdminAction, AfterCommit, AuditDetail, Authenticate };

/** What the http layer needs: the contract, its validators, the logger, and authentication as a function. */
export interface HttpDeps {
  /** Where an admin change and its audit entry run, in one transaction. */
  db: Executor;
  spec: ApiSpec;
  validators: Map<string, OperationValidators>;
  logger: Logger;
  /** Where each answer is counted. */
  metrics: AnswerCounter;
  /** Where each API request is recorded (src/request-logs/), a moment after its answer. */
  requestLogs: RequestRecorder;
  rateLimiter: RateLimiter;
  /** A client address's budget for requests without a usable key (the RateLimit headers of those answers). */
  clientBudget(client: string): RateLimitStatus | undefined;
  authenticate: Authenticate;
  /** Writes the audit entry of an admin operation that changed something, on the change's own transaction. */
  recordAdminAction(db: Executor, action: AdminAction): Promise<void>;
}
type Op<Id extends OperationId> = operations[Id];

type JsonBodyOf<Id extends OperationId> =
  Op<Id> extends { requestBody: { content: { "application/json": infer B } } }
    ? B
    : Op<Id> extends { requestBody?: { content: { "application/json": infer B } } }
      ? B | undefined
      : undefined;
type ParamsOf<Id extends OperationId, Where extends "query" | "path"> = Op<Id>["parameters"] extends { [K in Where]?: infer P }
  ? NonNullable<P>
  : Record<string, never>;
type SuccessEnvelopeOf<Id extends OperationId> = {
  [S in keyof Op<Id>["responses"]]: S extends 200 | 201 | 202
    ? Op<Id>["responses"][S] extends { content: { "application/json": infer C } }
      ? C
      : never
    : never;
}[keyof Op<Id>["responses"]];
export type SuccessDataOf<Id extends OperationId> = SuccessEnvelopeOf<Id> extends { data: infer D } ? D : never;

export interface OperationInput<Id extends OperationId> {
  operationId: Id;
  request: Request;
  requestId: string;
  /** Set on ApiKey operations. */
  principal: ApiPrincipal | null;
  /** Set on admin operations: who is calling. */
  operator: OperatorPrincipal | null;
  body: JsonBodyOf<Id>;
  rawBody: string;
  query: ParamsOf<Id, "query">;
  params: ParamsOf<Id, "path">;
  /**
   * Where the handler reads and writes: for an operator's change (every admin operation above viewer) the
   * transaction its audit entry is written in, so both commit or neither does; else the database. Every
   * statement of a change must run on it (on the embedded engine, one sent elsewhere waits for ever).
   */
  db: Executor;
  /** Defers a side effect outside the database (key registry, caches, counters) until the change has committed. */
  afterCommit: AfterCommit;
}

export type OperationResult<Id extends OperationId> = Outcome<SuccessDataOf<Id>>;

export type OperationHandler<Id extends OperationId> = (input: OperationInput<Id>) => Promise<OperationResult<Id>>;
/** One handler for every operation openapi.yaml serves (not its webhooks, which the service sends): a missing one fails type checking. */
export type Handlers = { [Id in Exclude<OperationId, SentOperationId>]: OperationHandler<Id> };

type Prepare = (input: OperationInput<OperationId>) => Promise<OperationHandler<OperationId>>;
const preparations = new WeakMap<object, Prepare>();

/**
 * A handler in two parts: `prepare` runs on the database before the change's transaction opens (a
 * provider's answer awaited there holds no transaction, and a provider that reads the database does not
 * wait on it), then `change` runs in the transaction with what it found.
 */
export function preparedHandler<Id extends OperationId, Found>(
  prepare: (input: OperationInput<Id>) => Promise<Found>,
  change: (input: OperationInput<Id>, found: Found) => Promise<OperationResult<Id>>,
): OperationHandler<Id> {
  const handler: OperationHandler<Id> = async (input) => change(input, await prepare(input));
  const twoParts = async (input: OperationInput<Id>): Promise<OperationHandler<Id>> => {
    const found = await prepare(input);
    return (inner) => change(inner, found);
  };
  preparations.set(handler, twoParts as unknown as Prepare);
  return handler;
}

/** The principal of an ApiKey operation (the dispatcher guarantees it is there). */
export function principalOf(input: { principal: ApiPrincipal | null }): ApiPrincipal {
  if (!input.principal) throw new AppError("UNAUTHENTICATED", "API key required");
  return input.principal;
}

/** The operator of an admin operation (the dispatcher guarantees it is there). */
export function operatorOf(input: { operator: OperatorPrincipal | null }): OperatorPrincipal {
  if (!input.operator) throw new AppError("UNAUTHENTICATED", "Operator token required");
  return input.operator;
}

/** One request through the steps, in order: authenticate, authorize, limit, read body, validate, run, audit. */
async function runOperation<Id extends OperationId>(
  deps: HttpDeps,
  op: OperationSpec,
  handler: OperationHandler<Id>,
  request: Request,
  pathParams: Record<string, string>,
  recorded: boolean,
): Promise<Response> {
  const context = contextOf(request);
  context.operationId = op.operationId;
  let response: Response;
  const budget: Budget = { client: clientOf(request), keyed: false };
  try {
    const principal = await authenticate(deps, op, request);
    authorize(op, principal);
    await limit(deps, principal, budget);
    const { body, raw } = await readBody(op, request);
    const { query, params } = validate(deps, op, request, pathParams, body);
    const operator = isOperator(principal) ? principal : null;
    // An operator's change commits with its audit entry, in one transaction.
    const commitAudit = auditsChanges(op, operator)
      ? (tx: Executor, result: OperationResult<Id>) =>
          audit(deps, tx, adminActionOf(op, { operator, requestId: context.id, input: { body, params }, result }))
      : null;
    const inputOn = ({ db, afterCommit }: RunContext): OperationInput<Id> => ({
      operationId: op.operationId as Id,
      request,
      requestId: context.id,
      principal: isOperator(principal) ? null : principal,
      operator,
      body: body as JsonBodyOf<Id>,
      rawBody: raw,
      query: query as ParamsOf<Id, "query">,
      params: params as ParamsOf<Id, "path">,
      db,
      afterCommit,
    });
    const prepare = preparations.get(handler) as ((input: OperationInput<Id>) => Promise<OperationHandler<Id>>) | undefined;
    const result = await run(
      deps,
      commitAudit,
      (on) => handler(inputOn(on)),
      prepare &&
        (async (on) => {
          const change = await prepare(inputOn(on));
          return (inner) => change(inputOn(inner));
        }),
    );
    response = toResponse(request, result);
  } catch (error) {
    response = errorResponse(request, error, deps.logger);
  }
  if (op.path.startsWith("/api/")) addRateLimitHeaders(deps, response, budget);
  logResponse(deps, request, response, op.path, recorded);
  return response;
}

/** The live tails of the request log: recording them would record the tail's own polling. */
const tails = new Set<string>(["streamRequestLogs", "adminStreamRequestLogs"] satisfies OperationId[]);

/**
 * Whether an operation's requests go to the request log: those of the client API, the provider callbacks and
 * the admin API, but the live tails; not health, readiness, metrics, the contract and its reference pages.
 */
export function recordsRequests(op: OperationSpec): boolean {
  return /^\/(api|admin|callbacks)\//.test(op.path) && !tails.has(op.operationId);
}

/** One Elysia instance serving every operation of openapi.yaml. */
export function operationRoutes(deps: HttpDeps, handlers: Handlers): Elysia {
  const app = new Elysia({ name: "operations" });
  for (const [operationId, handler] of Object.entries(handlers) as [OperationId, OperationHandler<OperationId>][]) {
    const op = deps.spec.byId.get(operationId);
    if (!op) throw new Error(`Handler for unknown operation ${operationId}`);
    const recorded = recordsRequests(op);
    app.route(
      op.method,
      op.routePath,
      ({ request, params }) => runOperation(deps, op, handler, request, (params ?? {}) as Record<string, string>, recorded),
      {
        parse: "none",
      },
    );
  }
  return app;
}
