import { Command, Option } from "commander";
import { Webhook } from "standardwebhooks";
import { actionCommand, type Context, integerOption, requireTestKey } from "../../context.ts";
import { UsageError } from "../../errors.ts";
import { io } from "../../io.ts";
import { warnShownOnce } from "../../shown-once.ts";
import { createTemporaryEndpoint, removeTemporaryEndpoint, type TemporaryEndpoint } from "./listen-endpoint.ts";
import { describeForward, type ForwardResult, forwardDelivery, forwardJson } from "./listen-forward.ts";

interface ListenFlags {
  port: number;
  host: string;
  secret?: string;
  forwardTo?: string;
  forward?: string;
  endpointUrl?: string;
}

const liveKeyRefusal =
  "webhooks listen creates a temporary test-mode endpoint: use a test key (rg_test_…), or pass --secret of an endpoint you added";

type Verdict = "valid" | "INVALID" | "not checked";

function verdictOf(verifier: Webhook | undefined, raw: string, headers: Record<string, string>): Verdict {
  if (!verifier) return "not checked";
  try {
    verifier.verify(raw, headers);
    return "valid";
  } catch {
    return "INVALID";
  }
}

function summary(raw: string): { type?: string; reference?: string; status?: string; event?: unknown } {
  try {
    const event: unknown = JSON.parse(raw);
    if (typeof event !== "object" || event === null) return { event };
    const e = event as { type?: string; data?: { reference?: string; status?: string } };
    return { type: e.type, reference: e.data?.reference, status: e.data?.status, event };
  } catch {
    return {};
  }
}

function verifierFor(secret: string): Webhook {
  try {
    return new Webhook(secret);
  } catch {
    throw new UsageError("--secret must be an endpoint signing secret (whsec_…)");
  }
}

/**
 * Resolves on the first SIGINT, SIGTERM or SIGHUP. The handlers stay installed until the process ends: a
 * second signal (Ctrl-C reaches both the `vendctl` wrapper and this process, and the wrapper passes it on)
 * must not kill the listener while it removes its endpoint.
 */
function untilStopped(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => resolve(signal));
  });
}

async function printDelivery(
  ctx: Context,
  raw: string,
  headers: Record<string, string>,
  verdict: Verdict,
  forwarded?: ForwardResult,
) {
  const { type, reference, status, event } = summary(raw);
  const id = headers["webhook-id"] ?? "-";
  const at = new Date().toISOString();
  if (ctx.printer.format === "table") {
    const what = [type ?? "(not an event)", reference, status].filter(Boolean).join("  ");
    const forward = forwarded ? `  ${describeForward(forwarded)}` : "";
    return ctx.printer.write(`${at}  ${id}  ${what}  signature ${verdict}${forward}\n`);
  }
  const line = {
    received_at: at,
    webhook_id: id,
    signature: verdict,
    event: event ?? raw,
    ...(forwarded ? { forward: forwardJson(forwarded) } : {}),
  };
  return ctx.printer.write(`${JSON.stringify(line)}\n`);
}

async function announceEndpoint(ctx: Context, endpoint: TemporaryEndpoint): Promise<void> {
  await ctx.printer.note(`Created a temporary test-mode webhook endpoint ${endpoint.id} for ${endpoint.url}`);
  await ctx.printer.note(`Webhook signing secret: ${endpoint.secret}`);
  await warnShownOnce("This secret is temporary: the endpoint and its secret are removed when listen stops.");
}

export const webhooksListenCommand = (): Command =>
  actionCommand(
    new Command("listen")
      .description(
        "Run a local webhook receiver, like `stripe listen`. Without --secret it registers itself as a temporary " +
          "test-mode endpoint (removed when it stops) and verifies each delivery with that endpoint's secret; with " +
          "--secret it verifies with yours. Prints each event, optionally forwards it to your app. Ctrl-C stops it (exit 0).",
      )
      .option("--port <n>", "port to listen on (0: any free port)", integerOption(0), 4242)
      .option("--host <host>", "interface to listen on", "127.0.0.1")
      .option(
        "--secret <whsec>",
        "the signing secret of an endpoint you added (env VENDCTL_WEBHOOK_SECRET); without it a temporary endpoint is created",
      )
      .option("--forward-to <url>", "also pass each delivery (body and webhook-* headers) to this URL; print its status")
      .addOption(new Option("--forward <url>", "same as --forward-to").hideHelp())
      .option(
        "--endpoint-url <url>",
        "the URL the temporary endpoint delivers to (default: http://<host>:<port>/), e.g. a tunnel",
      ),
    [
      "vendctl webhooks listen --forward-to http://localhost:3000/hooks/vend",
      "vendctl webhooks listen --port 4242 --secret whsec_… --json",
    ],
    async (ctx, flags: ListenFlags) => {
      const secret = flags.secret || io().env.VENDCTL_WEBHOOK_SECRET;
      let verifier = secret ? verifierFor(secret) : undefined;
      // Without --secret it registers itself, like `stripe listen`: only with a test key.
      if (!secret) requireTestKey(ctx, liveKeyRefusal);
      const forwardTo = flags.forwardTo ?? flags.forward;
      const stopped = untilStopped();
      const server = Bun.serve({
        port: flags.port,
        hostname: flags.host,
        fetch: async (request) => {
          const raw = await request.text();
          const headers: Record<string, string> = {};
          request.headers.forEach((value, key) => {
            headers[key] = value;
          });
          const verdict = verdictOf(verifier, raw, headers);
          const forwarded = forwardTo ? await forwardDelivery(forwardTo, request, raw) : undefined;
          await printDelivery(ctx, raw, headers, verdict, forwarded);
          if (forwarded) return "answer" in forwarded ? forwarded.answer : new Response("forward failed\n", { status: 502 });
          return verdict === "INVALID" ? new Response("invalid signature\n", { status: 400 }) : new Response("ok\n");
        },
      });
      const host = flags.host === "0.0.0.0" || flags.host === "::" ? "127.0.0.1" : flags.host;
      let endpoint: TemporaryEndpoint | undefined;
      try {
        if (!secret) {
          endpoint = await createTemporaryEndpoint(ctx, flags.endpointUrl ?? `http://${host}:${server.port}/`);
          verifier = verifierFor(endpoint.secret);
          await announceEndpoint(ctx, endpoint);
        }
        const checking = secret ? "verifying signatures with --secret" : "verifying signatures";
        await ctx.printer.note(`Listening on http://${host}:${server.port} (${checking}; Ctrl-C to stop)`);
        if (forwardTo) await ctx.printer.note(`Forwarding each delivery to ${forwardTo}`);
        await stopped;
      } finally {
        await server.stop(true);
        if (endpoint) await removeTemporaryEndpoint(ctx, endpoint);
      }
    },
  );
