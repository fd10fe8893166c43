import type { Command } from "commander";
import { type CallResult, unwrap } from "./client.ts";
import { type Context, contextOf, integerOption } from "./context.ts";
import type { Column, ListWriter, Printer } from "./output.ts";
import { type Progress, progress } from "./progress.ts";

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

/** The flags of a paged list command. */
export interface PagingFlags extends PagingOptions {
  limit?: number;
}

/** What one request of a paged list asks for besides its filters. */
export interface PageRequest {
  limit?: number;
  cursor?: string;
}

/** Adds --limit, --cursor when `cursorHelp` is given, then --all and --max. */
export function addPagingOptions(command: Command, limitHelp = "page size, 1 to 100", cursorHelp?: string): Command {
  command.option("--limit <n>", limitHelp, integerOption(1));
  if (cursorHelp) command.option("--cursor <cursor>", cursorHelp);
  return command
    .option("--all", "follow cursors to the last page")
    .option("--max <n>", "follow cursors until this many rows", integerOption(1));
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

/** Fetches one page of a list. */
export type PageFetcher<T> = (request: PageRequest) => Promise<PageOf<T>>;

/** The pages of a list that is one GET: the list's filters in its query, beside each page's limit and cursor. */
export function queryPages<Q extends object, T>(
  filters: Q,
  get: (query: Q & PageRequest) => Promise<CallResult<{ data: PageOf<T> }>>,
): PageFetcher<T> {
  return (page) => unwrap(get({ ...filters, ...page }));
}

/** How a paged list shows: its columns, and what its rows are called in the note that more remain. */
export interface ListLayout<T> {
  columns: Column<T>[];
  /**
   * What the rows are (`More <more>: use --all or --max N`), or the whole note, written from the next cursor and
   * the paging flags the list was read with.
   */
  more: string | ((next: string, flags: PagingOptions) => string);
  limitHelp?: string;
  /** Offer --cursor, with this help. */
  cursorHelp?: string;
}

/**
 * How to read further than these flags did: --all when neither was given; when --max stopped the list, a higher
 * --max or none (--all with --max still stops at --max).
 */
export function readFurther(flags: PagingOptions): string {
  if (flags.max === undefined) return "use --all";
  return `raise --max above ${flags.max}, or ${flags.all ? "leave --max out" : "use --all instead of --max"}`;
}

/** The layout of a list that can be resumed: its columns, `--cursor`, and a note naming the cursor to resume from. */
export function resumable<T>(columns: Column<T>[], rows = "rows"): ListLayout<T> {
  return {
    columns,
    more: (next, flags) => `More ${rows}: add --cursor ${next} (or ${readFurther(flags)})`,
    limitHelp: "page size, 1 to 100 (default 25; 100 with --all)",
    cursorHelp: `start at this cursor (printed when more ${rows} exist)`,
  };
}

/**
 * Turns `command` (its name, description and filter options) into a paged list: adds the paging options and
 * prints the pages the flags ask for as they arrive. `pages` builds, from the flags, the fetcher that adds the
 * filters to each request.
 */
export function pagedListCommand<F extends PagingFlags, T>(
  command: Command,
  layout: ListLayout<T>,
  pages: (ctx: Context, flags: F) => PageFetcher<T>,
): Command {
  const { columns, more } = layout;
  return addPagingOptions(command, layout.limitHelp, layout.cursorHelp).action(async (flags: F, self: Command) => {
    const ctx = contextOf(self);
    await printPages(ctx.printer, pages(ctx, flags), columns, flags, pageSize(flags.limit, flags), (next) =>
      typeof more === "string" ? moreNote(more, flags) : more(next, flags),
    );
  });
}

/** The flags of a list read up to a number of rows: `--limit N` (following cursors as needed) and `--cursor`. */
export interface LimitedListFlags {
  limit: number;
  cursor?: string;
}

/**
 * Turns `command` into a list of up to `--limit` rows (default `defaultLimit`), read in pages of at most 100 and
 * following cursors as needed; the note that more exist names the `--cursor` to resume from.
 */
export function limitedListCommand<F extends LimitedListFlags, T>(
  command: Command,
  columns: Column<T>[],
  rows: string,
  defaultLimit: number,
  pages: (ctx: Context, flags: F) => PageFetcher<T>,
): Command {
  return command
    .option("--limit <n>", `at most this many ${rows}, following cursors as needed`, integerOption(1), defaultLimit)
    .option("--cursor <cursor>", `start at this cursor (printed when more ${rows} exist)`)
    .action(async (flags: F, self: Command) => {
      const ctx = contextOf(self);
      const options = { max: flags.limit, ...(flags.cursor === undefined ? {} : { cursor: flags.cursor }) };
      await printPages(
        ctx.printer,
        pages(ctx, flags),
        columns,
        options,
        Math.min(flags.limit, 100),
        (next) => `More ${rows}: add --cursor ${next} (or raise --limit above ${flags.limit})`,
      );
    });
}

/** Prints the pages `options` ask for as they arrive, then the note `more` writes when more rows remain. */
async function printPages<T>(
  printer: Printer,
  fetchPage: PageFetcher<T>,
  columns: Column<T>[],
  options: PagingOptions,
  limit: number | undefined,
  more: (next: string) => string,
): Promise<void> {
  const writer = printer.list(columns);
  const counter = pageCounter(printer, options, writer);
  try {
    const next = await streamPages((cursor) => counter.count(fetchPage({ limit, cursor })), writer, options);
    counter.stop();
    await writer.end();
    if (next) await printer.note(more(next));
  } finally {
    counter.stop();
  }
}

/** `More <rows>: …` for a list that cannot be resumed from a cursor. */
const moreNote = (rows: string, flags: PagingOptions): string =>
  `More ${rows}: ${flags.max === undefined ? "use --all or --max N" : readFurther(flags)}`;

/**
 * While a table (or a list for --jq) is collected over several pages, nothing reaches stdout until the last
 * page: a counter of pages and rows on stderr (a terminal only) shows the work going on.
 */
function pageCounter<T>(printer: Printer, flags: PagingOptions, writer: ListWriter<T>) {
  const collected = printer.format === "table" || (printer.format === "json" && printer.collectsJson);
  let shown: Progress | undefined;
  let pages = 0;
  return {
    async count(page: Promise<PageOf<T>>): Promise<PageOf<T>> {
      if (collected && (flags.all || flags.max !== undefined)) {
        shown ??= progress("Fetching");
        pages += 1;
        shown.update(`Fetching page ${pages} (${writer.written} rows so far)`);
      }
      return page;
    },
    stop() {
      shown?.stop();
      shown = undefined;
    },
  };
}
