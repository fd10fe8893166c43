import { connect, Socket } from "node:net";

/**
 * postgres.js waits for as long as TCP keeps a socket open for the answer to a query it has sent. When
 * the path to the server goes silent (a partition, a paused host, a dead proxy) that is minutes to hours,
 * and statement_timeout cannot help: the server never sees the query. This watchdog owns the pool's
 * sockets: when one owes a reply and has heard nothing for `stallMs`, it asks whether the server answers
 * at all (a bare protocol handshake on a new connection, bounded by `probeTimeoutMs`). If not, every
 * socket of the pool is closed with an ETIMEDOUT error, so the queries waiting on them fail (503) and
 * the next ones open fresh connections, bounded by connect_timeout. A slow statement on a healthy server
 * is left to statement_timeout; a socket silent past `silentLimitMs` (beyond statement_timeout, so the
 * server would have answered) is closed even when the server answers others.
 *
 * Once the server is found silent, new connections fail at once (a circuit breaker) instead of each
 * waiting out connect_timeout, and a handshake is started every few hundred milliseconds (without
 * waiting for the previous ones): the first one answered closes the circuit, so the service recovers
 * as soon as the server is back. Sockets opened into the outage whose start-up was never answered are
 * closed once a new connection is answered.
 */

const maxProbes = 8;

export type Target = { host: string; port: number } | { path: string };

export interface ReplyWatchdogOptions {
  /**
   * Where the pool connects: one server, or the hosts of a failover URL, tried in turn by each new
   * connection (postgres.js rotates hosts itself only on its own sockets).
   */
  targets: Target[];
  stallMs: number;
  probeTimeoutMs: number;
  silentLimitMs: number;
  onUnreachable?: (closed: number) => void;
  /** A socket was closed because its server answered that it is read-only (a standby, or a primary being fenced). */
  onReadOnly?: () => void;
}

interface Watched {
  /** When the socket last started owing a reply (a write after the last byte received). */
  owedSince: number | undefined;
  /** False until the server has sent anything on it: its start-up is still unanswered. */
  heardFrom: boolean;
}

export class ReplyWatchdog {
  private readonly sockets = new Map<Socket, Watched>();
  /** Runs only while a socket owes a reply or the server is found silent: an idle pool costs no wake-ups. */
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly tickMs: number;
  private stopped = false;
  /** Handshakes under way; while the server is silent a new one starts every tick, so healing is seen at once. */
  private probes = 0;
  /** When the latest handshake that was answered started: an older unanswered one says nothing new. */
  private answeredProbeStartedAt = Number.NEGATIVE_INFINITY;
  private unreachable = false;
  /** The host the next connection tries (failover URLs: each new connection moves on after a failed one). */
  private nextTarget = 0;

  constructor(private readonly options: ReplyWatchdogOptions) {
    this.tickMs = Math.max(50, Math.min(250, options.stallMs / 4));
  }

  private arm(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.check(), this.tickMs);
    this.timer.unref();
  }

  /** The postgres.js `socket` option: a plain TCP (or Unix) socket this watchdog keeps an eye on. */
  readonly socket = (): Socket => {
    if (this.unreachable) {
      const refused = closingAfterPendingWrites(new Socket());
      // After postgres.js has attached its listeners, so the query waiting for this connection fails.
      setImmediate(() => closeWithError(refused, "the server did not answer a moment ago"));
      return refused;
    }
    const { targets } = this.options;
    const target = targets[this.nextTarget % targets.length] as Target;
    const socket = closingAfterPendingWrites(connectTo(target));
    // A connection that fails or is turned away (a standby, under target_session_attrs) sends the next one on.
    let usable = false;
    let standby = false;
    socket.once("close", () => {
      if (!usable && targets.length > 1) this.nextTarget = (targets.indexOf(target) + 1) % targets.length;
    });
    const watched: Watched = { owedSince: undefined, heardFrom: false };
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    socket.write = ((...args: unknown[]) => {
      if (watched.owedSince === undefined) {
        watched.owedSince = performance.now();
        this.arm();
      }
      return write(...args);
    }) as Socket["write"];
    socket.on("data", (chunk: Buffer) => {
      watched.owedSince = undefined;
      watched.heardFrom = true;
      // ReadyForQuery after authentication from a server not in recovery: this host took the connection.
      if (chunk.includes(hotStandbyOn)) standby = true;
      if (!usable && !standby && chunk.includes(readyForQuery)) usable = true;
      // Error 25006: the server is read-only (a standby that took the connection, or a primary being fenced):
      // drop the connection once its answer is read, so the next one looks for the primary.
      if (chunk.includes(readOnlyError)) {
        usable = false;
        setImmediate(() => closeWithError(socket, "the server is read-only"));
        this.options.onReadOnly?.();
      }
    });
    socket.once("close", () => this.sockets.delete(socket));
    this.sockets.set(socket, watched);
    return socket;
  };

  /** The last handshake went unanswered: closing the pool need not wait for anything. */
  get serverUnreachable(): boolean {
    return this.unreachable;
  }

  /** Connections of the pool with a statement in flight (a reply owed). */
  get owingReplies(): number {
    let owing = 0;
    for (const [socket, watched] of this.sockets) if (!socket.destroyed && watched.owedSince !== undefined) owing += 1;
    return owing;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    const now = performance.now();
    const stalled: Socket[] = [];
    let owing = false;
    for (const [socket, watched] of this.sockets) {
      if (socket.destroyed) {
        this.sockets.delete(socket);
        continue;
      }
      if (watched.owedSince === undefined) continue;
      owing = true;
      const silentFor = now - watched.owedSince;
      if (silentFor >= this.options.silentLimitMs) closeWithError(socket, `no reply for ${Math.round(silentFor)} ms`);
      else if (silentFor >= this.options.stallMs) stalled.push(socket);
    }
    if (!owing && !this.unreachable) {
      // Nothing to watch until the next write (which arms the timer again).
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    if (!(stalled.length > 0 || this.unreachable) || this.probes >= maxProbes) return;
    if (!this.unreachable && this.probes > 0) return;
    this.probes += 1;
    const startedAt = now;
    void anyAnswersHandshake(this.options.targets, this.options.probeTimeoutMs).then((answers) => {
      this.probes -= 1;
      if (answers) {
        this.answeredProbeStartedAt = Math.max(this.answeredProbeStartedAt, startedAt);
        this.unreachable = false;
        // A new connection was answered at once while these never heard back from their start-up: no slow
        // statement explains that, they were opened into the outage and are dead.
        for (const socket of stalled) if (!this.sockets.get(socket)?.heardFrom) closeWithError(socket, "start-up never answered");
        return;
      }
      // A later handshake was answered: the server came back while this one waited on the silence.
      if (this.answeredProbeStartedAt > startedAt) return;
      const sockets = [...this.sockets.keys()];
      this.sockets.clear();
      for (const socket of sockets) closeWithError(socket, "the server does not answer");
      if (!this.unreachable) this.options.onUnreachable?.(sockets.length);
      this.unreachable = true;
      // Silent: a handshake every tick until one is answered, with or without a socket owing.
      this.arm();
    });
  }
}

/**
 * postgres.js batches a write until the next check phase (setImmediate) and, when the socket closes
 * before that, cancels the flush without forgetting it: its next connection then never sends its
 * start-up message and waits out connect_timeout, again and again, long after the server is back.
 * Delivering `close` one check phase later lets the pending flush run first (onto the dead socket, which
 * fails the query with a socket error: 503), so the connection starts clean. A write batched after that
 * (a transaction's ROLLBACK, say) met the same fate: postgres.js itself is now patched for it
 * (patches/postgres+3.4.9.patch, test/process/driver-reconnect.test.ts).
 */
function closingAfterPendingWrites(socket: Socket): Socket {
  const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
  socket.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event !== "close") return emit(event, ...args);
    setImmediate(() => emit(event, ...args));
    return true;
  }) as Socket["emit"];
  return socket;
}

function connectTo(target: Target): Socket {
  return "path" in target ? connect({ path: target.path }) : connect({ host: target.host, port: target.port });
}

/** The error reaches the queries waiting on the socket; a socket the driver has let go of (no listener left) just closes. */
function closeWithError(socket: Socket, reason: string): void {
  if (socket.listenerCount("error") > 0) socket.destroy(unreachableError(reason));
  else socket.destroy();
}

function unreachableError(reason: string): Error {
  return Object.assign(new Error(`Database connection closed: ${reason}`), { code: "ETIMEDOUT" });
}

/**
 * The SQLSTATE field of an ErrorResponse with code 25006 (read_only_sql_transaction). Text values never hold
 * a NUL byte, so these bytes only occur in an error message.
 */
const readOnlyError = Buffer.from("\0C25006\0", "latin1");
/** ParameterStatus `in_hot_standby = on` (PostgreSQL 14 and later, at start-up): a standby. */
const hotStandbyOn = Buffer.from("in_hot_standby\0on\0", "latin1");
/** ReadyForQuery while idle ('Z', length 5, 'I'): the start-up (and any query) is done. */
const readyForQuery = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

async function anyAnswersHandshake(targets: Target[], timeoutMs: number): Promise<boolean> {
  const answers = await Promise.all(targets.map((target) => answersHandshake(target, timeoutMs)));
  return answers.includes(true);
}

/** SSLRequest: any PostgreSQL server answers it with one byte before authentication, and logs nothing. */
const sslRequest = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);

/** True when the server answers a protocol handshake on a new connection within `timeoutMs`. */
export function answersHandshake(target: Target, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTo(target);
    const finish = (answers: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answers);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.once("connect", () => socket.write(sslRequest));
    socket.once("data", () => finish(true));
    socket.once("error", () => finish(false));
    socket.once("close", () => finish(false));
  });
}
