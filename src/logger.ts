import pino from "pino";

export type Logger = pino.Logger;

/** A line waits at most this long in the buffer, however quiet the service. */
const flushIntervalMs = 1000;
/** Lines are written once this many bytes wait (about 25 access lines): one write for many lines. */
const batchBytes = 4096;

/**
 * Standard output, written in batches instead of one write per line: a line waits until 4 KiB are
 * buffered or for at most a second. Writes stay synchronous (a stdout nobody reads holds the service
 * up as before, rather than growing memory or dropping lines), and whatever is buffered is written
 * when the process exits, by `process.exit` (the SIGTERM/SIGINT shutdown, a fatal error) or otherwise.
 */
export function bufferedStdout(): pino.DestinationStream {
  const destination = pino.destination({ dest: 1, sync: true, minLength: batchBytes, periodicFlush: flushIntervalMs });
  process.on("exit", () => destination.flushSync());
  return destination;
}

/**
 * Structured JSON logs. Callers log ids, routes and codes, never request bodies,
 * headers or query strings, so API keys and destinations cannot reach the log.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "vend" },
      redact: {
        paths: ["authorization", "*.authorization", "key", "*.key", "destination", "*.destination"],
        censor: "[redacted]",
      },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Every `err` field, whoever logs it, loses quoted values and driver parameters.
      serializers: {
        err: (value: unknown) => (value instanceof Error || typeof value === "string" ? loggableError(value) : value),
      },
    },
    destination,
  );
}

/** A driver's or PostgreSQL's text quotes values ("…", '…') and Drizzle appends `params: …`: values go. */
function withoutValues(text: string): string {
  return (
    text
      .replace(/\nparams:[\s\S]*$/, "")
      .replace(/params:[\s\S]*$/, "")
      // Identifiers PostgreSQL names (relation "x", column "x") stay; any other quoted text is a value.
      .replace(
        /(\b(?:relation|column|constraint|table|index|function|type|schema|sequence|trigger)\s+)?"(?:[^"\\]|\\.)*"/g,
        (quoted, named) => (named ? quoted : '"…"'),
      )
      .replace(/'(?:[^'\\]|\\.)*'/g, "'…'")
      .replace(/\(([^()]*)\)=\(([^()]*)\)/g, "($1)=(…)")
  );
}

/**
 * An error as it may be logged: name, SQLSTATE or system code, and message and stack with every
 * quoted value and query parameter removed, along the `cause` chain. Destinations, keys and bodies
 * reach errors as driver parameters or quoted values, never as anything else.
 */
export function loggableError(error: unknown, depth = 0): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: withoutValues(String(error)) };
  const { code } = error as { code?: unknown };
  const out: Record<string, unknown> = { name: error.name, message: withoutValues(error.message) };
  if (typeof code === "string") out.code = code;
  if (error.stack)
    out.stack = withoutValues(
      error.stack
        .split("\n")
        .filter((line) => /^\s+at /.test(line))
        .join("\n"),
    );
  if (error.cause !== undefined && depth < 3) out.cause = loggableError(error.cause, depth + 1);
  return out;
}

const accessLoggers = new WeakMap<Logger, Logger>();

/**
 * The logger for access lines: the same output, level and base fields, without redaction, whose scan
 * of every field for the redacted paths costs more than the rest of the line. An access line's fields
 * are fixed (ids, method, route template, operation, status, duration): none can hold a key or a
 * destination.
 */
export function accessLoggerOf(logger: Logger): Logger {
  let access = accessLoggers.get(logger);
  if (!access) {
    access = logger.child({}, { redact: [] });
    accessLoggers.set(logger, access);
  }
  return access;
}
