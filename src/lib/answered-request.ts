import type { Mode } from "./scope.ts";

/**
 * One answered request as the http layer hands it to the request log (src/request-logs/recorder.ts): raw, as
 * captured on the request path, nothing parsed, redacted or cut yet (that happens when the log is written).
 */
export interface AnsweredRequest {
  /** When the request arrived, in epoch milliseconds (this process's clock). */
  arrivedAt: number;
  requestId: string;
  accountId: string | undefined;
  mode: Mode | undefined;
  keyId: string | undefined;
  /** The key's display prefix (`rg_test_AbCd`), never the key. */
  keyPrefix: string | undefined;
  operator: string | undefined;
  method: string;
  /** The operation's path as the contract spells it, or `(unmatched)`. */
  route: string;
  /** The URL as requested: path and query are split from it when the log is written. */
  url: string;
  status: number;
  /** The error envelope's code, when the answer was built from an error here (a stored answer's is read from its body). */
  errorCode: string | undefined;
  idempotencyKey: string | null;
  idempotentReplayed: boolean;
  durationMs: number;
  clientIp: string | undefined;
  userAgent: string | null;
  /** The body as read; undefined when none was read. */
  requestBody: string | undefined;
  /** The JSON body as sent; undefined for other answers (raw files, streams, 304). */
  responseBody: string | undefined;
}

/** Takes answered requests for the request log; never awaits, never throws, drops what it cannot keep. */
export interface RequestRecorder {
  /** False when recording is off (REQUEST_LOGS_ENABLED=false): the caller need not even build the record. */
  readonly enabled: boolean;
  record(request: AnsweredRequest): void;
}
