/** A command of `vend` (src/main.ts), as typed: `vend` alone is the development default (the API and the worker). */
export type VendCommand =
  | "vend"
  | "vend serve"
  | "vend work"
  | "vend migrate"
  | "vend operator create"
  | "vend retention run"
  | "vend partition"
  | "vend --version";

/** The sections of docs/configuration.md, in order. */
export const settingGroups = [
  "Database",
  "Embedded database",
  "HTTP API",
  "Limits and keys",
  "Worker",
  "Webhooks",
  "Provider callbacks",
  "Providers",
  "Retention",
  "Request logs",
  "Logs, metrics and tracing",
  "Build",
] as const;
export type SettingGroup = (typeof settingGroups)[number];

/** What an environment variable is for. Its shape, default and bounds come from its reader (src/settings/reads.ts). */
export interface SettingDoc {
  group: SettingGroup;
  /** The commands whose behaviour it changes (every command but `vend partition` validates them all at start). */
  usedBy: readonly VendCommand[];
  /** What it does, in Markdown: one paragraph. */
  does: string;
  /**
   * A valid value, for a variable whose value makes the readers go on to others (`VTU_BASE_URL`, `DATABASE_READ_URL`)
   * or that those others need: the generator reads the configuration once with every example set, to find them all.
   */
  example?: string;
  /** The default of a variable no reader in src/config.ts notes (read where it is used). */
  fallback?: string;
  /** The values accepted, for a variable no reader in src/config.ts notes. */
  values?: string;
}

export const api: readonly VendCommand[] = ["vend", "vend serve"];
export const worker: readonly VendCommand[] = ["vend", "vend work"];
export const serviceProcesses: readonly VendCommand[] = ["vend", "vend serve", "vend work"];
/** Every command that opens the database the settings name. */
export const databaseCommands: readonly VendCommand[] = [
  ...serviceProcesses,
  "vend migrate",
  "vend operator create",
  "vend retention run",
];
