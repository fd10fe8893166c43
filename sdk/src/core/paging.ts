/** One page of a cursor-paged list, as the API answers it. */
export interface Page<T> {
  items: T[];
  page: { next_cursor: string | null; has_more: boolean };
}

/**
 * A cursor-paged list. Iterate it (`for await (const item of list)`) to follow `page.next_cursor` through every
 * page, a page at a time; `firstPage()` reads one page; `toArray({ limit })` collects up to `limit` items.
 * Nothing is requested until one of these is used.
 */
export class PageList<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  /** The first page only, with its `page.next_cursor`. */
  firstPage(): Promise<Page<T>> {
    return this.fetchPage(undefined);
  }

  /** Every page in order, starting at `cursor` when given. */
  async *pages(cursor?: string): AsyncGenerator<Page<T>, void, undefined> {
    let next = cursor;
    do {
      const page = await this.fetchPage(next);
      yield page;
      next = page.page.has_more && page.page.next_cursor ? page.page.next_cursor : undefined;
    } while (next !== undefined);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.items;
  }

  /** Up to `limit` items, following pages as needed. */
  async toArray({ limit }: { limit: number }): Promise<T[]> {
    if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`limit must be a whole number, got ${limit}`);
    const items: T[] = [];
    if (limit === 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }
}
