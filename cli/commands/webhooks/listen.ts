import { Command } from "commander";
import { Webhook } from "standardwebhooks";
import { type Context, contextOf, integerOption, withExample } from "../../context.ts";
import { UsageError } from "../../errors.ts";

interface ListenFlags {
  port: number;
  host: string;
  secret?: string;
  forward?: string;
}

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

async function forward(ctx: Context, url: string, request: Request, raw: string): Promise<Response | undefined> {
  const headers = new Headers(request.headers);
  headers.delete("host");
  headers.delete("content-length");
  try {
    const answer = await fetch(url, { method: request.method, headers, body: raw });
    await ctx.printer.note(`  forwarded to ${url}: ${answer.status}`);
    return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers });
  } catch (error) {
    await ctx.printer.note(`  forward to ${url} failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

export const webhooksListenCommand = withExample(
  new Command("listen")
    .description(
      "Run a local webhook receiver: verifies each request's Standard Webhooks signature, prints the event, " +
        "and optionally forwards the raw request to your app. Stops on Ctrl-C.",
    )
    .option("--port <n>", "port to listen on (0: any free port)", integerOption(0), 4242)
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option("--secret <whsec>", "endpoint signing secret (env VENDCTL_WEBHOOK_SECRET); without it nothing is verified")
    .option("--forward <url>", "also POST each request, unchanged, to this URL"),
  "vendctl webhooks listen --port 4242 --secret whsec_… --forward http://localhost:3000/hooks/vend",
).action(async (flags: ListenFlags, command: Command) => {
  const ctx = contextOf(command);
  const secret = flags.secret || process.env.VENDCTL_WEBHOOK_SECRET;
  let verifier: Webhook | undefined;
  try {
    verifier = secret ? new Webhook(secret) : undefined;
  } catch {
    throw new UsageError("--secret must be an endpoint signing secret (whsec_…)");
  }
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
      const { type, reference, status, event } = summary(raw);
      const id = headers["webhook-id"] ?? "-";
      if (ctx.printer.format === "table") {
        const what = [type ?? "(not an event)", reference, status].filter(Boolean).join("  ");
        await ctx.printer.write(`${new Date().toISOString()}  ${id}  ${what}  signature ${verdict}\n`);
      } else {
        const line = { received_at: new Date().toISOString(), webhook_id: id, signature: verdict, event: event ?? raw };
        await ctx.printer.write(`${JSON.stringify(line)}\n`);
      }
      const forwarded = flags.forward ? await forward(ctx, flags.forward, request, raw) : undefined;
      if (forwarded) return forwarded;
      return verdict === "INVALID" ? new Response("invalid signature\n", { status: 400 }) : new Response("ok\n");
    },
  });
  await ctx.printer.note(
    `Listening on http://${flags.host}:${server.port} (${verifier ? "verifying signatures" : "no --secret: signatures not checked"})`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.stop(true);
});
