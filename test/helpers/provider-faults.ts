import { delay, HttpResponse } from "msw";

/** A broken answer from a mocked provider: the client cannot tell what happened. */
export type ProviderFault =
  | { kind: "timeout"; delayMs?: number }
  | { kind: "server-error"; httpStatus?: number }
  | { kind: "network-error" }
  | { kind: "malformed" };

/** How one provider breaks: its error page and the cut-off JSON it sends. */
export interface FaultLooks {
  errorPage: string;
  defaultErrorStatus: number;
  malformedBody: string;
}

/**
 * The response of a fault. A timeout answers `lateBody` (what the provider did meanwhile) only after the
 * client has given up, or after `delayMs`.
 */
export async function faultResponse(
  fault: ProviderFault,
  request: Request,
  lateBody: Record<string, unknown>,
  looks: FaultLooks,
): Promise<Response> {
  switch (fault.kind) {
    case "timeout": {
      const aborted = new Promise<void>((resolve) => request.signal.addEventListener("abort", () => resolve()));
      await Promise.race([delay(fault.delayMs ?? 10_000), aborted]);
      return HttpResponse.json(lateBody);
    }
    case "server-error":
      return new HttpResponse(looks.errorPage, {
        status: fault.httpStatus ?? looks.defaultErrorStatus,
        headers: { "content-type": "text/html" },
      });
    case "network-error":
      return HttpResponse.error();
    case "malformed":
      return new HttpResponse(looks.malformedBody, { headers: { "content-type": "application/json" } });
  }
}
