/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for tests: every line must be a
 * comment, HELP, TYPE or a well-formed sample, and every sample must belong to a declared family.
 * (The one parser on npm, parse-prometheus-text-format, merges the series of a labelled histogram.)
 */

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const namePattern = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const sampleLine = new RegExp(`^(${namePattern})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+-?\\d+)?$`);
const labelPair = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function parseValue(raw: string, line: string): number {
  if (raw === "+Inf") return Number.POSITIVE_INFINITY;
  if (raw === "-Inf") return Number.NEGATIVE_INFINITY;
  // prom-client writes `Nan` (an event-loop monitor with no sample yet); Prometheus parses values with Go's
  // ParseFloat, which takes NaN in any case.
  if (raw.toLowerCase() === "nan") return Number.NaN;
  const value = Number(raw);
  if (raw === "" || Number.isNaN(value)) throw new Error(`not a sample value: ${line}`);
  return value;
}

function parseLabels(raw: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  labelPair.lastIndex = 0;
  while (labelPair.lastIndex < raw.length) {
    const match = labelPair.exec(raw);
    if (!match) throw new Error(`malformed labels: ${line}`);
    const [, key = "", value = ""] = match;
    labels[key] = value.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
    if (match[3] === "") break;
  }
  return labels;
}

/** The sample names a family of `type` may carry. */
function sampleNames(family: Family): string[] {
  if (family.type === "histogram") return [`${family.name}_bucket`, `${family.name}_sum`, `${family.name}_count`];
  if (family.type === "summary") return [family.name, `${family.name}_sum`, `${family.name}_count`];
  return [family.name];
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string) => {
    let found = families.get(name);
    if (!found) {
      found = { name, type: "untyped", help: "", samples: [] };
      families.set(name, found);
    }
    return found;
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name = "", rest = ""] = meta;
      if (kind === "HELP") family(name).help = rest;
      else if (["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) family(name).type = rest;
      else throw new Error(`unknown type: ${line}`);
      continue;
    }
    if (line.startsWith("#")) continue;
    const match = sampleLine.exec(line);
    if (!match) throw new Error(`malformed sample: ${line}`);
    const [, name = "", labels = "", value = ""] = match;
    const owner = [...families.values()].find((f) => sampleNames(f).includes(name));
    if (!owner) throw new Error(`sample of no declared family: ${line}`);
    owner.samples.push({ name, labels: parseLabels(labels, line), value: parseValue(value, line) });
  }
  return families;
}

/** The sum of `family`'s samples named `sample` (default: the family's own) whose labels include `labels`. */
export function total(
  families: Map<string, Family>,
  family: string,
  labels: Record<string, string> = {},
  sample = family,
): number {
  const samples = families.get(family)?.samples ?? [];
  return samples
    .filter((s) => s.name === sample && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** A histogram's observation count for the series whose labels include `labels`. */
export const observations = (families: Map<string, Family>, family: string, labels: Record<string, string> = {}) =>
  total(families, family, labels, `${family}_count`);
