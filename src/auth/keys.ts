import { createHash } from "node:crypto";
import { randomBase62 } from "../lib/random.ts";

export type Mode = "test" | "live";

const keyPattern = /^rg_(test|live)_[0-9A-Za-z]{32,}$/;

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export interface NewApiKey {
  key: string;
  hash: string;
  prefix: string;
}

/** `rg_<mode>_` + 40 base62 characters; stored only as its SHA-256 and a display prefix. */
export function generateApiKey(mode: Mode): NewApiKey {
  const key = `rg_${mode}_${randomBase62(40)}`;
  return { key, hash: hashApiKey(key), prefix: key.slice(0, `rg_${mode}_`.length + 4) };
}

/** The mode a well-formed key claims, or null for anything else. */
export function modeOfKey(key: string): Mode | null {
  const match = keyPattern.exec(key);
  return match ? (match[1] as Mode) : null;
}
