import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { FieldError } from "../errors.ts";
import type { ApiSpec, JsonSchema, OperationSpec, ParameterSpec } from "./spec.ts";

const documentId = "openapi";

export interface OperationValidators {
  body: ValidateFunction | null;
  query: ValidateFunction;
  params: ValidateFunction;
  headers: ValidateFunction;
}

/** Rewrites local `#/...` references so a fragment compiles against the whole document. */
function anchorRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(anchorRefs);
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] = key === "$ref" && typeof child === "string" && child.startsWith("#") ? `${documentId}${child}` : anchorRefs(child);
  }
  return out;
}

function newAjv(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: coerce, useDefaults: false, validateFormats: true });
  addFormats(ajv);
  ajv.addKeyword({ keyword: "example" });
  return ajv;
}

function parameterObjectSchema(parameters: ParameterSpec[], location: ParameterSpec["in"]): JsonSchema {
  const own = parameters.filter((p) => p.in === location);
  const key = (name: string) => (location === "header" ? name.toLowerCase() : name);
  return anchorRefs({
    type: "object",
    properties: Object.fromEntries(own.map((p) => [key(p.name), p.schema])),
    required: own.filter((p) => p.required).map((p) => key(p.name)),
    additionalProperties: location === "header",
  }) as JsonSchema;
}

/** Compiles every operation's request validators from openapi.yaml, once, at start-up. */
export function compileValidators(spec: ApiSpec): Map<string, OperationValidators> {
  const bodyAjv = newAjv(false);
  const paramAjv = newAjv(true);
  bodyAjv.addSchema(spec.document, documentId);
  paramAjv.addSchema(spec.document, documentId);
  const validators = new Map<string, OperationValidators>();
  for (const op of spec.operations) {
    validators.set(op.operationId, {
      body: op.bodyPointer ? bodyAjv.compile({ $ref: `${documentId}${op.bodyPointer}` }) : null,
      query: paramAjv.compile(parameterObjectSchema(op.parameters, "query")),
      params: paramAjv.compile(parameterObjectSchema(op.parameters, "path")),
      headers: paramAjv.compile(parameterObjectSchema(op.parameters, "header")),
    });
  }
  return validators;
}

/** A validator for one named schema of the document (e.g. `ProviderCallback`), compiled once at start-up. */
export function compileComponent(spec: ApiSpec, name: string): ValidateFunction {
  const ajv = newAjv(false);
  ajv.addSchema(spec.document, documentId);
  return ajv.compile({ $ref: `${documentId}#/components/schemas/${name}` });
}

function joinField(prefix: string, instancePath: string, child?: string): string {
  const parts = instancePath
    .split("/")
    .filter(Boolean)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
  if (child !== undefined) parts.push(child);
  const path = parts.join(".");
  return prefix && path ? `${prefix}.${path}` : prefix || path;
}

function describe(error: ErrorObject): { child?: string; message: string } {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return { child: String(params.missingProperty), message: "is required" };
    case "additionalProperties":
      return { child: String(params.additionalProperty), message: "is not an allowed field" };
    case "enum":
      return { message: `must be one of: ${(params.allowedValues as unknown[]).join(", ")}` };
    case "type":
      return { message: `must be ${params.type === "integer" ? "a whole number" : `a ${params.type}`}` };
    default:
      return { message: error.message ?? "is invalid" };
  }
}

/** Turns Ajv errors into `[{field, message}]`, one entry per problem. */
export function toFieldErrors(
  errors: ErrorObject[] | null | undefined,
  prefix = "",
  fieldName?: (f: string) => string,
): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors ?? []) {
    if (error.keyword === "if" || error.keyword === "anyOf" || error.keyword === "oneOf") continue;
    const { child, message } = describe(error);
    let field = joinField(prefix, error.instancePath, child) || "body";
    if (fieldName) field = fieldName(field);
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message });
  }
  return out;
}

export function headerFieldName(op: OperationSpec): (field: string) => string {
  const names = new Map(op.parameters.filter((p) => p.in === "header").map((p) => [p.name.toLowerCase(), p.name]));
  return (field) => names.get(field) ?? field;
}
