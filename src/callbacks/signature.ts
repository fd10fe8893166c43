import { timingSafeEqual } from "node:crypto";
import { signCallback, signTimestampedCallback } from "../lib/shared/callback-signature.ts";

/**
 * How a provider signs `X-Provider-Signature`:
 * - `timestamped` (the sandbox): `t=<unix seconds>,sha256=<hex HMAC-SHA256 of "<t>.<raw body>">`, so a
 *   captured callback stops being accepted once `t` leaves the replay window;
 * - `body` (VTpass, which sends no timestamp): `sha256=<hex HMAC-SHA256 of the raw body>`; a replay of
 *   it is harmless only because applying the same outcome twice changes nothing.
 */
export type SignatureScheme = "timestamped" | "body";

export interface SignatureCheck {
  /** The signature is the secret's over this body (a stale one included). */
  matches: boolean;
  /** Why the callback is refused, or null when it may be applied. */
  problem: string | null;
}

const sameText = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

const timestampedForm = /^t=(\d{1,12}),sha256=[0-9a-f]{64}$/;

/**
 * Verifies `header` under `scheme`. `windowSeconds` bounds how far a timestamp may be from `now`
 * either way; null skips that check (an operator's replay of a stored callback).
 */
export function checkCallbackSignature(
  scheme: SignatureScheme,
  secret: string,
  rawBody: string,
  header: string | null,
  windowSeconds: number | null,
  now = Date.now(),
): SignatureCheck {
  const given = (header ?? "").trim();
  if (scheme === "body") {
    const matches = given !== "" && sameText(given, signCallback(secret, rawBody));
    return { matches, problem: matches ? null : "X-Provider-Signature does not match the body" };
  }
  const t = timestampedForm.exec(given)?.[1];
  if (t === undefined) {
    return {
      matches: false,
      problem: 'X-Provider-Signature must be t=<unix seconds>,sha256=<hex HMAC-SHA256 of "<t>.<raw body>">',
    };
  }
  if (!sameText(given, signTimestampedCallback(secret, rawBody, t))) {
    return { matches: false, problem: "X-Provider-Signature does not match the body" };
  }
  if (windowSeconds !== null && Math.abs(now / 1000 - Number(t)) > windowSeconds) {
    return {
      matches: true,
      problem: `X-Provider-Signature timestamp is outside the ${windowSeconds}-second replay window; sign with the current time`,
    };
  }
  return { matches: true, problem: null };
}
