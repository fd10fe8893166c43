/**
 * `vendctl --help` wall time, from spawn to exit, no server needed (issue 13; target: under 300 ms). By hand:
 *   node_modules/.bin/bun bench/cli-startup.ts
 *
 * Sides, each a real process with stdout and stderr piped (not a terminal), XDG_CONFIG_HOME an empty folder:
 *   - `vendctl --help`: cli/vendctl.js run as a command, as `npm link` puts it on PATH (its shell line execs the
 *     pinned Bun on cli/index.ts);
 *   - `node cli/vendctl.js --help`: the same file run by Node, which finds the pinned Bun and spawns it;
 *   - `bun cli/index.ts --help`: the CLI itself, no launcher;
 *   - `npx vendctl --help`: npm resolving the bin first (BENCH_NPX=0 leaves it out: it is slow);
 *   - anchors `node -e 0` and `bun -e 0`: the bare start-up of each runtime, measured in the same run.
 * Interleaved rounds: every round runs each side once, in an order rotated each round, after one warm-up round
 * that is not counted. Prints min / median / max per side of the wall time and of the CPU time (user + system,
 * the process and the children it waited for; steadier than wall time on a busy machine), the launcher's own
 * cost (each launcher minus index.ts, per round) and the ratios to the anchors. Env: BENCH_ROUNDS (15), BENCH_NPX (1).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { envNumber } from "./lib/cleanup.ts";
import { printFigure, printRatio } from "./lib/stats.ts";

const root = join(import.meta.dir, "..");
const bun = join(root, "node_modules", ".bin", "bun");
const rounds = envNumber("BENCH_ROUNDS", 15);
const withNpx = process.env.BENCH_NPX !== "0";

interface Side {
  label: string;
  argv: string[];
  /** A word its stdout must contain, so a side that fails fast is not timed as a fast one. */
  expect?: string;
}

const sides: Side[] = [
  { label: "vendctl --help (the bin)", argv: [join(root, "cli/vendctl.js"), "--help"], expect: "Usage: vendctl" },
  { label: "node cli/vendctl.js --help", argv: ["node", join(root, "cli/vendctl.js"), "--help"], expect: "Usage: vendctl" },
  { label: "bun cli/index.ts --help", argv: [bun, join(root, "cli/index.ts"), "--help"], expect: "Usage: vendctl" },
  ...(withNpx ? [{ label: "npx vendctl --help", argv: ["npx", "vendctl", "--help"], expect: "Usage: vendctl" }] : []),
  { label: "anchor: node -e 0", argv: ["node", "-e", "0"] },
  { label: "anchor: bun -e 0", argv: [bun, "-e", "0"] },
];

const configHome = mkdtempSync(join(tmpdir(), "vend-cli-startup-"));
const env = { ...process.env, XDG_CONFIG_HOME: configHome, NO_COLOR: "1" };

/** Milliseconds from spawn to exit, and of CPU. */
function timeOnce(side: Side): { wall: number; cpu: number } {
  const started = performance.now();
  const run = Bun.spawnSync(side.argv, { cwd: root, env, stdout: "pipe", stderr: "pipe" });
  const wall = performance.now() - started;
  const out = run.stdout.toString();
  if (run.exitCode !== 0 || (side.expect && !out.includes(side.expect))) {
    throw new Error(`${side.label}: exit ${run.exitCode}\n${out}${run.stderr.toString()}`);
  }
  return { wall, cpu: Number(run.resourceUsage.cpuTime.total) / 1000 };
}

function report(title: string, times: Map<Side, number[]>): void {
  const of = (label: string) => times.get(sides.find((side) => side.label === label) as Side) ?? [];
  console.log(`\n${title}, ${rounds} rounds (min / median / max)`);
  for (const side of sides) printFigure(side.label, of(side.label), "ms", 36);
  const cli = of("bun cli/index.ts --help");
  const minusCli = (label: string) => of(label).map((ms, i) => ms - (cli[i] ?? Number.NaN));
  printFigure("launcher: the bin − index.ts", minusCli("vendctl --help (the bin)"), "ms", 36);
  printFigure("launcher: node vendctl.js − index.ts", minusCli("node cli/vendctl.js --help"), "ms", 36);
  printRatio("the bin / bun -e 0", of("vendctl --help (the bin)"), of("anchor: bun -e 0"), "none");
  printRatio("node vendctl.js / node -e 0", of("node cli/vendctl.js --help"), of("anchor: node -e 0"), "none");
  printRatio("index.ts / bun -e 0", of("bun cli/index.ts --help"), of("anchor: bun -e 0"), "none");
}

try {
  const wall = new Map<Side, number[]>(sides.map((side) => [side, []]));
  const cpu = new Map<Side, number[]>(sides.map((side) => [side, []]));
  for (let round = 0; round <= rounds; round++) {
    const order = sides.map((_, i) => sides[(i + round) % sides.length] as Side);
    for (const side of order) {
      const measured = timeOnce(side);
      if (round === 0) continue;
      wall.get(side)?.push(measured.wall);
      cpu.get(side)?.push(measured.cpu);
    }
  }
  report("wall time, spawn to exit (target: vendctl under 300 ms)", wall);
  report("CPU time, user + system", cpu);
} finally {
  rmSync(configHome, { recursive: true, force: true });
}
