import type { Config } from "../config.ts";
import { maskDestination } from "../lib/mask.ts";

/** What a secret is stored as. */
export const redacted = "[redacted]";

/**
 * The service's credentials as it issues them: API keys (`rg_test_`/`rg_live_` and 40 base62 characters),
 * operator tokens (`op_` and 40), webhook secrets (`whsec_` and the base64 of 32 bytes), the embedded server's
 * local admin secret (`vlocal_` and 43). Shorter tails than issued are caught too (a copy cut or edited), but not
 * a key's display prefix (`rg_test_AbCd`, four characters), which is shown on purpose.
 */
const credentialPattern =
  /rg_(?:test|live)_[0-9A-Za-z]{12,}|(?<![0-9A-Za-z_])op_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z+/=]{16,}|vlocal_[0-9A-Za-z]{16,}/g;

/** Names whose value is a secret wherever they appear: a body field, a query parameter. */
const secretNamePattern = /secret|token|passw|passphrase|credential|api_?key|private_?key|signature|authoriz|^key$|_key$|^pin$/i;
/** Named like a secret but not one: an idempotency key, a key's id or display prefix, a time. */
const notSecret = new Set(["idempotency_key", "key_id", "key_prefix", "signature_valid"]);

export function isSecretName(name: string): boolean {
  if (!secretNamePattern.test(name)) return false;
  const lower = name.toLowerCase();
  return !(notSecret.has(lower) || lower.endsWith("_at") || lower.endsWith("_id"));
}

/** The fields that carry a destination in requests (their aliases included); answers mask them already. */
const destinationNames = new Set([
  "phone_number",
  "receiver_phone_number",
  "destination",
  "meter_number",
  "smartcard_number",
  "account_number",
]);
/** A search that is all digits is a destination typed into the transaction search. */
const digitsOnly = /^\+?\d{7,}$/;

/** What a body holds that may need a change: a name like a secret's, an escaped name, a credential's start. */
const secretHints = ["secret", "token", "passw", "phrase", "credential", "key", "signature", "authoriz", "pin", "\\\\u"];
const credentialHints = ["rg_", "op_", "whsec_", "vlocal_"];
const destinationHints = ["phone", "destination", "meter", "smartcard", "account_number"];
const bodyHints = new WeakMap<readonly string[], { answer: RegExp; request: RegExp }>();

const escapedForRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * One case-blind test, made once per list of known secrets, of whether a body may need any change at all: most do
 * not (an answer holds no secret-named field, no credential), and are then stored as they are after one scan.
 */
function bodyHint(secrets: readonly string[], masks: boolean): RegExp {
  let hints = bodyHints.get(secrets);
  if (!hints) {
    const common = [...secretHints, ...credentialHints, ...secrets.filter((secret) => secret.length > 0).map(escapedForRegExp)];
    hints = {
      answer: new RegExp(common.join("|"), "i"),
      request: new RegExp([...common, ...destinationHints].join("|"), "i"),
    };
    bodyHints.set(secrets, hints);
  }
  return masks ? hints.request : hints.answer;
}

/** `name=value` pairs of a query string or a form-encoded body. */
const formPairs = /([^=&\s?]+)=([^&\s]*)/g;
const encodedRedacted = encodeURIComponent(redacted);

/** A JSON string's content as the characters it stands for (names and values may be escaped). */
function unescaped(content: string): string {
  try {
    return JSON.parse(`"${content}"`) as string;
  } catch {
    return content;
  }
}

/** The new text of a value under `name`, or undefined to keep it. */
function changedValue(name: string, value: string, masks: boolean): string | undefined {
  if (isSecretName(name)) return `"${redacted}"`;
  if (masks && destinationNames.has(name)) return JSON.stringify(maskDestination(value));
  return undefined;
}

const isSpace = (code: number) => code === 32 || code === 10 || code === 13 || code === 9;
/** A character a JSON number (or its spelling by a careless client) is written with. */
const isNumberPart = (code: number) =>
  (code >= 48 && code <= 57) || code === 45 || code === 43 || code === 46 || code === 69 || code === 101;

/**
 * A JSON text (or the start of one) with the string and number values of secret-named fields replaced and, with
 * `masks`, destinations masked; everything else byte for byte as sent. A scan, not a parse: it works on a cut
 * body and on invalid JSON, and keeps what the client sent (spacing, number spelling, repeated keys). Strings are
 * read from their opening quote to their closing one, never from inside one, so no string's content can pose as
 * a field; a string followed by `:` is a field's name.
 */
function rewriteJson(text: string, masks: boolean): string {
  const edits: { start: number; end: number; text: string }[] = [];
  const length = text.length;
  /** The field whose string value is the next string. */
  let fieldOfValue: string | undefined;
  let at = 0;
  while (at < length) {
    if (text.charCodeAt(at) !== 34) {
      at += 1;
      continue;
    }
    const open = at;
    let escaped = false;
    at += 1;
    while (at < length) {
      const code = text.charCodeAt(at);
      if (code === 92) {
        escaped = true;
        at += 2;
      } else if (code === 34) break;
      else at += 1;
    }
    const close = Math.min(at, length);
    at = close + 1;
    const content = () => (escaped ? unescaped(text.slice(open + 1, close)) : text.slice(open + 1, close));
    if (fieldOfValue !== undefined) {
      const replacement = changedValue(fieldOfValue, content(), masks);
      if (replacement !== undefined) edits.push({ start: open, end: Math.min(at, length), text: replacement });
      fieldOfValue = undefined;
      continue;
    }
    let next = at;
    while (next < length && isSpace(text.charCodeAt(next))) next += 1;
    if (text.charCodeAt(next) !== 58) continue;
    const name = content();
    next += 1;
    while (next < length && isSpace(text.charCodeAt(next))) next += 1;
    at = next;
    if (!isSecretName(name) && !(masks && destinationNames.has(name))) continue;
    if (text.charCodeAt(next) === 34) {
      fieldOfValue = name;
      continue;
    }
    let end = next;
    while (end < length && isNumberPart(text.charCodeAt(end))) end += 1;
    const replacement = end > next ? changedValue(name, text.slice(next, end), masks) : undefined;
    if (replacement !== undefined) edits.push({ start: next, end, text: replacement });
    at = end;
  }
  if (edits.length === 0) return text;
  let out = "";
  let from = 0;
  for (const edit of edits) {
    out += text.slice(from, edit.start) + edit.text;
    from = edit.end;
  }
  return out + text.slice(from);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `name=value` pairs (a query string, a form body) with secret-named values replaced and destinations masked. */
function rewritePairs(text: string, secrets: readonly string[]): string {
  return text.replace(formPairs, (pair, rawName: string, rawValue: string) => {
    const name = decoded(rawName);
    if (isSecretName(name)) return `${rawName}=${redacted}`;
    const value = decoded(rawValue);
    if (destinationNames.has(name) || (name === "search" && digitsOnly.test(value)))
      return `${rawName}=${encodeURIComponent(maskDestination(value))}`;
    const scrubbed = scrubText(value, secrets);
    return scrubbed === value ? pair : `${rawName}=${encodeURIComponent(scrubbed).replaceAll(encodedRedacted, redacted)}`;
  });
}

const secretPatterns = new WeakMap<readonly string[], { hint: RegExp; known: RegExp | null }>();

/** For a list of known secrets, made once: one test for anything `scrubText` would replace, and the secrets alone. */
function secretPatternsOf(secrets: readonly string[]): { hint: RegExp; known: RegExp | null } {
  let patterns = secretPatterns.get(secrets);
  if (!patterns) {
    const escaped = secrets.filter((secret) => secret.length > 0).map(escapedForRegExp);
    patterns = {
      hint: new RegExp([...credentialHints, ...escaped].join("|")),
      known: escaped.length > 0 ? new RegExp(escaped.join("|"), "g") : null,
    };
    secretPatterns.set(secrets, patterns);
  }
  return patterns;
}

/** `text` with every credential of the service's formats and every one of `secrets` replaced, wherever they are. */
export function scrubText(text: string, secrets: readonly string[]): string {
  const { hint, known } = secretPatternsOf(secrets);
  if (!hint.test(text)) return text;
  const out = text.replace(credentialPattern, redacted);
  return known ? out.replace(known, redacted) : out;
}

/** A query string with secrets redacted and destinations masked. */
export function redactQuery(query: string, secrets: readonly string[]): string {
  return scrubText(rewritePairs(query, secrets), secrets);
}

export interface StoredBody {
  text: string;
  truncated: boolean;
}

/** Read past the limit before cutting, so a secret that straddles the limit is still whole when it is replaced. */
const marginChars = 1024;

/**
 * A body as stored: secret-named fields and the service's credentials (and `secrets`) replaced, with `masks`
 * destinations masked, then cut to `limitBytes` of UTF-8 on a character boundary (`truncated` says so). A JSON
 * body keeps its text as sent otherwise; any other text gets the same rules as `name=value` pairs.
 */
export function redactBody(
  body: string,
  options: { limitBytes: number; masks: boolean; secrets: readonly string[] },
): StoredBody {
  const windowed = body.length > options.limitBytes + marginChars;
  const text = windowed ? body.slice(0, options.limitBytes + marginChars) : body;
  const first = text.trimStart().charCodeAt(0);
  const json = first === 123 || first === 91;
  let out = text;
  if (!json || bodyHint(options.secrets, options.masks).test(text)) {
    out = json ? rewriteJson(text, options.masks) : rewritePairs(text, options.secrets);
    out = scrubText(out, options.secrets);
  }
  const cut = cutUtf8(out, options.limitBytes);
  return { text: cut, truncated: windowed || cut.length < out.length };
}

/** At most `limitBytes` of `text`'s UTF-8, never splitting a character. */
export function cutUtf8(text: string, limitBytes: number): string {
  if (text.length * 3 <= limitBytes) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limitBytes) return text;
  let end = limitBytes;
  // Back up over continuation bytes (10xxxxxx) to the first byte of the character the limit falls in.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString("utf8");
}

/**
 * The secrets this process knows that the formats above do not catch: the admin token, each provider's
 * credentials (its API keys, callback tokens and signing secrets) and the operator webhook secret. Any of them
 * sent in a body or a query (or echoed in an answer) is replaced.
 */
export function configuredSecrets(config: Config): string[] {
  const found = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value === "string" && value.length >= 8) found.add(value);
  };
  add(config.adminToken);
  add(config.cursorSecret);
  add(config.operations.operatorWebhookSecret);
  add(config.operations.metricsToken);
  for (const settings of Object.values(config.providers as object) as unknown[]) {
    if (!settings || typeof settings !== "object") continue;
    for (const [name, value] of Object.entries(settings)) if (isSecretName(snakeCase(name))) add(value);
  }
  return [...found];
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
