/** The shapes of background work the jobs runner runs: a queue of leased jobs, a periodic task. */

/** One claimed unit of work, ready to run. */
export interface Job {
  /** Groups jobs under a per-key cap (a webhook endpoint's id); none when the queue has no cap. */
  key?: string;
  /** Runs the job to its end. It handles and logs its own failures; a throw is logged by the runner as a bug. */
  run(): Promise<void>;
}

/** What a claim may take. */
export interface ClaimRequest {
  /** Jobs to lease at most (the free slots, or a tick's limit). */
  limit: number;
  /** The queue's per-key cap (`Queue.perKeyLimit`), when it declares one. */
  perKeyLimit?: number;
  /** Jobs this runner already has in flight, by key: the claim takes at most `perKeyLimit` less these for a key. */
  busy: ReadonlyMap<string, number>;
}

/** A queue opened for one run: the background loop's whole life, or one tick. */
export interface QueueSession {
  /** Leases up to `request.limit` due jobs with FOR UPDATE SKIP LOCKED, so runners in any process claim side by side. */
  claim(request: ClaimRequest): Promise<Job[]>;
  /**
   * In how many ms the queue's next job not claimed yet is due, as the last claim saw it, so the loop sleeps
   * until then rather than polling (a NOTIFY still wakes it sooner); undefined: none known.
   */
  nextDueMs?(): number | undefined;
  /**
   * Called once every job claimed in this session has ended. With `release` (a graceful stop) the
   * leases this worker still holds are given back, so another worker may take them at once.
   */
  close(options: { release: boolean }): Promise<void>;
}

/** A kind of leased background work: transactions to process, webhook deliveries to send. */
export interface Queue {
  /** Its name in logs. */
  readonly name: string;
  /** The NOTIFY channel that announces new work; without one the queue is found by the poll and freed slots only. */
  readonly channel?: string;
  /** Jobs in flight at most. */
  readonly concurrency: number;
  /** Claims only when at least this many slots are free, so claims come in batches (default 1). */
  readonly minFreeToClaim?: number;
  /**
   * An adaptive claim size instead of `minFreeToClaim`: a claim takes at most `max` (and the free
   * slots) and is made once `size` slots are free; `size` starts at `min`, doubles (up to `max`) while
   * claims come back full, and halves (down to `min`) when they come back less than half full. Under a
   * backlog claims grow into few large ones; when work trickles in, each is claimed at once.
   */
  readonly claimSize?: { min: number; max: number };
  /** Jobs in flight at most per `Job.key` (the claim enforces it, told what is busy). */
  readonly perKeyLimit?: number;
  /** A session for the background loop (`loop`) or one tick (none). */
  open(loop?: QueueLoop): QueueSession;
}

/** What a session may ask of the loop running it. */
export interface QueueLoop {
  /** Claim again now rather than at the next poll (work became due that no NOTIFY announces). */
  wake(): void;
}

/** Periodic work with nothing to lease: runs at start, then every `everyMs` (measured from the start of a run). */
export interface Task {
  readonly name: string;
  readonly everyMs: number;
  /** One pass; the number of things it handled (a tick adds it to its count). */
  run(): Promise<number>;
}
