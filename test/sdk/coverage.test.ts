import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const sdk = join(import.meta.dir, "..", "..", "sdk", "src");

function operationsOf(folder: string): string[] {
  const source = readFileSync(join(sdk, "generated", folder, "sdk.gen.ts"), "utf8");
  return [...source.matchAll(/^export const (\w+) = /gm)].map((match) => match[1] ?? "");
}

function sourceOf(...files: string[]): string {
  return files.map((file) => readFileSync(join(sdk, file), "utf8")).join("\n");
}

test("every client operation of the contract has a method", () => {
  const resources = readdirSync(join(sdk, "resources")).map((file) => `resources/${file}`);
  const source = sourceOf(...resources);
  const operations = operationsOf("client");
  expect(operations.length).toBeGreaterThan(30);
  expect(operations.filter((operation) => !new RegExp(`\\b${operation}\\(`).test(source))).toEqual([]);
});

test("every admin operation has a method", () => {
  const source = sourceOf("admin/admin-client.ts");
  const operations = operationsOf("admin");
  expect(operations.length).toBeGreaterThan(20);
  expect(operations.filter((operation) => !new RegExp(`\\bapi\\.${operation}\\(`).test(source))).toEqual([]);
});
