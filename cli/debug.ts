import type { Middleware } from "openapi-fetch";
import { io } from "./io.ts";

/** Bodies longer than this are cut in the log; the command still gets all of it. */
const bodyLimit = 16_384;

const secretName = /authorization|cookie|key|token|secret|password|signature/i;
/** Named like a secret but not one, and worth seeing when debugging a retry. */
const notSecret = /^idempotency[-_]key$/i;
const knownPrefix = /^(rg_(?:test|live)_|op_|whsec_)/;
const secretLike = /\b(?:rg_(?:test|live)_|op_|whsec_)[A-Za-z0-9+/=_-]{8,}/g;

/** `rg_test_AbCd…[redacted]` for a value with a known prefix (the part the API itself shows), else `[redacted]`. */
export function maskSecret(value: string): string {
  const prefix = knownPrefix.exec(value)?.[1];
  return prefix ? `${value.slice(0, prefix.length + 4)}…[redacted]` : "[redacted]";
}

/** Every configured secret and anything shaped like a key or token, wherever it appears in the text. */
function maskText(text: string, secrets: string[]): string {
  let masked = text;
  for (const secret of secrets) if (secret.length >= 8) masked = masked.split(secret).join(maskSecret(secret));
  return masked.replace(secretLike, (found) => maskSecret(found));
}

function maskHeader(name: string, value: string): string {
  if (notSecret.test(name) || !secretName.test(name)) return value;
  const bearer = /^(bearer|basic)\s+(.*)$/i.exec(value);
  return bearer ? `${bearer[1]} ${maskSecret(bearer[2] ?? "")}` : maskSecret(value);
}

function maskJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskJson);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, field]) => {
      const secret = secretName.test(name) && !notSecret.test(name) && (typeof field === "string" || typeof field === "number");
      return [name, secret ? maskSecret(String(field)) : maskJson(field)];
    }),
  );
}

function formatBody(text: string, secrets: string[]): string {
  if (text === "") return "";
  let shown: string;
  try {
    shown = JSON.stringify(maskJson(JSON.parse(text)), null, 2);
  } catch {
    shown = text.length > bodyLimit ? `${text.slice(0, bodyLimit)}… (${text.length - bodyLimit} more characters)` : text;
  }
  return maskText(shown, secrets);
}

const prefixed = (mark: string, text: string): string =>
  text === ""
    ? ""
    : `${text
        .split("\n")
        .map((line) => `${mark} ${line}`.trimEnd())
        .join("\n")}\n`;

function headerLines(mark: string, headers: Headers, secrets: string[]): string {
  const lines: string[] = [];
  headers.forEach((value, name) => {
    lines.push(`${name}: ${maskText(maskHeader(name, value), secrets)}`);
  });
  return prefixed(mark, lines.join("\n"));
}

/**
 * Logs every request and response of a client on stderr: method, URL, status, time taken, headers and bodies,
 * with credentials and anything named like a key, token, secret or password redacted.
 */
export function debugMiddleware(secrets: string[], write: (text: string) => void = (t) => io().stderr.write(t)): Middleware {
  const started = new Map<string, number>();
  const elapsed = (id: string): string => {
    const start = started.get(id);
    started.delete(id);
    return start === undefined ? "" : ` (${Math.round(performance.now() - start)} ms)`;
  };
  return {
    async onRequest({ request, id }) {
      const body = request.body ? await request.clone().text() : "";
      write(
        `> ${request.method} ${maskText(request.url, secrets)}\n` +
          headerLines(">", request.headers, secrets) +
          prefixed(">", formatBody(body, secrets)),
      );
      started.set(id, performance.now());
    },
    async onResponse({ response, id }) {
      const time = elapsed(id);
      // An event stream's body never ends: reading a copy of it would hold the answer back forever.
      const streaming = response.headers.get("content-type")?.startsWith("text/event-stream") === true;
      const body = streaming ? "(an event stream: its events follow on stdout)" : await response.clone().text();
      write(
        `< ${response.status} ${response.statusText}${time}\n` +
          headerLines("<", response.headers, secrets) +
          prefixed("<", formatBody(body, secrets)) +
          "\n",
      );
    },
    onError({ request, error, id }) {
      const reason = error instanceof Error ? error.message : String(error);
      write(`! ${request.method} ${maskText(request.url, secrets)} failed${elapsed(id)}: ${maskText(reason, secrets)}\n\n`);
    },
  };
}
