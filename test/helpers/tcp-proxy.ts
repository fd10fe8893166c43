import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy between the service and PostgreSQL, so a test can cut the network without stopping the
 * server others share. `blackhole()` behaves like a partition: sockets stay open and new connections
 * are accepted, but nothing is forwarded either way (bytes are dropped, as on a dead link). `heal()`
 * forwards again on new connections; connections that lived through the partition stay dead, as TCP
 * connections whose data was lost would.
 */
export interface TcpProxy {
  port: number;
  url(databaseUrl: string): string;
  blackhole(): void;
  heal(): void;
  /** Closes every connection through the proxy (the service opens new ones). */
  disconnectAll(): void;
  /**
   * Passes every chunk through `toServer` before it reaches PostgreSQL, and every answer through `toClient`
   * before it reaches the service (`state` is one object per connection, both ways); undefined forwards
   * unchanged.
   */
  rewrite(rewriters: { toServer: Rewriter; toClient: Rewriter } | undefined): void;
  close(): Promise<void>;
}

export type Rewriter = (chunk: Buffer, state: Record<string, unknown>) => Buffer;

/** A proxy to `target`, listening on 127.0.0.1 at `listenPort` (0: a free port). */
export async function startTcpProxy(target: { host: string; port: number }, listenPort = 0): Promise<TcpProxy> {
  let forwarding = true;
  let rewriters: { toServer: Rewriter; toClient: Rewriter } | undefined;
  const pairs = new Set<{ client: Socket; upstream: Socket; dead: boolean }>();
  const server: Server = createServer((client) => {
    const pair = { client, upstream: connect(target.port, target.host), dead: !forwarding };
    const state: Record<string, unknown> = {};
    pairs.add(pair);
    client.on("data", (chunk) => {
      if (!pair.dead) pair.upstream.write(rewriters ? rewriters.toServer(chunk, state) : chunk);
    });
    pair.upstream.on("data", (chunk) => {
      if (!pair.dead) client.write(rewriters ? rewriters.toClient(chunk, state) : chunk);
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      pair.upstream.destroy();
    };
    client.on("close", end);
    client.on("error", end);
    pair.upstream.on("close", () => {
      if (!pair.dead) end();
    });
    pair.upstream.on("error", () => {
      if (!pair.dead) end();
    });
  });
  await new Promise<void>((resolve) => server.listen(listenPort, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    blackhole() {
      forwarding = false;
      for (const pair of pairs) pair.dead = true;
    },
    heal() {
      forwarding = true;
    },
    disconnectAll() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
    },
    rewrite(given) {
      rewriters = given;
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
