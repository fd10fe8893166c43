/**
 * CPU time of a process and of the PostgreSQL backends serving it, from /proc (Linux only). A backend is the
 * process's when its `client_port` in `pg_stat_activity` is the local port of one of the process's own TCP
 * sockets to the server; the mapping is taken again at each sample, so pool connections that come and go are
 * followed (the CPU of a backend that ended between two samples is not counted).
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import type postgres from "postgres";

/**
 * CPU ms of each thread of `pid`, by thread id; empty when it has gone. Read from each thread's `schedstat`
 * (nanoseconds on the CPU) rather than `stat`'s utime + stime, which move in 10 ms ticks: a process at rest spends
 * a few ms a second, which ticks cannot tell apart. By thread, because the process's own total in `schedstat` is
 * its main thread's, and a sum over the threads alive at each sample falls when a thread ends (Bun ends idle
 * compiler threads): a thread that ends between two samples takes only its time since the earlier one with it.
 */
export function threadCpuMs(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  try {
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      try {
        threads.set(Number(thread), Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]) / 1e6);
      } catch {}
    }
  } catch {}
  return threads;
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
  /** CPU ms of each of the process's threads, by thread id. */
  process: Map<number, number>;
  /** CPU ms of each backend seen, by its pid (a backend is one thread). */
  backends: Map<number, number>;
}

/** One reading of `pid` and its backends (`sql`: a connection of the bench's own to the same server). */
export async function sampleCpu(sql: postgres.Sql, pid: number, serverPort: number): Promise<CpuSample> {
  const ports = clientPorts(pid, serverPort);
  const rows = await sql<{ pid: number; client_port: number }[]>`
    select pid, client_port from pg_stat_activity where client_port = any(${[...ports]}::int[])`;
  const sum = (threads: Map<number, number>) => [...threads.values()].reduce((a, b) => a + b, 0);
  return { process: threadCpuMs(pid), backends: new Map(rows.map((r) => [r.pid, sum(threadCpuMs(r.pid))])) };
}

/** CPU ms between two readings of the same ids; an id first seen in the later one began after the earlier one. */
function spentBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [id, total] of after) ms += total - (before.get(id) ?? 0);
  return ms;
}

/** CPU ms spent between two samples: the process's (all its threads), and its backends'. */
export function cpuBetween(before: CpuSample, after: CpuSample): { process: number; backends: number } {
  return { process: spentBetween(before.process, after.process), backends: spentBetween(before.backends, after.backends) };
}
