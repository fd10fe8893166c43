/**
 * The nudge/wait pair of every background loop. A nudge wakes a waiting loop at once; a nudge that
 * comes while the loop is busy is remembered, so its next wait returns at once and nothing
 * announced meanwhile waits for the poll.
 */
export class Wakeup {
  #nudged = false;
  #wake: (() => void) | undefined;

  readonly nudge = (): void => {
    this.#nudged = true;
    this.#wake?.();
  };

  /** Forgets earlier nudges: call it just before looking for work, since that look sees what they announced. */
  clear(): void {
    this.#nudged = false;
  }

  /** Resolves at the first nudge (at once if one came since `clear`) or after `ms`. */
  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.#nudged) return resolve();
      const timer = setTimeout(resolve, Math.max(0, ms));
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      this.#wake = undefined;
    });
  }
}
