/** Exit codes of vendctl, documented in `vendctl --help` and cli/README.md. */
export const exitCodes = { ok: 0, api: 1, usage: 2, unreachable: 3 } as const;

export interface FieldProblem {
  field: string;
  message: string;
}

/** The server answered with an error envelope (or something that is not one). */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly problems: FieldProblem[] = [],
    /** The answer's `X-Request-Id`, when the API answered with its error envelope: its request log's id. */
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** Bad flags, missing input without a terminal, an unusable configuration. */
export class UsageError extends Error {}

/** A failed connection's reason in a few words, by the runtime's error code (Bun's own names, then Node's). */
const reasons: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ConnectionRefused: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ECONNRESET: "connection reset",
  ConnectionClosed: "connection closed",
  ETIMEDOUT: "timed out",
  TimeoutError: "timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

const codeOf = (cause: unknown): string | undefined => {
  if (!(cause instanceof Error)) return undefined;
  const code = (cause as { code?: unknown }).code;
  return typeof code === "string" ? code : cause.name;
};

/** Why the connection failed: a known reason, a certificate's code, else the runtime's message without its advice. */
function reasonOf(cause: unknown): string {
  const code = codeOf(cause) ?? "";
  const known = reasons[code];
  if (known) return known;
  if (/CERT|TLS|SSL/.test(code)) return `TLS certificate not accepted: ${code}`;
  const message = cause instanceof Error ? cause.message : String(cause);
  const bare = message
    .replace(/\s*Is the computer able to access the url\?/, "")
    .replace(/\s*For more information, pass `verbose: true`.*$/, "");
  return bare.trim() || "no answer";
}

/** What to do about it: a refused connection means nothing listens there, so start the service. */
function adviceFor(reason: string): string {
  const elsewhere = "or set --base-url / VENDCTL_BASE_URL";
  if (reason === "connection refused") return `start one with \`npm start\` (or \`vend\`), ${elsewhere}`;
  if (reason === reasons.ENOTFOUND || reason === reasons.EAI_AGAIN) return `check the host name, ${elsewhere}`;
  if (reason.startsWith("TLS")) return `check the server's certificate and the URL's host name, ${elsewhere}`;
  return `check that it runs and this machine can reach it, ${elsewhere}`;
}

/** The server could not be reached at all: one line saying where, why, and what to do (exit 3). */
export class UnreachableError extends Error {
  readonly reason: string;
  constructor(
    readonly baseUrl: string,
    cause: unknown,
  ) {
    const reason = reasonOf(cause);
    super(`cannot reach the vend server at ${baseUrl} (${reason}): ${adviceFor(reason)}`);
    this.reason = reason;
  }
}
