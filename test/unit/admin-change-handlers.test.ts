import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadSpec } from "../../src/http/spec.ts";

const root = join(import.meta.dir, "..", "..");

/**
 * Each handler's text in the route files, by operationId: from its key (`    createAccount: …`, the handler
 * map's indentation) to the next key or the end of the map.
 */
function handlerTexts(source: string): Map<string, string> {
  const texts = new Map<string, string>();
  const keys = [...source.matchAll(/^ {4}(\w+): /gm)];
  keys.forEach((key, n) => {
    const end = keys[n + 1]?.index ?? source.indexOf("} satisfies", key.index);
    texts.set(key[1] as string, source.slice(key.index, end < 0 ? undefined : end));
  });
  return texts;
}

/** Every route file's handlers. */
function allHandlers(): Map<string, string> {
  const handlers = new Map<string, string>();
  for (const feature of readdirSync(join(root, "src"), { withFileTypes: true })) {
    if (!feature.isDirectory()) continue;
    const path = join(root, "src", feature.name, "routes.ts");
    let source: string;
    try {
      source = readFileSync(path, "utf8");
    } catch {
      continue;
    }
    for (const [id, text] of handlerTexts(source)) handlers.set(id, text);
  }
  return handlers;
}

/**
 * An operator's change runs in the transaction the pipeline opened and audits in (`input.db`): a statement
 * it sent on the database itself would commit outside the audit on PostgreSQL, and on the embedded engine
 * (one connection) wait for ever behind that transaction.
 */
describe("an operator's change runs on its transaction", () => {
  const spec = loadSpec();
  const changes = [...spec.byId.values()].filter((op) => op.security === "admin" && op.requiredRole !== "viewer");
  const handlers = allHandlers();

  test("the scanner finds a handler's text and a stray deps.db in it", () => {
    const source = [
      "  const handlers = {",
      "    good: async ({ db }) => ({ status: 200, data: await thing(db) }),",
      "    bad: async () => ({ status: 200, data: await thing(deps.db) }),",
      "  } satisfies Partial<Handlers>;",
    ].join("\n");
    const texts = handlerTexts(source);
    expect(texts.get("good")).not.toContain("deps.db");
    expect(texts.get("bad")).toContain("deps.db");
  });

  test("every change operation has a handler, and none of them touches deps.db or the replica", () => {
    expect(changes.length).toBeGreaterThan(5);
    const stray = changes.flatMap((op) => {
      const text = handlers.get(op.operationId);
      if (text === undefined) return [`${op.operationId}: no handler found`];
      return /deps\.(db|reads)\b/.test(text) ? [`${op.operationId} uses deps.db or deps.reads`] : [];
    });
    expect(stray).toEqual([]);
  });
});
