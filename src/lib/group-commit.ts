/**
 * Group commit per key: the first item for a key runs at once, alone; items for that key arriving while
 * it runs gather, and run together as ONE batch when it ends (up to `maxBatch` per batch, in arrival
 * order). An idle key adds no wait; a busy one pays one statement per batch instead of one per item.
 * `run` answers each item of a batch in order (a value or an Error for that item alone); when it
 * throws, every item of the batch gets that error.
 */
export function groupCommit<Item, Result>(
  run: (key: string, items: Item[]) => Promise<(Result | Error)[]>,
  maxBatch: number,
): (key: string, item: Item) => Promise<Result> {
  interface Waiting {
    item: Item;
    resolve(result: Result): void;
    reject(error: unknown): void;
  }
  const queues = new Map<string, Waiting[]>();

  async function drain(key: string, queue: Waiting[]): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      try {
        const results = await run(
          key,
          batch.map((w) => w.item),
        );
        batch.forEach((waiting, i) => {
          const result = results[i];
          if (result instanceof Error) waiting.reject(result);
          else waiting.resolve(result as Result);
        });
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    queues.delete(key);
  }

  return (key, item) =>
    new Promise<Result>((resolve, reject) => {
      const queue = queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      const fresh: Waiting[] = [{ item, resolve, reject }];
      queues.set(key, fresh);
      void drain(key, fresh);
    });
}
