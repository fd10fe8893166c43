import { Command } from "commander";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { unwrap, type VendClient } from "../client.ts";
import { actionCommand, type Context, integerOption } from "../context.ts";
import { io } from "../io.ts";
import { renderTable, type TableStyle } from "../table.ts";
import { pause } from "../time.ts";

type Snapshot = components["schemas"]["OperationsSnapshot"];
type ProviderFigures = components["schemas"]["OperationsSnapshotProvider"];

const enterScreen = "\x1b[?1049h\x1b[?25l";
const leaveScreen = "\x1b[?25h\x1b[?1049l";
const redraw = "\x1b[H\x1b[2J";
/** `q`, `Q`, or Ctrl-C as raw mode delivers it (a byte, not a signal). */
const isQuitKey = (text: string) => text.includes("q") || text.includes("Q") || text.includes(String.fromCharCode(3));

const perSecond = (count: number, seconds: number): string => (seconds > 0 ? (count / seconds).toFixed(1) : "-");
const age = (seconds: number): string =>
  seconds < 60 ? `${seconds.toFixed(1)}s` : `${Math.floor(seconds / 60)}m${Math.round(seconds % 60)}s`;

/** One screen: per provider rates over the interval between this snapshot and the last, then the queue and webhooks. */
export function renderTop(snapshot: Snapshot, intervalSeconds: number, style: TableStyle): string {
  const seconds = snapshot.interval_seconds;
  const rows = snapshot.providers.map((p: ProviderFigures) => ({
    provider: p.provider,
    mode: p.mode,
    accepts: perSecond(p.accepted, seconds),
    completions: perSecond(p.successful + p.failed, seconds),
    success: p.success_rate_5m === null ? "-" : (p.success_rate_5m * 100).toFixed(1),
    p95: p.p95_ms_5m === null ? "-" : `${p.p95_ms_5m}ms`,
    open: String(p.pending),
  }));
  const table = renderTable(
    [
      { key: "provider" },
      { key: "mode" },
      { key: "accepts", header: "ACCEPTS/S" },
      { key: "completions", header: "COMPLETIONS/S" },
      { key: "success", header: "SUCCESS% 5M" },
      { key: "p95", header: "P95 5M" },
      { key: "open", header: "OPEN" },
    ],
    rows,
    style,
  );
  const { queue, webhooks } = snapshot;
  const time = new Date(snapshot.generated_at).toTimeString().slice(0, 8);
  return [
    `vendctl top  ${time}  every ${intervalSeconds}s over the last ${seconds.toFixed(1)}s  (q quits)`,
    "",
    table.trimEnd(),
    "",
    `QUEUE     due ${queue.due}  oldest due ${age(queue.oldest_due_age_seconds)}  pending ${queue.pending}  stuck ${queue.stuck}`,
    `WEBHOOKS  backlog ${webhooks.backlog}  oldest due ${age(webhooks.oldest_due_age_seconds)}`,
    "",
  ].join("\n");
}

function snapshotAfter(admin: VendClient, since: string | undefined): Promise<Snapshot> {
  const query = since === undefined ? {} : { since };
  return unwrap(admin.GET("/admin/v1/operations/snapshot", { params: { query } }));
}

type RawInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

/**
 * Redraws every `intervalSeconds` on the terminal's alternate screen, each snapshot counting from the last one's
 * `generated_at`, until `q` or Ctrl-C (exit 0). Keys are read in raw mode; the terminal is restored however it ends.
 */
async function runLive(ctx: Context, intervalSeconds: number): Promise<void> {
  const admin = ctx.clients.admin();
  const stdin = io().stdin as RawInput;
  const stop = new AbortController();
  const onKey = (chunk: Buffer | string) => {
    if (isQuitKey(String(chunk))) stop.abort();
  };
  const interrupt = () => stop.abort();
  const raw = stdin.isTTY === true && typeof stdin.setRawMode === "function";
  if (raw) stdin.setRawMode?.(true);
  stdin.on("data", onKey);
  stdin.resume();
  process.once("SIGINT", interrupt);
  await ctx.printer.write(enterScreen);
  try {
    let since: string | undefined;
    while (!stop.signal.aborted) {
      const snapshot = await snapshotAfter(admin, since);
      since = snapshot.generated_at;
      if (stop.signal.aborted) break;
      await ctx.printer.write(redraw + renderTop(snapshot, intervalSeconds, ctx.printer.style));
      await pause(intervalSeconds * 1000, stop.signal);
    }
  } finally {
    process.off("SIGINT", interrupt);
    stdin.off("data", onKey);
    if (raw) stdin.setRawMode?.(false);
    stdin.pause();
    await ctx.printer.write(leaveScreen);
  }
}

interface TopFlags {
  interval: number;
}

/** `vendctl top`: the live view on a terminal; without one, one snapshot as JSON. */
export const topCommand = (): Command =>
  actionCommand(
    new Command("top")
      .description(
        "Live figures refreshed every 2 s, like top: accepts/s, completions/s, success rate and p95 answer time per " +
          "provider, queue depth and oldest due age, pending and stuck orders, webhook backlog (admin token). q or " +
          "Ctrl-C quits. Without a terminal: one snapshot as JSON",
      )
      .option("--interval <seconds>", "seconds between refreshes", integerOption(1), 2),
    ["vendctl top", "vendctl top | jq '.queue'"],
    async (ctx, flags: TopFlags) => {
      if (!io().stdout.isTTY) {
        const snapshot = await snapshotAfter(ctx.clients.admin(), undefined);
        return ctx.printer.format === "json"
          ? ctx.printer.json(snapshot)
          : ctx.printer.write(`${JSON.stringify(snapshot, null, 2)}\n`);
      }
      await runLive(ctx, flags.interval);
    },
  );
