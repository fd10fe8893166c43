import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findSettings } from "../../scripts/configuration-page.ts";
import { stalePages } from "../../scripts/generate-docs.ts";
import { loadConfig } from "../../src/load-config.ts";
import { retentionKinds, retentionVariables } from "../../src/retention/retention-settings.ts";
import { settingsCatalogue } from "../../src/settings/catalogue.ts";
import { recordSettingReads } from "../../src/settings/reads.ts";

const root = join(import.meta.dir, "..", "..");
const found = findSettings();
const described = Object.keys(settingsCatalogue);

describe("the configuration reference", () => {
  test("every variable the service reads is described in src/settings/", () => {
    const where = (name: string) => {
      const setting = found.find((candidate) => candidate.name === name);
      return setting?.readDirectly.length
        ? `${name} (read in ${setting.readDirectly.join(", ")})`
        : `${name} (read by loadConfig)`;
    };
    expect(
      found
        .map((setting) => setting.name)
        .filter((name) => !described.includes(name))
        .map(where),
    ).toEqual([]);
  });

  test("every variable described in src/settings/ is read", () => {
    const read = new Set(found.map((setting) => setting.name));
    expect(described.filter((name) => !read.has(name))).toEqual([]);
  });

  test("a default or accepted values are written down only for variables no reader notes", () => {
    const twice = found.flatMap((setting) => {
      const doc = settingsCatalogue[setting.name];
      if (!doc || !setting.read) return [];
      return [
        ...(doc.values !== undefined ? [`${setting.name}: values (its reader says them)`] : []),
        ...(doc.fallback !== undefined && setting.read.fallback !== undefined
          ? [`${setting.name}: fallback (its reader has ${setting.read.fallback})`]
          : []),
      ];
    });
    expect(twice).toEqual([]);
  });

  test("each RETENTION_* variable is one row of the page", () => {
    const page = readFileSync(join(root, "docs", "configuration.md"), "utf8");
    const variables = [
      ...retentionKinds.map((kind) => retentionVariables[kind].variable),
      "RETENTION_BATCH_ROWS",
      "RETENTION_PASS_SECONDS",
    ];
    for (const variable of variables) expect(page.split(`\n| \`${variable}\` |`).length - 1).toBe(1);
    expect(page.match(/^\| `RETENTION_[A-Z_]+` \|/gm)?.length).toBe(variables.length);
  });

  test("reading through a recording environment changes nothing", () => {
    const environments = [
      {},
      { DATABASE_URL: "postgres://vend@db:5432/vend", WORKER_CONCURRENCY: "8", LOG_LEVEL: "warn" },
      {
        VTU_BASE_URL: "https://vtu.test",
        VTU_API_KEY: "a",
        VTU_SECRET_KEY: "b",
        VTU_CALLBACK_TOKEN: "c",
        VTU_CALLBACK_SECRET: "d",
      },
    ];
    for (const values of environments) expect(loadConfig(recordSettingReads({ ...values }).env)).toEqual(loadConfig(values));
    expect(() => loadConfig(recordSettingReads({ PORT: "eighty" }).env)).toThrow(
      'Invalid configuration: PORT must be a whole number, got "eighty"',
    );
  });
});

test("docs/configuration.md and docs/cli/ are as `npm run generate:docs` writes them", async () => {
  expect(await stalePages()).toEqual([]);
});
