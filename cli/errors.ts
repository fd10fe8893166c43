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
  ) {
    super(message);
  }
}

/** Bad flags, missing input without a terminal, an unusable configuration. */
export class UsageError extends Error {}

/** The server could not be reached at all. */
export class UnreachableError extends Error {
  constructor(
    readonly baseUrl: string,
    cause: unknown,
  ) {
    super(`cannot reach ${baseUrl}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}
