/**
 * docs/configuration.md, from the code that reads the settings. `loadConfig` is run on recording environments
 * (src/settings/reads.ts): with nothing set, with DATABASE_URL set, and with every example of the catalogue set (so
 * that variables read only once another is set, such as a live provider's, are read too). Each reader notes the
 * variable's shape, default and bounds; src/settings/catalogue.ts says what it does and who uses it. The few
 * variables read straight from `process.env` elsewhere in src/ are found in the source.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/load-config.ts";
import { settingsCatalogue } from "../src/settings/catalogue.ts";
import { recordSettingReads, type SettingRead } from "../src/settings/reads.ts";
import { type SettingDoc, settingGroups } from "../src/settings/setting-doc.ts";
import { code, generatedBy, inline, table } from "./cli-pages.ts";

const root = join(import.meta.dir, "..");

export interface FoundSetting {
  name: string;
  /** What its reader noted; undefined when it is read without one of src/config.ts's readers. */
  read: SettingRead | undefined;
  /** The default with DATABASE_URL set, where it differs from the embedded database's. */
  postgresFallback: string | undefined;
  /** Files under src/ that read it from `process.env` themselves. */
  readDirectly: string[];
}

function examples(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(settingsCatalogue).flatMap(([name, doc]) => (doc.example === undefined ? [] : [[name, doc.example]])),
  );
}

/** Every variable `loadConfig` reads, in the order first read, with what its reader noted. */
export function settingsReadByLoadConfig(): FoundSetting[] {
  const embedded = recordSettingReads({});
  loadConfig(embedded.env);
  const postgres = recordSettingReads({ DATABASE_URL: settingsCatalogue.DATABASE_URL?.example });
  loadConfig(postgres.env);
  const everything = recordSettingReads(examples());
  loadConfig(everything.env);
  const names = new Set([...embedded.reads.keys(), ...postgres.reads.keys(), ...everything.reads.keys()]);
  return [...names].map((name) => {
    const read = embedded.reads.get(name) ?? postgres.reads.get(name) ?? everything.reads.get(name);
    const withPostgres = postgres.reads.get(name)?.fallback;
    return {
      name,
      read,
      postgresFallback: withPostgres !== read?.fallback ? withPostgres : undefined,
      readDirectly: [],
    };
  });
}

const directRead = /\b(?:process|Bun)\.env(?:\.([A-Z][A-Z0-9_]*)|\[["']([A-Z][A-Z0-9_]*)["']\])/g;

/** Variables read from `process.env` (or `Bun.env`) by name in src/, with the files that read each. */
export function settingsReadDirectly(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of new Bun.Glob("src/**/*.ts").scanSync({ cwd: root })) {
    for (const match of readFileSync(join(root, file), "utf8").matchAll(directRead)) {
      const name = match[1] ?? match[2];
      if (name === undefined) continue;
      const files = found.get(name) ?? [];
      if (!files.includes(file)) files.push(file);
      found.set(name, files.sort());
    }
  }
  return found;
}

/** Every variable the service reads: those `loadConfig` reads, then those read directly. */
export function findSettings(): FoundSetting[] {
  const settings = settingsReadByLoadConfig();
  for (const [name, files] of settingsReadDirectly()) {
    const known = settings.find((setting) => setting.name === name);
    if (known) known.readDirectly = files;
    else settings.push({ name, read: undefined, postgresFallback: undefined, readDirectly: files });
  }
  return settings;
}

function fallbackText(setting: FoundSetting, doc: SettingDoc): string {
  const { read, postgresFallback } = setting;
  if (read?.fallback === undefined) return doc.fallback ?? (read?.kind === "duration" ? "off" : "unset");
  const fallback = read.fallback === "" ? "empty" : code(read.fallback);
  return postgresFallback === undefined ? fallback : `${code(postgresFallback)} with \`DATABASE_URL\`, else ${fallback}`;
}

function acceptedText(read: SettingRead | undefined, doc: SettingDoc): string {
  if (read === undefined) return doc.values ?? "";
  const range = read.min !== undefined && read.max !== undefined ? `${read.min} to ${read.max}` : "";
  switch (read.kind) {
    case "integer":
      return `a whole number, ${range}`;
    case "boolean":
      return "`true` or `false` (`1`, `0`)";
    case "duration":
      return `a duration (\`90s\`, \`30m\`, \`6h\`, \`1d\`; a bare number is minutes), ${read.bounds ?? range}; \`0\` or \`off\`: off`;
    case "text":
      return read.minLength ? `text, at least ${read.minLength} characters` : "text";
    case "http-url":
      return "an http(s) URL";
    case "postgres-url":
      return "a `postgres://` or `postgresql://` URL, one host or several";
    case "seconds-list":
      return "seconds, comma-separated";
    case "choice":
      return (read.choices ?? []).map(code).join(", ");
  }
}

const usedByText = (doc: SettingDoc): string => doc.usedBy.map((command) => command.replace(/^vend (?!--)/, "")).join(", ");

const anchorOf = (group: string): string =>
  group
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .replaceAll(" ", "-");

/** The page: a table per group, the variables in catalogue order (test/unit/docs-freshness.test.ts checks both agree). */
export function configurationPage(settings: FoundSetting[] = findSettings()): string {
  const sections = settingGroups.map((group) => {
    const rows = Object.entries(settingsCatalogue)
      .filter(([, doc]) => doc.group === group)
      .flatMap(([name, doc]) => {
        const setting = settings.find((found) => found.name === name);
        if (!setting) return [];
        return [[code(name), fallbackText(setting, doc), acceptedText(setting.read, doc), usedByText(doc), inline(doc.does)]];
      });
    return `## ${group}\n\n${table(["variable", "default", "accepted", "used by", "what it does"], rows)}`;
  });
  const contents = settingGroups.map((group) => `[${group}](#${anchorOf(group)})`).join(" · ");
  const parts = [
    "# Configuration reference",
    `> Generated by \`${generatedBy}\` from the code that reads each variable (\`src/config.ts\` and its readers, the provider plugins' \`src/providers/<name>/config.ts\`, \`src/retention/retention-settings.ts\`) and from \`src/settings/catalogue.ts\`. Do not edit: change those and regenerate.`,
    "Every setting is an environment variable. Every command of [`vend`](cli/vend.md) but `vend partition` reads and validates them all at start: a bad value stops it in one line naming the variable, and `vend config` prints the effective settings with secrets redacted. **Used by** names the commands whose behaviour a variable changes: `vend` is the development default (the API and the worker in one process), `serve` the API and `work` the worker.",
    contents,
    ...sections,
  ];
  return `${parts.join("\n\n")}\n`;
}
