import { type FieldError, validationError } from "../../errors.ts";
import type { OperationSpec } from "../spec.ts";
import { canonicalParams, headerFieldName, type OperationValidators, toFieldErrors, unstorableText } from "../validation.ts";

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

/** The request checked against the contract (headers, path, query, body): its query and canonical path parameters, or a 400 naming every field. */
export function validate(
  deps: { validators: Map<string, OperationValidators> },
  op: OperationSpec,
  request: Request,
  params: Record<string, string>,
  body: unknown,
): { query: Record<string, string>; params: Record<string, string> } {
  const validators = deps.validators.get(op.operationId);
  if (!validators) throw new Error(`No validators for ${op.operationId}`);
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
  return { query, params: canonicalParams(op, params) };
}
