import { chmod, chown, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./private-cluster.ts";
import { type StartedProcess, spawnProcess } from "./process.ts";

/** Debian's PgBouncer, run as the postgres user (it refuses root), in front of one database. */
export interface Pgbouncer {
  port: number;
  /** The URL clients use: the pooled database under the same name. */
  url: string;
  process: StartedProcess;
  stop(): Promise<void>;
}

export function canRunPgbouncer(): boolean {
  return Boolean(Bun.which("pgbouncer")) && process.getuid?.() === 0;
}

/**
 * PgBouncer in `poolMode` in front of `databaseUrl` (trust authentication, user postgres): `serverSlots`
 * server connections at most for the database, `maxClients` client connections.
 */
export async function startPgbouncer(
  databaseUrl: string,
  options: {
    poolMode?: "transaction" | "session";
    serverSlots?: number;
    maxClients?: number;
    /** Client users besides postgres (trust authentication; PgBouncer still wants each in its auth file). */
    users?: string[];
  } = {},
): Promise<Pgbouncer> {
  const upstream = new URL(databaseUrl);
  const database = upstream.pathname.slice(1);
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "vend-pgbouncer-"));
  const ini = join(dir, "pgbouncer.ini");
  const users = [...new Set(["postgres", ...(options.users ?? [])])];
  await writeFile(join(dir, "userlist.txt"), users.map((user) => `"${user}" ""\n`).join(""));
  await writeFile(
    ini,
    `[databases]
${database} = host=${upstream.hostname} port=${upstream.port || 5432} dbname=${database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, "userlist.txt")}
pool_mode = ${options.poolMode ?? "transaction"}
default_pool_size = ${options.serverSlots ?? 10}
max_db_connections = ${options.serverSlots ?? 10}
max_client_conn = ${options.maxClients ?? 1000}
logfile = ${join(dir, "pgbouncer.log")}
pidfile = ${join(dir, "pgbouncer.pid")}
`,
  );
  await chown(dir, 0, 0);
  await chmod(dir, 0o777);
  for (const file of ["pgbouncer.ini", "userlist.txt"]) await chmod(join(dir, file), 0o644);
  const started = spawnProcess(["runuser", "-u", "postgres", "--", "pgbouncer", ini], { PATH: process.env.PATH });
  const url = `postgres://postgres@127.0.0.1:${port}/${database}`;
  // Ready once it accepts a connection.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answered = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } })
      .then((socket) => {
        socket.end();
        return true;
      })
      .catch(() => false);
    if (answered) break;
    if (Date.now() > deadline || started.proc.exitCode !== null) throw new Error(`pgbouncer did not start: ${started.output()}`);
    await Bun.sleep(100);
  }
  return {
    port,
    url,
    process: started,
    // SIGTERM to PgBouncer itself (runuser does not pass signals on): it closes every connection at once.
    async stop() {
      const pid = Number((await readFile(join(dir, "pgbouncer.pid"), "utf8").catch(() => "")).trim());
      try {
        if (pid > 0) process.kill(pid, "SIGTERM");
        else started.proc.kill("SIGKILL");
      } finally {
        await started.finished();
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
