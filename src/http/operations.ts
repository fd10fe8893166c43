import { Elysia } from "elysia";
import type { SentOperationId } from "../../generated/constants.ts";
import type { operations } from "../../generated/openapi-types.ts";
import { AppError, type FieldError, successEnvelope, validationError } from "../errors.ts";
import {
  type AdminAction,
  type ApiPrincipal,
  isOperator,
  type OperatorPrincipal,
  type Principal,
  roleAllows,
} from "../lib/scope.ts";
import type { Logger } from "../logger.ts";
import { contextOf } from "./context.ts";
import { type RateLimiter, type RateLimitStatus, rateLimitedError, rateLimitHeaders } from "./rate-limit.ts";
import { type AnswerCounter, errorResponse, jsonResponse, logResponse } from "./respond.ts";
import type { ApiSpec, OperationSpec } from "./spec.ts";
import {
  canonicalParams,
  headerFieldName,
  maxBodyDepth,
  nestsDeeperThan,
  type OperationValidators,
  toFieldErrors,
  unstorableText,
} from "./validation.ts";

export type OperationId = keyof operations;

/**
 * Checks a request's credentials for an operation's security scheme, given the client's address (for
 * the failed-authentication budget): the principal for an ApiKey operation, the operator for an admin one,
 * null for the others, or an AppError. Provider operations only spend from the budget; they authenticate
 * inside their handler.
 */
export type Authenticate = (
  security: OperationSpec["security"],
  authorization: string | null,
  client: string,
  /** The request came straight from this machine (a loopback peer, nothing forwarded). */
  local?: boolean,
) => Promise<Principal>;

export type { AdminAction };

/** What the http layer needs: the contract, its validators, the logger, and authentication as a function. */
export interface HttpDeps {
  spec: ApiSpec;
  validators: Map<string, OperationValidators>;
  logger: Logger;
  /** Where each answer is counted. */
  metrics: AnswerCounter;
  rateLimiter: RateLimiter;
  /** A client address's budget for requests without a usable key (the RateLimit headers of those answers). */
  clientBudget(client: string): RateLimitStatus | undefined;
  authenticate: Authenticate;
  /** Writes the audit entry of an admin operation that changed something. */
  recordAdminAction(action: AdminAction): Promise<void>;
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
}

/**
 * What an admin handler tells the audit trail beyond its answer: the target when the path names none (a
 * created resource), the state before the change, the note.
 */
export interface AuditDetail {
  target?: { type: string; id: string };
  before?: unknown;
  note?: string | null;
}

export type OperationResult<Id extends OperationId> =
  | { status: number; data: SuccessDataOf<Id>; message?: string; headers?: Record<string, string>; audit?: AuditDetail }
  | { status: number; raw: string | Blob; contentType: string; headers?: Record<string, string> }
  /** No body at all (`304 Not Modified`). */
  | { status: number; empty: true; headers?: Record<string, string> };

export type OperationHandler<Id extends OperationId> = (input: OperationInput<Id>) => Promise<OperationResult<Id>>;
/** One handler for every operation openapi.yaml serves (not its webhooks, which the service sends): a missing one fails type checking. */
export type Handlers = { [Id in Exclude<OperationId, SentOperationId>]: OperationHandler<Id> };

export const maxBodyBytes = 64 * 1024;
const drainBytes = 4 * 1024 * 1024;

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

/** Which budget an answer's RateLimit headers show: the key's once it authenticated, else the client address's. */
interface Budget {
  client: string;
  key?: RateLimitStatus;
  keyed: boolean;
}

// Requests that never went through the server (in-process `app.handle`) share one budget.
const clientOf = (request: Request) => contextOf(request).ip ?? "in-process";

async function authenticate(deps: HttpDeps, op: OperationSpec, request: Request, budget: Budget): Promise<Principal> {
  const client = budget.client;
  const principal = await deps.authenticate(op.security, request.headers.get("authorization"), client, contextOf(request).local);
  if (!principal) return null;
  if (isOperator(principal)) {
    contextOf(request).operator = principal.name;
    if (!roleAllows(principal.role, op.requiredRole))
      throw new AppError(
        "FORBIDDEN",
        `${op.operationId} needs the ${op.requiredRole} role; ${principal.name} is ${principal.role}`,
      );
    return principal;
  }
  contextOf(request).accountId = principal.accountId;
  budget.keyed = true;
  if (!deps.rateLimiter.enabled) return principal;
  const { allowed, status } = await deps.rateLimiter.acquire(principal.keyId);
  budget.key = status;
  if (!allowed)
    throw rateLimitedError(
      status,
      `Rate limit of ${status.limit} requests per ${status.windowSeconds} seconds exceeded for this key`,
    );
  return principal;
}

const tooLarge = (limit: number) => new AppError("PAYLOAD_TOO_LARGE", `Request body exceeds ${limit} bytes`);

/**
 * Reads at most `limit` bytes of the body (`maxBodyBytes`, or the operation's own `x-max-body-bytes`) and
 * stops there: the transport accepts any size (so its own bare 413 never answers), and this is the only
 * place a body is buffered.
 */
async function readCappedText(request: Request, limit: number): Promise<string> {
  const declaredLength = Number(request.headers.get("content-length") ?? "0");
  if (declaredLength > limit) throw tooLarge(limit);
  const reader = request.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    size += chunk.value.byteLength;
    if (size > limit) {
      await discardRest(reader, size);
      throw tooLarge(limit);
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads and drops what is left of an oversized body (up to a few MiB, for at most two seconds), so the
 * client has finished sending when the 413 goes out: closing a socket with unread data resets it, and
 * the client would lose the answer. Past that bound the connection is closed and the rest never read.
 */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, readSoFar: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeUp = new Promise<"time">((resolve) => {
    timer = setTimeout(() => resolve("time"), 2000);
  });
  let size = readSoFar;
  try {
    while (size <= drainBytes) {
      const chunk = await Promise.race([reader.read(), timeUp]);
      if (chunk === "time") break;
      if (chunk.done) return;
      size += chunk.value.byteLength;
    }
  } finally {
    clearTimeout(timer);
  }
  await reader.cancel().catch(() => {});
}

async function readJsonBody(op: OperationSpec, request: Request): Promise<{ body: unknown; raw: string }> {
  if (!op.bodyPointer) return { body: undefined, raw: "" };
  const raw = await readCappedText(request, op.maxBodyBytes ?? maxBodyBytes);
  if (raw.trim() === "") {
    if (op.bodyRequired) throw validationError([{ field: "body", message: "is required" }], "A JSON request body is required");
    return { body: undefined, raw };
  }
  const contentType = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (contentType !== "application/json" && !contentType.endsWith("+json")) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Request body must be JSON with Content-Type: application/json");
  }
  // Refused before parsing, so nothing that walks the value (validation, the text check) meets it.
  if (nestsDeeperThan(raw, maxBodyDepth))
    throw validationError(
      [{ field: "body", message: `nests arrays and objects more than ${maxBodyDepth} levels deep` }],
      "JSON request body is nested too deeply",
    );
  try {
    return { body: JSON.parse(raw), raw };
  } catch {
    // Includes a RangeError from the parser itself on input nested beyond what it can take.
    throw validationError([{ field: "body", message: "is not valid JSON" }], "Malformed JSON in request body");
  }
}

function queryObject(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of new URL(request.url).searchParams) out[key] = value;
  return out;
}

function headerObject(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  request.headers.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

async function validateInput(deps: HttpDeps, op: OperationSpec, request: Request, params: Record<string, string>) {
  const validators = deps.validators.get(op.operationId);
  if (!validators) throw new Error(`No validators for ${op.operationId}`);
  const { body, raw } = await readJsonBody(op, request);
  const query = queryObject(request);
  const headers = headerObject(request);
  const errors: FieldError[] = [];
  if (!validators.headers(headers)) errors.push(...toFieldErrors(validators.headers.errors, { fieldName: headerFieldName(op) }));
  if (!validators.params(params)) errors.push(...toFieldErrors(validators.params.errors));
  if (!validators.query(query)) errors.push(...toFieldErrors(validators.query.errors));
  // Provider callbacks authenticate inside the handler (per-provider token and signature) and validate
  // their body after that, so an unauthenticated caller learns nothing and every callback is stored.
  const validateBody = op.security !== "provider";
  if (validateBody && body !== undefined && validators.body && !validators.body(body))
    errors.push(...toFieldErrors(validators.body.errors, { value: body }));
  // Text PostgreSQL cannot store fails here, naming the field, before anything reaches the database.
  errors.push(...unstorableText(params), ...unstorableText(query), ...(validateBody ? unstorableText(body) : []));
  if (errors.length > 0) throw validationError(errors);
  return { body, raw, query, params: canonicalParams(op, params) };
}

function toResponse<Id extends OperationId>(request: Request, result: OperationResult<Id>): Response {
  if ("empty" in result) {
    return new Response(null, { status: result.status, headers: { "x-request-id": contextOf(request).id, ...result.headers } });
  }
  if ("raw" in result) {
    return new Response(result.raw, {
      status: result.status,
      headers: { "content-type": result.contentType, "x-request-id": contextOf(request).id, ...result.headers },
    });
  }
  return jsonResponse(request, result.status, JSON.stringify(successEnvelope(result.data, result.message)), result.headers);
}

/** The kind of thing an admin path acts on: the collection before its first parameter, singular (`/admin/v1/keys/{key_id}` → api_key). */
function targetTypeOf(op: OperationSpec): string {
  const segments = op.path.split("/");
  const param = segments.findIndex((segment) => segment.startsWith("{"));
  const collection = segments[param > 0 ? param - 1 : segments.length - 1] ?? "";
  return collection === "keys" ? "api_key" : collection.replace(/s$/, "");
}

/**
 * Writes the audit entry of a successful admin change (a replayed answer changed nothing). The change has
 * committed; an entry that cannot be written is logged at error, and the answer still goes out.
 */
async function auditChange<Id extends OperationId>(
  deps: HttpDeps,
  op: OperationSpec,
  run: {
    operator: OperatorPrincipal;
    requestId: string;
    input: { body: unknown; params: Record<string, string> };
    result: OperationResult<Id>;
  },
): Promise<void> {
  const { result, input } = run;
  if (result.status >= 300 || result.headers?.["idempotent-replayed"] === "true") return;
  const detail = "data" in result ? result.audit : undefined;
  const pathTarget = Object.values(input.params)[0];
  const target = detail?.target ?? { type: targetTypeOf(op), id: pathTarget ?? "" };
  const body = input.body as { note?: unknown; reason?: unknown } | undefined;
  const bodyNote = body?.note ?? body?.reason;
  const action: AdminAction = {
    operator: run.operator,
    action: op.operationId,
    target,
    requestId: run.requestId,
    before: detail?.before,
    after: "data" in result ? result.data : undefined,
    note: detail?.note ?? (typeof bodyNote === "string" ? bodyNote : null),
  };
  try {
    await deps.recordAdminAction(action);
  } catch (error) {
    deps.logger.error(
      { err: error instanceof Error ? error.message : String(error), action: action.action, target, operator: run.operator.name },
      "audit entry could not be written",
    );
  }
}

/** Every answer of the client API says where its budget stands: the key's, or for a request without a usable key, the address's. */
function addRateLimitHeaders(deps: HttpDeps, response: Response, budget: Budget): void {
  const status = budget.keyed ? budget.key : deps.clientBudget(budget.client);
  if (!status) return;
  for (const [name, value] of Object.entries(rateLimitHeaders(status))) response.headers.set(name, value);
}

async function runOperation<Id extends OperationId>(
  deps: HttpDeps,
  op: OperationSpec,
  handler: OperationHandler<Id>,
  request: Request,
  params: Record<string, string>,
): Promise<Response> {
  const context = contextOf(request);
  context.operationId = op.operationId;
  let response: Response;
  const budget: Budget = { client: clientOf(request), keyed: false };
  try {
    const principal = await authenticate(deps, op, request, budget);
    const input = await validateInput(deps, op, request, params);
    const operator = isOperator(principal) ? principal : null;
    const result = await handler({
      operationId: op.operationId as Id,
      request,
      requestId: context.id,
      principal: isOperator(principal) ? null : principal,
      operator,
      body: input.body as JsonBodyOf<Id>,
      rawBody: input.raw,
      query: input.query as ParamsOf<Id, "query">,
      params: input.params as ParamsOf<Id, "path">,
    });
    if (operator && op.requiredRole !== "viewer") await auditChange(deps, op, { operator, requestId: context.id, input, result });
    response = toResponse(request, result);
  } catch (error) {
    response = errorResponse(request, error, deps.logger);
  }
  if (op.path.startsWith("/api/")) addRateLimitHeaders(deps, response, budget);
  logResponse(deps, request, response, op.path);
  return response;
}

/** One Elysia instance serving every operation of openapi.yaml. */
export function operationRoutes(deps: HttpDeps, handlers: Handlers): Elysia {
  const app = new Elysia({ name: "operations" });
  for (const [operationId, handler] of Object.entries(handlers) as [OperationId, OperationHandler<OperationId>][]) {
    const op = deps.spec.byId.get(operationId);
    if (!op) throw new Error(`Handler for unknown operation ${operationId}`);
    app.route(
      op.method,
      op.routePath,
      ({ request, params }) => runOperation(deps, op, handler, request, (params ?? {}) as Record<string, string>),
      {
        parse: "none",
      },
    );
  }
  return app;
}
