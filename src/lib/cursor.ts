import { createHmac, timingSafeEqual } from "node:crypto";
import { validationError } from "../errors.ts";

/** Position of the last row of a page in `(created_at desc, id desc)` order. */
export interface KeysetPosition {
  createdAt: Date;
  id: string;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Opaque, signed cursors bound to the filters they were issued with. */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  private sign(payload: string, scope: string, filters: unknown): string {
    return createHmac("sha256", this.secret)
      .update(`${scope}\n${canonical(filters)}\n${payload}`)
      .digest("base64url")
      .slice(0, 32);
  }

  encode(scope: string, filters: unknown, position: KeysetPosition): string {
    const payload = Buffer.from(JSON.stringify([position.createdAt.getTime(), position.id])).toString("base64url");
    return `${payload}.${this.sign(payload, scope, filters)}`;
  }

  /** The position a cursor names, or a 400 naming `cursor` for anything we did not issue for these filters. */
  decode(scope: string, filters: unknown, cursor: string): KeysetPosition {
    const invalid = () =>
      validationError([{ field: "cursor", message: "is not a cursor issued for this query" }], "Invalid cursor");
    const [payload, signature, extra] = cursor.split(".");
    if (!payload || !signature || extra !== undefined) throw invalid();
    const expected = Buffer.from(this.sign(payload, scope, filters));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
    try {
      const [millis, id] = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as [number, string];
      if (typeof millis !== "number" || typeof id !== "string") throw invalid();
      return { createdAt: new Date(millis), id };
    } catch {
      throw invalid();
    }
  }
}

export interface Page<T> {
  items: T[];
  page: { next_cursor: string | null; has_more: boolean };
}

/** Builds a page from `limit + 1` fetched rows. */
export function toPage<Row extends { createdAt: Date; id: string }, T>(
  rows: Row[],
  limit: number,
  present: (row: Row) => T,
  nextCursor: (position: KeysetPosition) => string,
): Page<T> {
  const hasMore = rows.length > limit;
  const shown = hasMore ? rows.slice(0, limit) : rows;
  const last = shown[shown.length - 1];
  return {
    items: shown.map(present),
    page: { next_cursor: hasMore && last ? nextCursor({ createdAt: last.createdAt, id: last.id }) : null, has_more: hasMore },
  };
}

/** `limit`: default 25, larger values treated as 100 (the validator refuses < 1). */
export function pageLimit(limit: number | undefined): number {
  return Math.min(limit ?? 25, 100);
}
