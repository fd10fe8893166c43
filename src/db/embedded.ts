import { existsSync, statfsSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Extension, PGlite, type Transaction } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { embeddedArtifacts, trgmBundleUrl } from "./embedded-artifacts.ts";

/**
 * The embedded engine, made safe to keep running when its storage fails.
 *
 * PostgreSQL answers a storage failure inside a critical section (a WAL file it cannot create or write,
 * a checkpoint on a full or read-only disk) with PANIC and restarts its backends. PGlite has no
 * postmaster to do that: after a PANIC the next statement spins inside WebAssembly forever, holding the
 * JavaScript thread, so no request is answered and not even SIGTERM is handled. `GuardedPglite` refuses
 * every statement after a PANIC (callers get a DATABASE_UNAVAILABLE error, answered 503), and
 * `EmbeddedEngine` reopens the directory (crash recovery replays the WAL) once the disk takes writes again.
 */

/**
 * PGlite runs each protocol exchange on the JavaScript thread, and its promises chain through microtasks
 * only, so a caller that sends statement after statement (the in-process worker through a backlog) never
 * lets the event loop write the answers that finished meanwhile: a batch's 202 waited for the worker's
 * whole backlog. One macrotask turn before each exchange lets those answers (and new requests) through.
 */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

class GuardedPglite extends PGlite {
  failure: Error | undefined;
  /** Protocol exchanges under way (the engine runs one at a time; the others wait their turn). */
  inFlight = 0;
  /** Protocol exchanges so far. */
  exchanges = 0;

  /** The one door into WebAssembly: shut once the engine has PANICked. */
  override execProtocolRawSync(message: Uint8Array): Uint8Array {
    if (this.failure) throw this.failure;
    return super.execProtocolRawSync(message);
  }

  override async execProtocolStream(...args: Parameters<PGlite["execProtocolStream"]>) {
    await yieldToEventLoop();
    return this.watch(super.execProtocolStream(...args));
  }

  override async execProtocol(...args: Parameters<PGlite["execProtocol"]>) {
    await yieldToEventLoop();
    return this.watch(super.execProtocol(...args));
  }

  private async watch<T>(reply: Promise<T>): Promise<T> {
    this.inFlight += 1;
    this.exchanges += 1;
    try {
      return await reply;
    } catch (error) {
      const { severity, message } = error as { severity?: unknown; message?: unknown };
      if (severity === "PANIC" && !this.failure) {
        this.failure = Object.assign(new Error(`The embedded database stopped after a storage failure: ${String(message)}`), {
          code: "DATABASE_UNAVAILABLE",
        });
      }
      throw error;
    } finally {
      this.inFlight -= 1;
    }
  }
}

/** Below this much free space a WAL segment (16 MiB) may not fit: report not ready before PostgreSQL PANICs. */
const minimumFreeBytes = 32 * 1024 * 1024;

/** Throws (ENOSPC, EROFS, EACCES...) when the data directory cannot take a write now. */
export function checkStorage(dataDir: string): void {
  const { bavail, bsize } = statfsSync(dataDir);
  const free = Number(bavail) * Number(bsize);
  if (free < minimumFreeBytes) {
    throw Object.assign(new Error(`Data directory ${dataDir} has only ${Math.floor(free / 1048576)} MiB free`), {
      code: "ENOSPC",
    });
  }
  const probe = join(dataDir, ".vend-write-probe");
  writeFileSync(probe, new Uint8Array(4096), { flush: true });
  unlinkSync(probe);
}

/** How often the engine's work is looked at, and what counts as a quiet look and as a burst of work since the last collection. */
const collectionCheckMs = 5000;
const quietExchanges = 50;
const burstExchanges = 2000;

/**
 * Each statement on the embedded engine leaves protocol buffers and parsed rows behind on the JavaScript
 * heap, and the runtime keeps the heap it grew to: after a burst of work an idle service held 50–90 MB
 * more than before it. Once the engine is quiet again (the worker's polls go on) after a burst, one full
 * collection gives that back.
 */
function collectAfterBursts(exchanges: () => number): () => void {
  let collectedAt = exchanges();
  let lookedAt = collectedAt;
  const timer = setInterval(() => {
    const now = exchanges();
    if (now - lookedAt < quietExchanges && now - collectedAt >= burstExchanges) {
      Bun.gc(true);
      collectedAt = now;
    }
    lookedAt = now;
  }, collectionCheckMs);
  timer.unref();
  return () => clearInterval(timer);
}

type Listener = {
  channel: string;
  onPayload: (payload: string) => void;
  onListening?: () => void;
  stop?: () => Promise<void>;
};

export interface EmbeddedEngineEvents {
  onFailure?(error: Error): void;
  onReopened?(): void;
  /** What the first opening is doing (a first start takes a while on a slow machine), one line per step. */
  onProgress?(step: string): void;
}

/**
 * One PGlite behind a stable face (the object Drizzle holds), so a failed engine can be replaced by a
 * reopened one without rebuilding anything above it. Only what Drizzle and the handle use is forwarded.
 */
export class EmbeddedEngine {
  private engine: GuardedPglite;
  private readonly listeners = new Set<Listener>();
  private reopening: Promise<void> | undefined;
  private closed = false;
  private readonly stopCollecting: () => void;

  private constructor(
    private readonly dataDir: string,
    engine: GuardedPglite,
    private readonly events: EmbeddedEngineEvents,
  ) {
    this.engine = engine;
    // A service's directory; the in-memory engines of tests come and go too quickly to matter.
    this.stopCollecting = dataDir.startsWith("memory://") ? () => {} : collectAfterBursts(() => this.engine.exchanges);
  }

  /** `image`: a data directory dumped by `dump()` to start from (in memory: no initdb, no migrations). */
  static async open(dataDir: string, events: EmbeddedEngineEvents = {}, image?: Blob): Promise<EmbeddedEngine> {
    return new EmbeddedEngine(dataDir, await startEngine(dataDir, events.onProgress, image), events);
  }

  /** The data directory as an uncompressed tarball, for `open(…, image)`. */
  dump(): Promise<Blob> {
    return this.usable().dumpDataDir("none") as Promise<Blob>;
  }

  query<T>(query: string, params?: unknown[], options?: Parameters<PGlite["query"]>[2]) {
    return this.usable().query<T>(query, params, options);
  }

  transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.usable().transaction(callback);
  }

  /** `onListening` runs now and after a reopened engine listens again (notifications of the failed one were lost). */
  async listen(channel: string, onPayload: (payload: string) => void, onListening?: () => void): Promise<() => Promise<void>> {
    const listener: Listener = { channel, onPayload, onListening };
    listener.stop = await this.usable().listen(channel, onPayload);
    this.listeners.add(listener);
    onListening?.();
    return async () => {
      this.listeners.delete(listener);
      if (!this.engine.failure) await listener.stop?.();
    };
  }

  /** True while a statement is under way on the engine (its one connection is in use). */
  get busy(): boolean {
    return this.engine.inFlight > 0;
  }

  /** Ready means: the engine has not failed, answers, and its directory takes a write. */
  async probe(): Promise<void> {
    await this.usable().query("select 1");
    if (!this.dataDir.startsWith("memory://")) checkStorage(this.dataDir);
  }

  /** Never enters a failed engine (it would spin); its files are left to crash recovery on the next open. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopCollecting();
    await this.reopening;
    if (!this.engine.failure) await this.engine.close();
  }

  private usable(): GuardedPglite {
    const failure = this.engine.failure;
    if (!failure) return this.engine;
    if (!this.reopening) {
      this.events.onFailure?.(failure);
      this.reopening = this.reopen().finally(() => {
        this.reopening = undefined;
      });
    }
    throw failure;
  }

  private async reopen(): Promise<void> {
    while (!this.closed) {
      await Bun.sleep(1000);
      if (this.closed) return;
      try {
        checkStorage(this.dataDir);
        const next = await startEngine(this.dataDir);
        for (const listener of this.listeners) listener.stop = await next.listen(listener.channel, listener.onPayload);
        this.engine = next;
        for (const listener of this.listeners) listener.onListening?.();
        this.events.onReopened?.();
        return;
      } catch {
        // Still no room or no write access: try again shortly.
      }
    }
  }
}

/**
 * PostgreSQL's shared buffers live in the WebAssembly heap, which never shrinks: the default 128 MB made an
 * idle service hold 330–370 MB. The embedded database is small and its files sit in the operating
 * system's page cache, so 16 MB (2,048 pages) is plenty.
 */
const embeddedSettings = ["-c", "shared_buffers=16MB"];

async function startEngine(dataDir: string, onProgress?: (step: string) => void, image?: Blob): Promise<GuardedPglite> {
  const creating = !image && (dataDir.startsWith("memory://") || !existsSync(join(dataDir, "PG_VERSION")));
  // The migrations create the extensions the schema uses; PGlite can only create those it was given here.
  const trgm: Extension = {
    ...pg_trgm,
    setup: async (pg, emscriptenOpts) => {
      onProgress?.(`Loading extension ${pg_trgm.name}`);
      // PGlite sets its extensions up first, then runs initdb on a new directory: most of a first start.
      if (creating) onProgress?.("Creating the database files (initdb)");
      const setup = await pg_trgm.setup(pg, emscriptenOpts);
      return setup.bundlePath ? { ...setup, bundlePath: await trgmBundleUrl(setup.bundlePath) } : setup;
    },
  };
  const engine = new GuardedPglite(dataDir, {
    ...(await embeddedArtifacts()),
    extensions: { pg_trgm: trgm },
    startParams: [...PGlite.defaultStartParams, ...embeddedSettings],
    ...(image ? { loadDataDir: image } : {}),
  });
  await engine.waitReady;
  if (creating) onProgress?.("Database files created");
  return engine;
}
