import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { loadSpec, type OperationSpec } from "../../src/http/spec.ts";

const spec = loadSpec();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(spec.document, "openapi");
const compiled = new Map<string, ValidateFunction>();

function validatorFor(pointer: string): ValidateFunction {
  let validate = compiled.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi${pointer}` });
    compiled.set(pointer, validate);
  }
  return validate;
}

/** Operations some test has received a declared success (2xx) from: a 401 or 404 proves little. */
export const exercised = new Set<string>();
export const allOperationIds = spec.operations.map((op) => op.operationId);

function findOperation(method: string, pathname: string): OperationSpec | undefined {
  const candidates = spec.operations.filter((op) => op.method === method && op.pattern.test(pathname));
  // Prefer the most literal template (`/x/verify` over `/x/{id}`).
  return candidates.sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0))[0];
}

export class ContractViolation extends Error {}

/** Throws ContractViolation unless the response is one openapi.yaml declares for this request. */
export function checkResponse(method: string, url: string, status: number, headers: Headers, bodyText: string): void {
  const pathname = new URL(url).pathname;
  const where = `${method} ${pathname} → ${status}`;
  if (!headers.get("x-request-id")) throw new ContractViolation(`${where}: missing X-Request-Id header`);
  const op = findOperation(method, pathname);
  const contentType = (headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
  if (!op) {
    // Unknown routes and wrong methods: the error envelope is all the contract promises.
    const validate = validatorFor("#/components/schemas/ErrorEnvelope");
    if (!validate(JSON.parse(bodyText))) {
      throw new ContractViolation(`${where}: not an error envelope: ${ajv.errorsText(validate.errors)}`);
    }
    return;
  }
  const declared = op.responses[String(status)] ?? op.responses.default;
  if (!declared) {
    throw new ContractViolation(
      `${where}: status not declared for ${op.operationId} (declared: ${Object.keys(op.responses).join(", ")})`,
    );
  }
  if (status === 304 && bodyText !== "") throw new ContractViolation(`${where}: a 304 must have no body`);
  // A declared media type may carry parameters (`text/plain; version=0.0.4`); the type itself must match.
  const declaredTypes = declared.contentTypes.map((type) => type.split(";")[0]?.trim());
  if (declaredTypes.length > 0 && !declaredTypes.includes(contentType)) {
    throw new ContractViolation(`${where}: content-type ${contentType} not declared (${declared.contentTypes.join(", ")})`);
  }
  if (contentType === "application/json") {
    const validate = validatorFor(`${declared.pointer}/content/application~1json/schema`);
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      throw new ContractViolation(`${where}: body is not JSON`);
    }
    if (!validate(body)) {
      throw new ContractViolation(
        `${where}: body breaks ${op.operationId}'s schema: ${ajv.errorsText(validate.errors)}\n${bodyText.slice(0, 2000)}`,
      );
    }
  }
  if (status >= 200 && status < 300) exercised.add(op.operationId);
}

/** fetch that holds every answer to the contract; used by every test client. */
export const contractFetch: typeof fetch = Object.assign(
  async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const response = await fetch(request);
    const text = await response.clone().text();
    checkResponse(request.method, request.url, response.status, response.headers, text);
    return response;
  },
  { preconnect: fetch.preconnect },
);
