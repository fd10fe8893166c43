/** The headers a delivery is forwarded with: its signature headers and content type. */
function forwardedHeaders(request: Request): Headers {
  const headers = new Headers();
  request.headers.forEach((value, key) => {
    if (key.startsWith("webhook-") || key === "content-type" || key === "user-agent") headers.set(key, value);
  });
  return headers;
}

export type ForwardResult = { url: string; status: number; answer: Response } | { url: string; error: string };

/** How long a forward target may take to answer before the delivery is reported as failed. */
const forwardTimeoutMs = 30_000;

/** Passes one delivery on to `url` unchanged (method, body, signature headers); never throws. */
export async function forwardDelivery(url: string, request: Request, raw: string): Promise<ForwardResult> {
  try {
    const answer = await fetch(url, {
      method: request.method,
      headers: forwardedHeaders(request),
      body: raw,
      redirect: "manual",
      signal: AbortSignal.timeout(forwardTimeoutMs),
    });
    const body = await answer.arrayBuffer();
    const contentType = answer.headers.get("content-type");
    const headers = contentType ? { "content-type": contentType } : undefined;
    return { url, status: answer.status, answer: new Response(body, { status: answer.status, headers }) };
  } catch (error) {
    return { url, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The forward's outcome beside an event line: `→ 202`, or why it failed. */
export function describeForward(result: ForwardResult): string {
  return "status" in result ? `→ ${result.status}` : `→ forward failed: ${result.error}`;
}

/** The forward's outcome in a JSON line. */
export function forwardJson(result: ForwardResult): { url: string; status?: number; error?: string } {
  return "status" in result ? { url: result.url, status: result.status } : { url: result.url, error: result.error };
}
