import { unwrap } from "../../client.ts";
import type { Context } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { io } from "../../io.ts";

export interface TemporaryEndpoint {
  id: string;
  url: string;
  secret: string;
}

const requestTimeoutMs = 10_000;

export async function createTemporaryEndpoint(ctx: Context, url: string): Promise<TemporaryEndpoint> {
  const body = { url, description: "vendctl webhooks listen (temporary: removed when listen stops)" };
  const created = await unwrap(
    ctx.clients.api().POST("/api/v1/webhook-endpoints", { body, signal: AbortSignal.timeout(requestTimeoutMs) }),
  ).catch((error: unknown) => {
    if (error instanceof ApiError && error.problems.some((p) => p.field === "url")) {
      io().stderr.write(
        `The server does not deliver to ${url} (WEBHOOK_ALLOW_PRIVATE_URLS off?): pass --endpoint-url with an address it can reach, such as a tunnel, or --secret of an endpoint you added.\n`,
      );
    }
    throw error;
  });
  return { id: created.id, url: created.url, secret: created.secret };
}

/** Removes the endpoint; when that fails, says how to remove it by hand and fails too. */
export async function removeTemporaryEndpoint(ctx: Context, endpoint: TemporaryEndpoint): Promise<void> {
  try {
    await unwrap(
      ctx.clients.api().DELETE("/api/v1/webhook-endpoints/{id}", {
        params: { path: { id: endpoint.id } },
        signal: AbortSignal.timeout(requestTimeoutMs),
      }),
    );
  } catch (error) {
    io().stderr.write(
      `could not remove the temporary endpoint ${endpoint.id}; remove it with: vendctl webhooks remove ${endpoint.id} --yes\n`,
    );
    throw error;
  }
  await ctx.printer.note(`Removed the temporary endpoint ${endpoint.id}`);
}
