import pino from "pino";

export type Logger = pino.Logger;

/** A line waits at most this long in the buffer, however quiet the service. */
const flushIntervalMs = 1000;
/** Lines are written once this many bytes wait (about 15 access lines): one write for many lines. */
const batchBytes = 4096;

/**
 * Standard output (or `dest`), written in batches instead of one write per line: a line waits until 4 KiB
 * are buffered or for at most a second. The second is a timer started by the first line to wait, not a
 * periodic flush: a process with nothing to log never wakes to write nothing (sonic-boom's `periodicFlush`
 * flushes an empty buffer every second: 0.3 of an idle worker's 2 ms of CPU a second). Writes stay synchronous: when
 * stdout is not being read, writes and requests wait, as they did unbuffered, rather than memory growing or
 * lines being dropped. Whatever is buffered is written when the process exits, by `process.exit` (the
 * SIGTERM/SIGINT shutdown, a fatal error) or otherwise.
 */
export function bufferedStdout(dest: number | string = 1) {
  const destination = pino.destination({ dest, sync: true, minLength: batchBytes });
  const write = destination.write.bind(destination);
  let flushDue = false;
  destination.write = (data: string) => {
    const written = write(data);
    if (!flushDue) {
      flushDue = true;
      setTimeout(() => {
        flushDue = false;
        destination.flush();
      }, flushIntervalMs).unref();
    }
    return written;
  };
  process.on("exit", () => destination.flushSync());
  return destination;
}

const serviceName = "vend";

/**
 * Structured JSON logs. Callers log ids, routes and codes, never request bodies,
 * headers or query strings, so API keys and destinations cannot reach the log.
 */
export function createLogger(level: string, destination: pino.DestinationStream = process.stdout): Logger {
  const logger = pino(
    {
      level,
      base: { service: serviceName },
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
  accessWriters.set(logger, (fields) => {
    if (logger.isLevelEnabled("info")) destination.write(accessLine(fields));
  });
  return logger;
}

/** The fields of a request's access line, in the order they are written. */
export interface AccessFields {
  request_id: string;
  method: string;
  route: string;
  operation?: string;
  account_id?: string;
  /** The operator's name, on admin operations. */
  operator?: string;
  status: number;
  duration_ms: number;
}

const accessWriters = new WeakMap<Logger, (fields: AccessFields) => void>();
const infoLevel = pino.levels.values.info;
const optional = (name: string, value: string | undefined) => (value === undefined ? "" : `,"${name}":${JSON.stringify(value)}`);

/**
 * The line `logger.info(fields, "request")` writes, built directly: written for every request, it skips
 * pino's generic serialisation and redaction scan (a third of their CPU). Its fields are fixed and none
 * can hold a key, a body value or a destination, so there is nothing to redact.
 */
function accessLine(f: AccessFields): string {
  return (
    `{"level":${infoLevel},"time":"${new Date().toISOString()}","service":"${serviceName}"` +
    `,"request_id":${JSON.stringify(f.request_id)},"method":${JSON.stringify(f.method)},"route":${JSON.stringify(f.route)}` +
    `${optional("operation", f.operation)}${optional("account_id", f.account_id)}${optional("operator", f.operator)}` +
    `,"status":${f.status},"duration_ms":${f.duration_ms},"msg":"request"}\n`
  );
}

/** Writes a request's access line at info level (through pino for a logger createLogger did not make). */
export function logAccess(logger: Logger, fields: AccessFields): void {
  const write = accessWriters.get(logger);
  if (write) write(fields);
  else logger.info(fields, "request");
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
