import pino from "pino";

export type Logger = pino.Logger;

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
