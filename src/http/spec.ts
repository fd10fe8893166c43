import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { type OperatorRole, operatorRoles } from "../../generated/constants.ts";
import specFile from "../../openapi.yaml" with { type: "file" };

/** The contract's path: the repository's file, or the copy `bun build --compile` embeds in dist/vend. */
export const specPath: string = specFile;

export type JsonSchema = Record<string, unknown>;
export type Security = "apiKey" | "admin" | "provider" | "none";

export interface ParameterSpec {
  name: string;
  in: "query" | "path" | "header";
  required: boolean;
  schema: JsonSchema;
}

export interface OperationSpec {
  operationId: string;
  method: string;
  /** OpenAPI template, e.g. `/api/v1/transactions/{reference}`. */
  path: string;
  /** The same path in Elysia's syntax, e.g. `/api/v1/transactions/:reference`. */
  routePath: string;
  pattern: RegExp;
  security: Security;
  /** Admin operations: the least operator role allowed (`x-required-role`); admin when the spec names none. */
  requiredRole: OperatorRole;
  parameters: ParameterSpec[];
  /** JSON pointer of the request body schema inside the document, when there is one. */
  bodyPointer: string | null;
  bodyRequired: boolean;
  /** The operation's own request body limit in bytes (`x-max-body-bytes`), when it has one. */
  maxBodyBytes: number | null;
  responses: Record<string, { contentTypes: string[]; pointer: string }>;
}

export interface ApiSpec {
  document: Record<string, unknown>;
  text: string;
  operations: OperationSpec[];
  byId: Map<string, OperationSpec>;
}

const methods = ["get", "post", "put", "patch", "delete"] as const;
const securityByScheme: Record<string, Security> = {
  ApiKey: "apiKey",
  AdminToken: "admin",
  ProviderToken: "provider",
};

function requiredRoleOf(operation: Record<string, unknown>): OperatorRole {
  const role = operation["x-required-role"];
  return (operatorRoles as readonly unknown[]).includes(role) ? (role as OperatorRole) : "admin";
}

function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

export function resolveRef<T>(document: Record<string, unknown>, value: T): T {
  let current: unknown = value;
  while (current && typeof current === "object" && "$ref" in current) {
    const ref = String((current as { $ref: string }).$ref);
    current = ref
      .slice(2)
      .split("/")
      .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document);
  }
  return current as T;
}

function securityOf(document: Record<string, unknown>, operation: Record<string, unknown>): Security {
  const requirements = (operation.security ?? document.security ?? []) as Record<string, unknown>[];
  const first = requirements[0];
  if (!first) return "none";
  const scheme = Object.keys(first)[0] ?? "";
  return securityByScheme[scheme] ?? "none";
}

export function templateToPattern(path: string): RegExp {
  const source = path
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  // The router takes a trailing slash as the same operation; so does everything that matches paths.
  return new RegExp(`^${source}/?$`);
}

const loaded = new Map<string, ApiSpec>();

/**
 * openapi.yaml, read and indexed once per process (it does not change while the process runs): every server a
 * process builds (a test file builds several) shares it, and the validators compiled from it.
 */
export function loadSpec(path = specPath): ApiSpec {
  let spec = loaded.get(path);
  if (!spec) {
    spec = readSpec(path);
    loaded.set(path, spec);
  }
  return spec;
}

/** Reads openapi.yaml and indexes its operations. */
function readSpec(path: string): ApiSpec {
  const text = readFileSync(path, "utf8");
  const document = parse(text) as Record<string, unknown>;
  const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
  const operations: OperationSpec[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of methods) {
      const operation = item[method] as Record<string, unknown> | undefined;
      if (!operation) continue;
      const pointerBase = `#/paths/${escapePointer(path)}/${method}`;
      const rawParams = [...((item.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])];
      const parameters = rawParams.map((p) => {
        const param = resolveRef(document, p) as Record<string, unknown>;
        return {
          name: String(param.name),
          in: param.in as ParameterSpec["in"],
          required: Boolean(param.required),
          schema: (param.schema ?? {}) as JsonSchema,
        };
      });
      const body = resolveRef(document, operation.requestBody) as Record<string, unknown> | undefined;
      const bodyRef = (operation.requestBody as { $ref?: unknown } | undefined)?.$ref;
      const bodyBase = typeof bodyRef === "string" ? bodyRef : `${pointerBase}/requestBody`;
      const bodyContent = body?.content as Record<string, unknown> | undefined;
      const responses: OperationSpec["responses"] = {};
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, unknown>)) {
        const resolved = resolveRef(document, response) as Record<string, unknown>;
        const content = (resolved.content ?? {}) as Record<string, unknown>;
        const ref = (response as Record<string, unknown>).$ref;
        const pointer = typeof ref === "string" ? ref : `${pointerBase}/responses/${status}`;
        responses[status] = { contentTypes: Object.keys(content), pointer };
      }
      operations.push({
        operationId: String(operation.operationId),
        method: method.toUpperCase(),
        path,
        routePath: path.replace(/\{([^}]+)\}/g, ":$1"),
        pattern: templateToPattern(path),
        security: securityOf(document, operation),
        requiredRole: requiredRoleOf(operation),
        parameters,
        bodyPointer: bodyContent?.["application/json"] ? `${bodyBase}/content/application~1json/schema` : null,
        bodyRequired: Boolean(body?.required),
        maxBodyBytes: typeof operation["x-max-body-bytes"] === "number" ? operation["x-max-body-bytes"] : null,
        responses,
      });
    }
  }
  return { document, text, operations, byId: new Map(operations.map((op) => [op.operationId, op])) };
}

/** The operations whose path template matches a concrete path, whatever their method. */
export function operationsForPath(spec: ApiSpec, pathname: string): OperationSpec[] {
  return spec.operations.filter((op) => op.pattern.test(pathname));
}
