import type { RequestLog } from "../../src/request-logs/view.ts";
import { checkResponse } from "./contract.ts";

/** One `request_log` event, and when this process read it (`performance.now()`). */
export interface LogEvent {
  id: string;
  data: RequestLog;
  receivedAt: number;
}

/** A request-log stream (Server-Sent Events) read as it arrives. */
export interface LogStream {
  response: Response;
  events: LogEvent[];
  /** Comment lines, without their `: `. */
  comments: string[];
  /** Resolves once the server has ended the body. */
  ended: Promise<void>;
  readonly isEnded: boolean;
  /** Resolves once `count` events have arrived; rejects after `timeoutMs` saying how many did. */
  waitForEvents(count: number, timeoutMs?: number): Promise<LogEvent[]>;
  /** Resolves with the first comment matching `pattern`, as it arrives; rejects after `timeoutMs`. */
  waitForComment(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Goes away, as a client that closes the connection. */
  close(): void;
}

export interface OpenOptions {
  query?: Record<string, string>;
  lastEventId?: string;
  headers?: Record<string, string>;
}

/**
 * Opens `path` with `token` as a raw fetch and reads its body in the background, block by block: no EventSource,
 * nothing buffered but what arrived. The 200's status and headers are held to the contract (its body is a stream,
 * never complete); any other answer is read whole and checked as every test client's is.
 */
export async function openLogStream(baseUrl: string, path: string, token: string, options: OpenOptions = {}): Promise<LogStream> {
  const url = new URL(path, baseUrl);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "text/event-stream", ...options.headers };
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
  const response = await fetch(url, { headers, signal: abort.signal });
  if (response.status !== 200) {
    checkResponse("GET", url.toString(), response.status, response.headers, await response.clone().text());
  } else {
    checkResponse("GET", url.toString(), response.status, response.headers, "");
  }
  const events: LogEvent[] = [];
  const comments: string[] = [];
  const wakers = new Set<() => void>();
  const wake = () => {
    for (const waker of [...wakers]) waker();
  };
  let isEnded = false;
  const ended = (async () => {
    if (!response.body || response.status !== 200) return;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        pending += decoder.decode(chunk.value, { stream: true });
        const blocks = pending.split("\n\n");
        pending = blocks.pop() ?? "";
        for (const block of blocks) {
          const fields = new Map<string, string>();
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trim());
            else if (line.includes(":"))
              fields.set(line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trimStart());
          }
          if (fields.get("event") === "request_log")
            events.push({
              id: fields.get("id") ?? "",
              data: JSON.parse(fields.get("data") ?? "null"),
              receivedAt: performance.now(),
            });
        }
        wake();
      }
    } catch {
      // Aborted by close().
    } finally {
      isEnded = true;
      wake();
    }
  })();
  const until = <T>(found: () => T | undefined, what: () => string, timeoutMs: number) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const value = found();
        if (value !== undefined) {
          finish();
          resolve(value);
        } else if (isEnded) {
          finish();
          reject(new Error(`the stream ended before ${what()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`not within ${timeoutMs} ms: ${what()}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        wakers.delete(check);
      };
      wakers.add(check);
      check();
    });
  return {
    response,
    events,
    comments,
    ended,
    get isEnded() {
      return isEnded;
    },
    waitForEvents: (count, timeoutMs = 10_000) =>
      until(
        () => (events.length >= count ? events.slice(0, count) : undefined),
        () => `${count} events (${events.length} arrived)`,
        timeoutMs,
      ),
    waitForComment: (pattern, timeoutMs = 10_000) =>
      until(
        () => comments.find((text) => pattern.test(text)),
        () => `a comment ${pattern} (${JSON.stringify(comments)})`,
        timeoutMs,
      ),
    close: () => abort.abort(),
  };
}
