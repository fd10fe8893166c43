/**
 * CPU time of a process and of the PostgreSQL backends serving it, from /proc (Linux only). A backend is the
 * process's when its `client_port` in `pg_stat_activity` is the local port of one of the process's own TCP
 * sockets to the server; the mapping is taken again at each sample, so pool connections that come and go are
 * followed (the CPU of a backend that ended between two samples is not counted).
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import type postgres from "postgres";

/** /proc counts CPU in USER_HZ ticks, 100 a second on Linux. */
const msPerTick = 10;

/** utime + stime of `pid` (all its threads) in ms; 0 when it has gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * msPerTick;
  } catch {
    return 0;
  }
}

/** The local ports of `pid`'s TCP sockets connected to `serverPort`. */
function clientPorts(pid: number, serverPort: number): Set<number> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const match = /^socket:\[(\d+)\]$/.exec(link);
        if (match?.[1]) inodes.add(match[1]);
      } catch {}
    }
  } catch {
    return new Set();
  }
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [local, remote, inode] = [cols[1], cols[2], cols[9]];
      if (!local || !remote || !inode || !inodes.has(inode)) continue;
      if (Number.parseInt(remote.split(":")[1] ?? "", 16) !== serverPort) continue;
      ports.add(Number.parseInt(local.split(":")[1] ?? "", 16));
    }
  }
  return ports;
}

export interface CpuSample {
  process: number;
  /** CPU ms of each backend seen, by its pid. */
  backends: Map<number, number>;
}

/** One reading of `pid` and its backends (`sql`: a connection of the bench's own to the same server). */
export async function sampleCpu(sql: postgres.Sql, pid: number, serverPort: number): Promise<CpuSample> {
  const ports = clientPorts(pid, serverPort);
  const rows = await sql<{ pid: number; client_port: number }[]>`
    select pid, client_port from pg_stat_activity where client_port = any(${[...ports]}::int[])`;
  return { process: processCpuMs(pid), backends: new Map(rows.map((r) => [r.pid, processCpuMs(r.pid)])) };
}

/**
 * CPU ms spent between two samples: the process's, and its backends'. A backend first seen in the later
 * sample connected after the earlier one, so all its CPU falls in between.
 */
export function cpuBetween(before: CpuSample, after: CpuSample): { process: number; backends: number } {
  let backends = 0;
  for (const [pid, ms] of after.backends) backends += ms - (before.backends.get(pid) ?? 0);
  return { process: after.process - before.process, backends };
}
