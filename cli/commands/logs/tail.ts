import { Command } from "commander";
import { apiErrorOf } from "../../client.ts";
import { statusPaint } from "../../color.ts";
import { usesLiveKey } from "../../config.ts";
import { actionCommand, type Context } from "../../context.ts";
import { ApiError, UnreachableError } from "../../errors.ts";
import { readEvents } from "../../event-stream.ts";
import { io } from "../../io.ts";
import {
  addOperatorFilters,
  addRequestLogFilters,
  filterQuery,
  formatDuration,
  type LogsScope,
  logsScope,
  type OperatorFilters,
  operatorQuery,
  type RequestLog,
  type RequestLogFilters,
  requestedPath,
} from "../../request-logs.ts";
import type { TableStyle } from "../../table.ts";
import { formatTime, pause } from "../../time.ts";

interface TailFlags extends RequestLogFilters, OperatorFilters {}

/** The server sends a keep-alive comment every 15 s: three missed means the connection is dead. */
const idleMs = 45_000;
/** Reconnection waits 1 s, then twice as long each time in a row, up to this. */
const longestWaitMs = 30_000;

/** Statuses the server may change its mind about: reconnect. Any other refusal ends the tail. */
const isPassing = (error: ApiError): boolean => error.status >= 500 || error.status === 429 || error.status === 408;

/** One request on one line: time, status, method, path, error code, duration, request id (and who, for operators). */
export function logLine(log: RequestLog, style: TableStyle, admin: boolean): string {
  const { colors } = style;
  const paint = statusPaint(colors, String(log.status));
  const parts = [
    formatTime(log.created_at, style.utc),
    paint(String(log.status)),
    log.method.padEnd(6),
    requestedPath(log),
    ...(log.error_code ? [paint(log.error_code)] : []),
    formatDuration(log.duration_ms),
    colors.dim(log.request_id),
    ...(admin ? [log.key_prefix ?? log.operator ?? "-"] : []),
  ];
  return parts.join("  ");
}

function whatIsTailed(ctx: Context, scope: LogsScope): string {
  if (scope.admin) return "every account's requests";
  return `this key's account's requests in ${usesLiveKey(ctx.config) ? "live" : "test"} mode`;
}

async function openStream(scope: LogsScope, flags: TailFlags, lastEventId: string | undefined, signal: AbortSignal) {
  const header = lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId };
  const { error, response } = scope.admin
    ? await scope.client.GET("/admin/v1/request-logs/stream", {
        params: { query: { ...filterQuery(flags), ...operatorQuery(flags) }, header },
        parseAs: "stream",
        signal,
      })
    : await scope.client.GET("/api/v1/request-logs/stream", {
        params: { query: filterQuery(flags), header },
        parseAs: "stream",
        signal,
      });
  if (!response.ok || !response.body) throw apiErrorOf(error, response);
  return response.body;
}

const reasonOf = (error: unknown): string => {
  if (error instanceof UnreachableError) return error.reason;
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
};

/**
 * Resolves on the first SIGINT, SIGTERM or SIGHUP. The handlers stay installed until the process ends: Ctrl-C
 * reaches both the `vendctl` wrapper and this process, and a second signal must not kill the tail as it closes.
 */
function stopOnSignals(controller: AbortController): void {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => controller.abort());
}

async function printLog(ctx: Context, scope: LogsScope, log: RequestLog): Promise<void> {
  const { printer } = ctx;
  if (printer.format === "table") return printer.write(`${logLine(log, printer.style, scope.admin)}\n`);
  if (printer.collectsJson) return printer.json(log);
  return printer.write(`${JSON.stringify(printer.pick([log])[0])}\n`);
}

/**
 * Prints each record as the stream delivers it. A dropped connection, a stream the server ended (a restart) or
 * silence past `idleMs` is reconnected after a growing wait, with `Last-Event-ID` so that what was recorded
 * meanwhile comes first; a refusal ends the tail with its error, and so does a failure before the first connection.
 */
async function follow(ctx: Context, scope: LogsScope, flags: TailFlags, stopped: AbortSignal): Promise<void> {
  let lastEventId: string | undefined;
  let connected = false;
  let failures = 0;
  const say = (text: string) => io().stderr.write(`${text}\n`);
  while (!stopped.aborted) {
    const connection = new AbortController();
    const hangUp = () => connection.abort();
    stopped.addEventListener("abort", hangUp, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(new Error(`no keep-alive for ${idleMs / 1000} s`)), idleMs);
    };
    let reason = "the server ended the stream";
    try {
      alive();
      const body = await openStream(scope, flags, lastEventId, connection.signal);
      if (connected) say("Reconnected.");
      else await ctx.printer.note(`Tailing ${whatIsTailed(ctx, scope)}; Ctrl-C to stop`);
      connected = true;
      failures = 0;
      for await (const event of readEvents(body, alive)) {
        if (event.event !== "request_log") continue;
        const log = JSON.parse(event.data) as RequestLog;
        await printLog(ctx, scope, log);
        lastEventId = event.id ?? log.id;
      }
    } catch (error) {
      if (stopped.aborted) return;
      if (!connected || (error instanceof ApiError && !isPassing(error))) throw error;
      reason =
        connection.signal.aborted && connection.signal.reason instanceof Error
          ? connection.signal.reason.message
          : reasonOf(error);
    } finally {
      clearTimeout(idle);
      stopped.removeEventListener("abort", hangUp);
      connection.abort();
    }
    if (stopped.aborted) return;
    const wait = Math.min(1000 * 2 ** failures++, longestWaitMs);
    say(`Connection lost (${reason}); reconnecting in ${wait / 1000} s`);
    await pause(wait, stopped);
  }
}

export const logsTailCommand = (): Command =>
  actionCommand(
    addOperatorFilters(
      addRequestLogFilters(
        new Command("tail")
          .summary("Follow requests live, like `stripe logs tail`")
          .description(
            "Follow requests live as they are recorded (about a second after each answer, from every server process), " +
              "like `stripe logs tail`: one line each, its status coloured by class (2xx green, 4xx yellow, 5xx red); " +
              "--json: one JSON object per line. Reconnects by itself, resuming where it left off. Ctrl-C stops it (exit 0).",
          ),
      ),
    ),
    [
      "vendctl logs tail --status 4xx",
      "vendctl logs tail --path /api/v1/vend --method POST --json",
      "vendctl logs tail --account 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --status 5xx",
    ],
    async (ctx, flags: TailFlags) => {
      const scope = logsScope(ctx, flags);
      const stop = new AbortController();
      stopOnSignals(stop);
      await follow(ctx, scope, flags, stop.signal);
    },
  );
