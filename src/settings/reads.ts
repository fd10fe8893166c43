/**
 * What each configuration reader learns about a variable as it reads it: the shape its value must have, its
 * default and its bounds. Nothing is kept while the service runs; an environment made by `recordSettingReads`
 * keeps every name asked of it and what the readers said, which is how docs/configuration.md is generated from
 * the code that reads the settings (scripts/configuration-page.ts).
 */
export type SettingKind = "integer" | "boolean" | "duration" | "text" | "http-url" | "postgres-url" | "seconds-list" | "choice";

export interface SettingRead {
  kind: SettingKind;
  /** The value an unset variable stands for, as it would be written; undefined: unset means none, or off. */
  fallback?: string;
  min?: number;
  max?: number;
  /** The fewest characters a set value may have (text). */
  minLength?: number;
  /** The values accepted (choice, boolean). */
  choices?: readonly string[];
  /** `min` and `max` as written (a duration's `1m` and `7d`). */
  bounds?: string;
}

type Env = Record<string, string | undefined>;

/** A recording environment: every name read, in the order first read, with what its reader said of it. */
export interface RecordedReads {
  env: Env;
  reads: Map<string, SettingRead | undefined>;
}

const recorders = new WeakMap<object, Map<string, SettingRead | undefined>>();

/** Tells a recording environment what the reader of `name` expects; on any other environment it does nothing. */
export function noteSettingRead(env: Env, name: string, read: SettingRead): void {
  recorders.get(env)?.set(name, read);
}

/** An environment holding `values` that records each name read from it and what the readers note of it. */
export function recordSettingReads(values: Env = {}): RecordedReads {
  const reads = new Map<string, SettingRead | undefined>();
  const env = new Proxy(values, {
    get(target, name, receiver) {
      if (typeof name === "string" && !reads.has(name)) reads.set(name, undefined);
      return Reflect.get(target, name, receiver);
    },
  });
  recorders.set(env, reads);
  return { env, reads };
}
