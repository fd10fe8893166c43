import type { ListWriter } from "./output.ts";

export interface PageOf<T> {
  items: T[];
  page: { next_cursor: string | null; has_more: boolean };
}

export interface PagingOptions {
  /** Follow cursors to the end. */
  all?: boolean;
  /** Stop after this many rows (following cursors as needed). */
  max?: number;
  /** Start from this cursor. */
  cursor?: string;
}

/** The page size to ask for: the given limit, else enough for --max, else the API's largest for --all. */
export function pageSize(limit: number | undefined, options: PagingOptions): number | undefined {
  if (limit !== undefined) return limit;
  if (options.max !== undefined) return Math.min(options.max, 100);
  return options.all ? 100 : undefined;
}

/**
 * Fetches page after page and writes each page's rows before asking for the next one.
 * Returns the cursor of the first page not read, or null at the end.
 */
export async function streamPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<PageOf<T>>,
  writer: ListWriter<T>,
  options: PagingOptions,
): Promise<string | null> {
  let cursor = options.cursor;
  for (;;) {
    const { items, page } = await fetchPage(cursor);
    const room = options.max === undefined ? items.length : options.max - writer.written;
    await writer.rows(items.slice(0, room));
    const more = page.has_more && page.next_cursor !== null;
    if (!more) return null;
    if (room < items.length) return null;
    if (options.max !== undefined && writer.written >= options.max) return page.next_cursor;
    if (!options.all && options.max === undefined) return page.next_cursor;
    cursor = page.next_cursor ?? undefined;
  }
}
