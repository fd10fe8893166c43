/** Min / median / max over rounds, and the lines every bench prints. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { min: sorted[0] ?? Number.NaN, median, max: sorted[sorted.length - 1] ?? Number.NaN };
}

export function formatSpread(s: Spread, digits = 0): string {
  return `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;
}

/** `label  min / median / max unit` over the rounds. */
export function printFigure(label: string, values: number[], unit: string, width = 40): void {
  console.log(`${label.padEnd(width)} ${formatSpread(spread(values)).padStart(22)} ${unit}`);
}

/** Per-round ratios subject/anchor (rounds interleave, so round i of each side ran side by side). */
export function printRatio(label: string, subject: number[], anchor: number[], target: string): Spread {
  const ratios = subject.map((value, i) => value / (anchor[i] ?? Number.NaN));
  const s = spread(ratios);
  console.log(`ratio ${label}: ${formatSpread(s, 2)} (min / median / max over ${ratios.length} rounds; target ${target})`);
  return s;
}
