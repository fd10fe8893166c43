import type { Principal } from "../../lib/scope.ts";
import { bearerOf } from "../../lib/secrets.ts";
import { contextOf } from "../context.ts";
import type { OperationSpec } from "../spec.ts";

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

// Requests that never went through the server (in-process `app.handle`) share one budget.
export const clientOf = (request: Request) => contextOf(request).ip ?? "in-process";

/** A recognised key's display prefix (`rg_test_AbCd`, as stored with the key), read from its Authorization header. */
function keyPrefixOf(authorization: string | null, mode: string): string | undefined {
  const key = bearerOf(authorization);
  return key?.slice(0, `rg_${mode}_`.length + 4);
}

/** Who is calling, by the operation's security scheme; the request's context records the operator or account for the logs. */
export async function authenticate(
  deps: { authenticate: Authenticate },
  op: OperationSpec,
  request: Request,
): Promise<Principal> {
  const context = contextOf(request);
  const authorization = request.headers.get("authorization");
  const principal = await deps.authenticate(op.security, authorization, clientOf(request), context.local);
  if (!principal) return null;
  if ("role" in principal) context.operator = principal.name;
  else {
    context.accountId = principal.accountId;
    context.mode = principal.mode;
    context.keyId = principal.keyId;
    context.keyPrefix = keyPrefixOf(authorization, principal.mode);
  }
  return principal;
}
