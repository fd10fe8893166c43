import { createServer } from "node:net";
import postgres from "postgres";
import { randomBase62 } from "../../src/lib/random.ts";

/**
 * A PostgreSQL cluster of its own (Debian's pg_createcluster), so a drill can stop and start the server
 * without touching the one every other test shares. Needs root and postgresql-common.
 */
export interface PrivateCluster {
  name: string;
  port: number;
  /** The URL of `database` on this cluster. */
  url(database: string): string;
  createDatabase(database: string): Promise<string>;
  /** `pg_ctlcluster stop -m fast`: open sessions are ended, the server goes away. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and removes its data directory. */
  drop(): Promise<void>;
}

export async function run(cmd: string[]): Promise<void> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${await new Response(proc.stderr).text()}`);
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** True when this machine can create clusters: Debian's tools are there and we are root. */
export function canCreateClusters(): boolean {
  return Boolean(Bun.which("pg_createcluster")) && process.getuid?.() === 0;
}

export async function createPrivateCluster(options: ClusterOptions & { start?: boolean } = {}): Promise<PrivateCluster> {
  const version = options.version ?? "15";
  const name = `vend_drill_${randomBase62(8).toLowerCase()}`;
  const port = await freePort();
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const settings = Object.entries({ max_connections: "60", ...options.settings }).flatMap(([key, value]) => [
    "-o",
    `${key}=${value}`,
  ]);
  await run(["pg_createcluster", version, name, "-p", String(port), ...settings, "--", "--auth=trust"]);
  const cluster: PrivateCluster = {
    name,
    port,
    url,
    async createDatabase(database) {
      const sql = postgres(url("postgres"), { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`create database ${database}`);
      } finally {
        await sql.end({ timeout: 5 });
      }
      return url(database);
    },
    stop: () => run(["pg_ctlcluster", version, name, "stop", "-m", "fast"]),
    start: () => run(["pg_ctlcluster", version, name, "start"]),
    // A server killed outright is not "running" to pg_ctlcluster: its directory is dropped without the stop.
    drop: () => run(["pg_dropcluster", "--stop", version, name]).catch(() => run(["pg_dropcluster", version, name])),
  };
  if (options.start === false) return cluster;
  try {
    await cluster.start();
  } catch (error) {
    await cluster.drop().catch(() => undefined);
    throw error;
  }
  return cluster;
}

export interface ClusterOptions {
  version?: string;
  /** Extra server settings (`-o name=value` to pg_createcluster), e.g. `{ synchronous_standby_names: "*" }` (pg_createcluster quotes values). */
  settings?: Record<string, string>;
}

/**
 * A streaming standby of `primary` (pg_basebackup -R), a cluster of its own on a free port, started and
 * replaying. `applicationName` is what the primary's `synchronous_standby_names` matches.
 */
export async function createStandby(
  primary: PrivateCluster,
  options: { version?: string; applicationName?: string } = {},
): Promise<PrivateCluster & { promote(): Promise<void> }> {
  const version = options.version ?? "15";
  const standby = await createPrivateCluster({ version, start: false });
  const dataDir = `/var/lib/postgresql/${version}/${standby.name}`;
  const conninfo = `host=127.0.0.1 port=${primary.port} user=postgres application_name=${options.applicationName ?? standby.name}`;
  try {
    // pg_basebackup fills the new cluster's (emptied) data directory; its settings stay in /etc/postgresql.
    await run(["find", dataDir, "-mindepth", "1", "-delete"]);
    const backup = ["pg_basebackup", "-d", conninfo, "-D", dataDir, "-R", "-X", "stream", "-c", "fast"];
    await run(["runuser", "-u", "postgres", "--", ...backup]);
    await standby.start();
  } catch (error) {
    await standby.drop().catch(() => undefined);
    throw error;
  }
  return { ...standby, promote: () => run(["pg_ctlcluster", version, standby.name, "promote"]) };
}
