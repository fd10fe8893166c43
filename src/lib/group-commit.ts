/**
 * Group commit: items submitted from concurrent callers go out together through `run`, one call at a
 * time. While one call is in flight the next items gather; when it returns, all of them (up to
 * `maxBatch`) go as the next call. An item submitted while nothing is in flight goes at once (after
 * the current microtask, so items submitted together go together): no added latency when idle.
 * `run` answers each item in order, settled (a rejection fails that item only); if `run` itself
 * throws, every item of that call fails with its error.
 */
export class GroupCommit<I, O> {
  private readonly waiting: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly run: (items: I[]) => Promise<PromiseSettledResult<O>[]>,
    private readonly maxBatch: number,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.flushing) return;
      this.flushing = true;
      queueMicrotask(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxBatch);
        try {
          const results = await this.run(batch.map((waiting) => waiting.item));
          batch.forEach((waiting, n) => {
            const result = results[n];
            if (result?.status === "fulfilled") waiting.resolve(result.value);
            else waiting.reject(result ? result.reason : new Error("no result"));
          });
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
