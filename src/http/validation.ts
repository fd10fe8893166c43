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

/** Only the plain 8-4-4-4-12 form: ajv-formats also takes `urn:uuid:…`, which PostgreSQL's uuid type refuses. */
const plainUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function newAjv(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: coerce, useDefaults: false, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat("uuid", plainUuid);
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

const compiled = new WeakMap<ApiSpec, Map<string, OperationValidators>>();

/** Every operation's request validators, compiled from openapi.yaml once per process (per loaded spec). */
export function compileValidators(spec: ApiSpec): Map<string, OperationValidators> {
  let validators = compiled.get(spec);
  if (!validators) {
    validators = compileEvery(spec);
    compiled.set(spec, validators);
  }
  return validators;
}

function compileEvery(spec: ApiSpec): Map<string, OperationValidators> {
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

/** Checks a value against one named schema, then for text PostgreSQL cannot store: the problems, none when valid. */
export type ValueCheck = (value: unknown) => FieldError[];

/** The check of one named schema of the document, compiled once (for bodies validated inside a handler). */
export function componentCheck(spec: ApiSpec, name: string): ValueCheck {
  const validate = compileComponent(spec, name);
  return (value) => (validate(value) ? unstorableText(value) : toFieldErrors(validate.errors, { value }));
}

/**
 * A field's name as the contract spells it: properties dotted, array items by index
 * (`orders[0].service`). `root` is the validated value, so an index is told from an object key "0".
 */
function joinField(prefix: string, instancePath: string, child: string | undefined, root: unknown): string {
  const parts = instancePath
    .split("/")
    .filter(Boolean)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
  let path = prefix;
  let current = root;
  for (const part of parts) {
    path = Array.isArray(current) ? `${path || "body"}[${part}]` : path ? `${path}.${part}` : part;
    current = current && typeof current === "object" ? (current as Record<string, unknown>)[part] : undefined;
  }
  if (child !== undefined) path = path ? `${path}.${child}` : child;
  return path;
}

/** `a string`, `an object`, `an array or null`: Ajv's type names with their article. */
function typeNames(type: unknown): string {
  return String(type)
    .split(",")
    .map((name) =>
      name === "integer" ? "a whole number" : name === "null" ? "null" : `${/^[aeiou]/.test(name) ? "an" : "a"} ${name}`,
    )
    .join(" or ");
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
    case "propertyNames":
      return { message: `has a key that is not allowed: ${String(params.propertyName).slice(0, 60)}` };
    case "type":
      return { message: `must be ${typeNames(params.type)}` };
    default:
      return { message: error.message ?? "is invalid" };
  }
}

/** Turns Ajv errors into `[{field, message}]`, one entry per problem; `value` is what was validated. */
export function toFieldErrors(
  errors: ErrorObject[] | null | undefined,
  options: { prefix?: string; fieldName?: (f: string) => string; value?: unknown } = {},
): FieldError[] {
  const { prefix = "", fieldName, value } = options;
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors ?? []) {
    if (error.keyword === "if" || error.keyword === "anyOf" || error.keyword === "oneOf") continue;
    // The inner failure of a key (propertyNames) is reported once, by the propertyNames error that follows it.
    if (error.propertyName !== undefined) continue;
    const { child, message } = describe(error);
    let field = joinField(prefix, error.instancePath, child, value) || "body";
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

const unstorableMessage = "contains a NUL character or an unpaired surrogate, which cannot be stored";

/** How deep a request body may nest arrays and objects (the contract needs a handful of levels). */
export const maxBodyDepth = 64;

/**
 * True when JSON text nests arrays and objects deeper than `limit`. A scan of the text, before parsing
 * and without recursion, so no depth of input can exhaust the stack; brackets inside strings are skipped.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Every string (and object key) PostgreSQL would refuse: a NUL character, or text that is not
 * well-formed Unicode (an unpaired surrogate cannot be encoded as UTF-8 or in jsonb). A `__proto__`
 * key is refused too: JavaScript objects would silently drop it. Walks with its own stack, not by
 * recursion, so no depth of input can exhaust the call stack.
 */
export function unstorableText(value: unknown, field = ""): FieldError[] {
  const problems: FieldError[] = [];
  // Each entry is a value still to walk, or a problem already found, kept in its place in document order.
  const pending: Pending[] = [{ value, field }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if ("problem" in next) {
      problems.push(next.problem);
      continue;
    }
    const current = next.value;
    const at = next.field || "body";
    if (typeof current === "string") {
      if (!isStorable(current)) problems.push({ field: at, message: unstorableMessage });
      continue;
    }
    if (!current || typeof current !== "object") continue;
    const children: Pending[] = [];
    if (Array.isArray(current)) {
      current.forEach((item, index) => {
        children.push({ value: item, field: `${at}[${index}]` });
      });
    } else {
      for (const [key, child] of Object.entries(current)) {
        if (key === "__proto__") children.push({ problem: { field: at, message: "must not have a key named __proto__" } });
        else if (!isStorable(key)) children.push({ problem: { field: at, message: `has a key that ${unstorableMessage}` } });
        else children.push({ value: child, field: next.field ? `${next.field}.${key}` : key });
      }
    }
    // The last pushed is walked first: pushed in reverse, the fields come out in document order.
    for (const child of children.reverse()) pending.push(child);
  }
  return problems;
}

type Pending = { value: unknown; field: string } | { problem: FieldError };

const isStorable = (text: string) => !text.includes("\u0000") && text.isWellFormed();

/** Path parameters in their one canonical spelling: UUIDs lower-cased. */
export function canonicalParams(op: OperationSpec, params: Record<string, string>): Record<string, string> {
  const out = { ...params };
  for (const parameter of op.parameters) {
    const value = out[parameter.name];
    if (parameter.in === "path" && parameter.schema.format === "uuid" && value !== undefined)
      out[parameter.name] = value.toLowerCase();
  }
  return out;
}
