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
    },
    destination,
  );
}
