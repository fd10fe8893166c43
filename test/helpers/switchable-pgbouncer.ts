import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./private-cluster.ts";
import { type StartedProcess, spawnProcess } from "./process.ts";

/**
 * Debian's PgBouncer (1.18) as an operator runs it through a failover: an admin console (`admin_users =
 * postgres`, reached with psql), a Unix socket directory (online restart needs one), `server_login_retry` and
 * `server_connect_timeout` chosen, and one database entry that can be pointed at another server.
 */
export interface SwitchablePgbouncer {
  port: number;
  /** The pooled database's URL for `user`. */
  url(user: string): string;
  /** One admin console command (`SHOW SERVERS`, `PAUSE vend`, …) through psql; its output, unaligned. */
  admin(command: string): Promise<string>;
  /** Rewrites the database's `host=`/`port=` in pgbouncer.ini and sends `RELOAD`, as after a promotion. */
  repoint(host: string, port: number): Promise<void>;
  /**
   * `pgbouncer -R`: a new process takes the listening socket and every client and server connection over
   * from the running one (SUSPEND, SHOW FDS, SHUTDOWN on its Unix socket); resolves once the old one exited.
   */
  restartOnline(): Promise<void>;
  /** The current process's log so far. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

export interface SwitchablePgbouncerOptions {
  database: string;
  host: string;
  port: number;
  /** Client users (trust authentication; PgBouncer still wants each in its auth file). `postgres` is added. */
  users: string[];
  serverSlots?: number;
  serverLoginRetrySeconds?: number;
  serverConnectTimeoutSeconds?: number;
}

export async function startSwitchablePgbouncer(options: SwitchablePgbouncerOptions): Promise<SwitchablePgbouncer> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "vend-pgbouncer-"));
  const ini = join(dir, "pgbouncer.ini");
  const users = [...new Set(["postgres", ...options.users])];
  const slots = options.serverSlots ?? 10;
  const config = (host: string, serverPort: number) => `[databases]
${options.database} = host=${host} port=${serverPort} dbname=${options.database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir = ${dir}
auth_type = trust
auth_file = ${join(dir, "userlist.txt")}
admin_users = postgres
pool_mode = transaction
default_pool_size = ${slots}
max_db_connections = ${slots}
max_client_conn = 1000
server_login_retry = ${options.serverLoginRetrySeconds ?? 1}
server_connect_timeout = ${options.serverConnectTimeoutSeconds ?? 2}
logfile = ${join(dir, "pgbouncer.log")}
pidfile = ${join(dir, "pgbouncer.pid")}
`;
  await writeFile(join(dir, "userlist.txt"), users.map((user) => `"${user}" ""\n`).join(""));
  await writeFile(ini, config(options.host, options.port));
  // PgBouncer runs as postgres (it refuses root) and writes its log, pidfile and socket here.
  await chmod(dir, 0o777);
  for (const file of ["pgbouncer.ini", "userlist.txt"]) await chmod(join(dir, file), 0o644);

  // `-u postgres` (PgBouncer refuses root): the process is PgBouncer itself, so signals reach it.
  const launched: StartedProcess[] = [];
  const launch = (extra: string[]) => {
    const started = spawnProcess(["pgbouncer", "-u", "postgres", ...extra, ini], { PATH: process.env.PATH });
    launched.push(started);
    return started;
  };
  let current = launch([]);
  const admin = async (command: string): Promise<string> => {
    const psql = Bun.spawn(
      ["psql", `host=127.0.0.1 port=${port} user=postgres dbname=pgbouncer`, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", command],
      { stdout: "pipe", stderr: "pipe", stdin: "ignore" },
    );
    const [code, out, err] = await Promise.all([psql.exited, new Response(psql.stdout).text(), new Response(psql.stderr).text()]);
    if (code !== 0) throw new Error(`pgbouncer ${command}: psql exited ${code}: ${err}`);
    return out;
  };
  const bouncer: SwitchablePgbouncer = {
    port,
    url: (user) => `postgres://${user}@127.0.0.1:${port}/${options.database}`,
    admin,
    async repoint(host, serverPort) {
      await writeFile(ini, config(host, serverPort));
      await admin("RELOAD");
    },
    async restartOnline() {
      const old = current;
      current = launch(["-R"]);
      const deadline = Date.now() + 20_000;
      // Done when the old process has handed everything over and exited.
      while (old.proc.exitCode === null) {
        if (Date.now() > deadline || current.proc.exitCode !== null)
          throw new Error(`online restart did not finish: ${current.output()}${await bouncer.log()}`);
        await Bun.sleep(10);
      }
    },
    log: () => readFile(join(dir, "pgbouncer.log"), "utf8").catch(() => ""),
    // SIGTERM: PgBouncer closes every connection at once.
    async stop() {
      try {
        await Promise.all(launched.map((started) => started.stop("SIGTERM")));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    // Ready once its admin console answers.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const answered = await admin("SHOW VERSION").then(
        () => true,
        () => false,
      );
      if (answered) break;
      if (Date.now() > deadline || current.proc.exitCode !== null)
        throw new Error(`pgbouncer did not start: ${current.output()}${await bouncer.log()}`);
      await Bun.sleep(100);
    }
  } catch (error) {
    await bouncer.stop().catch(() => undefined);
    throw error;
  }
  return bouncer;
}
