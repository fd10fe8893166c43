import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { readMigrationFiles } from "drizzle-orm/migrator";
import {
  contractionsOf,
  contractProblems,
  digestOf,
  type LandedRecord,
  landedFile,
  landedProblems,
  migrationsDir,
  readMigrations,
} from "../../scripts/migration-policy.ts";

const journal = readMigrations(migrationsDir);
const tags = journal.map(({ tag }) => tag);
const landed = (JSON.parse(readFileSync(landedFile, "utf8")) as LandedRecord).migrations;

/** The last migration that landed before the expand/contract rule: nothing after it is excused. */
const lastBeforeTheRule = "0018_provider_costs";

/**
 * Landed migrations that drop columns without a contract marker. They cannot be given one (landed files are never
 * edited), so they are excused here, each for exactly what it drops.
 */
const grandfathered: Record<string, { contractions: string[]; reason: string }> = {
  "0002_idempotency_completed_only": {
    contractions: [
      "drop column idempotency_records.state",
      "drop column idempotency_records.response_headers",
      "drop column idempotency_records.locked_until",
    ],
    reason:
      "Landed with the vending core, the same day as 0000 created the table: an advisory lock replaced the stored " +
      "in-progress state and only completed answers are kept. Before the expand/contract rule.",
  },
  "0006_listing_indexes": {
    contractions: ["drop column idempotency_records.id"],
    reason:
      "Idempotency records keyed by their key, the surrogate id and its index dropped to save an index write per " +
      "accept (regenerated in its round). Before the expand/contract rule.",
  },
};

const describeContraction = ({ kind, target }: { kind: string; target: string }) => `${kind} ${target}`;

describe("landed migrations are never edited", () => {
  test("every migration in the journal is recorded as landed, with its file's SHA-256", () => {
    expect(landedProblems(landed, journal)).toEqual([]);
  });

  test("the recorded digests are the hashes drizzle keeps for applied migrations", () => {
    const hashes = readMigrationFiles({ migrationsFolder: migrationsDir }).map(({ hash }) => hash);
    expect(landed.map(({ sha256 }) => sha256)).toEqual(hashes);
  });

  const a = { tag: "0000_a", when: 1, sql: "CREATE TABLE a (id int);" };
  const b = { tag: "0001_b", when: 2, sql: "ALTER TABLE a ADD COLUMN note text;" };
  const record = (...migrations: (typeof a)[]) => migrations.map(({ tag, when, sql }) => ({ tag, when, sha256: digestOf(sql) }));

  test("an edited landed migration fails, naming the file and saying to write a new one", () => {
    const problems = landedProblems(record(a, b), [a, { ...b, sql: `${b.sql}\nALTER TABLE a ADD COLUMN more text;` }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("src/db/migrations/0001_b.sql was edited after it landed");
    expect(problems[0]).toContain("landed migrations are never edited: write a new migration instead");
  });

  test.each([
    ["an unrecorded migration", record(a), [a, b], "src/db/migrations/0001_b.sql is not recorded as landed"],
    ["a removed one", record(a, b), [a], "src/db/migrations/0001_b.sql landed but is no longer in the journal"],
    ["a new one before a landed one", record(b), [a, b], "new migrations go after the landed ones"],
    ["a retimed one", record(a, b), [a, { ...b, when: 3 }], "0001_b.sql's journal time changed after it landed"],
    ["one not newer than the one before", record(a), [a, { ...b, when: 1 }], "0001_b is not newer than 0000_a"],
  ])("%s fails", (_, recorded, migrations, expected) => {
    expect(landedProblems(recorded, migrations).join("\n")).toContain(expected);
  });

  test("the same migrations pass", () => {
    expect(landedProblems(record(a, b), [a, b])).toEqual([]);
  });
});

describe("migrations expand, then contract", () => {
  test("no migration after the rule drops, renames or retypes a table or column without a contract marker", () => {
    const excused = new Set(Object.keys(grandfathered));
    const problems = journal.flatMap(({ tag, sql }) => (excused.has(tag) ? [] : contractProblems(tag, sql, tags)));
    expect(problems).toEqual([]);
  });

  test("the excused migrations landed before the rule and contract exactly what they are excused for", () => {
    for (const [tag, { contractions, reason }] of Object.entries(grandfathered)) {
      const index = tags.indexOf(tag);
      expect(index, tag).toBeGreaterThanOrEqual(0);
      expect(index, tag).toBeLessThanOrEqual(tags.indexOf(lastBeforeTheRule));
      expect(reason.length, tag).toBeGreaterThan(0);
      const sql = journal[index]?.sql ?? "";
      expect(contractionsOf(sql).map(describeContraction), tag).toEqual(contractions);
    }
  });
});

describe("the contract check itself", () => {
  const fixtureTags = ["0000_a", "0001_b", "0002_c"];
  const check = (sql: string) => contractProblems("0001_b", sql, fixtureTags);
  const dropNote = 'ALTER TABLE "orders" DROP COLUMN "note";--> statement-breakpoint\n';

  test("a dropped column without a marker fails, naming what it drops", () => {
    const problems = check(dropNote);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("src/db/migrations/0001_b.sql: drop column orders.note without");
    expect(problems[0]).toContain("-- contract: orders.note unused since <earlier migration tag>");
  });

  test("a marker naming an earlier migration passes", () => {
    expect(check(`-- contract: orders.note unused since 0000_a\n${dropNote}`)).toEqual([]);
    expect(check(`/* Contract: Orders.Note, orders.other unused since 0000_a */\n${dropNote}`)).toEqual([]);
  });

  test.each([
    ["a later migration", "-- contract: orders.note unused since 0002_c", "names 0002_c, which is not earlier than 0001_b"],
    ["the migration itself", "-- contract: orders.note unused since 0001_b", "names 0001_b, which is not earlier than 0001_b"],
    [
      "an unknown migration",
      "-- contract: orders.note unused since 0099_x",
      "names 0099_x, which is not a migration in the journal",
    ],
    ["another column", "-- contract: orders.memo unused since 0000_a", "drop column orders.note without"],
    ["the table for a column", "-- contract: orders unused since 0000_a", "drop column orders.note without"],
    ["no migration at all", "-- contract: orders.note is unused", "is not a marker"],
  ])("a marker naming %s fails", (_, marker, expected) => {
    const problems = check(`${marker}\n${dropNote}`);
    expect(problems.join("\n")).toContain(expected);
    expect(problems.join("\n")).toContain("drop column orders.note without");
  });

  test("a marker inside a function body does not count", () => {
    const sql = `DO $$ BEGIN\n-- contract: orders.note unused since 0000_a\nPERFORM 1; END $$;\n${dropNote}`;
    expect(check(sql).join("\n")).toContain("drop column orders.note without");
  });

  test.each([
    ["DROP TABLE", 'DROP TABLE "orders";', ["drop table orders"]],
    ["lower case, IF EXISTS, several, qualified", "drop table if exists a, public.b cascade", ["drop table a", "drop table b"]],
    ["DROP COLUMN IF EXISTS", "ALTER TABLE orders DROP COLUMN IF EXISTS note", ["drop column orders.note"]],
    ["DROP without COLUMN, ONLY", "ALTER TABLE ONLY orders DROP note CASCADE", ["drop column orders.note"]],
    [
      "one action of several",
      "ALTER TABLE orders ADD COLUMN memo text DEFAULT 'a, b', DROP COLUMN note",
      ["drop column orders.note"],
    ],
    ["RENAME COLUMN", 'ALTER TABLE "orders" RENAME COLUMN "note" TO "memo"', ["rename column orders.note"]],
    ["RENAME without COLUMN", "ALTER TABLE orders RENAME note TO memo", ["rename column orders.note"]],
    ["RENAME TO", "ALTER TABLE IF EXISTS orders RENAME TO purchases", ["rename table orders"]],
    ["SET SCHEMA", "ALTER TABLE orders SET SCHEMA archive", ["move table orders"]],
    [
      "ALTER COLUMN TYPE",
      "ALTER TABLE orders ALTER COLUMN amount TYPE bigint USING amount::bigint",
      ["change column type orders.amount"],
    ],
    ["SET DATA TYPE", "ALTER TABLE orders ALTER amount SET DATA TYPE numeric(20, 0)", ["change column type orders.amount"]],
  ])("%s counts", (_, sql, expected) => {
    expect(contractionsOf(sql).map(describeContraction)).toEqual(expected);
  });

  test.each([
    ["DROP INDEX", 'DROP INDEX "orders_note_idx";'],
    ["DROP TRIGGER", 'DROP TRIGGER "orders_audit" ON "orders";'],
    ["DROP FUNCTION", 'DROP FUNCTION "orders_audit"();'],
    ["DROP VIEW", "DROP VIEW orders_view;"],
    ["DROP CONSTRAINT", 'ALTER TABLE "orders" DROP CONSTRAINT "orders_pkey";'],
    ["RENAME CONSTRAINT", "ALTER TABLE orders RENAME CONSTRAINT a TO b;"],
    [
      "DROP NOT NULL and DROP DEFAULT",
      'ALTER TABLE "orders" ALTER COLUMN "note" DROP NOT NULL, ALTER COLUMN "note" DROP DEFAULT;',
    ],
    ["SET DEFAULT", "ALTER TABLE orders ALTER COLUMN note SET DEFAULT 'none';"],
    ["ADD COLUMN", 'ALTER TABLE "orders" ADD COLUMN "memo" text;'],
    [
      "a DROP inside a function body",
      "CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  DROP TABLE orders;\n  ALTER TABLE orders DROP COLUMN note;\nEND;\n$$;",
    ],
    ["a DROP inside a tagged DO body", "DO $body$ BEGIN EXECUTE 'x'; ALTER TABLE orders RENAME TO y; END $body$;"],
    ["a DROP in a line comment", "-- ALTER TABLE orders DROP COLUMN note;\nSELECT 1;"],
    ["a DROP in a nested block comment", "/* a /* nested */ DROP TABLE orders; */ SELECT 1;"],
    ["a DROP in a string", "INSERT INTO notes VALUES ('it''s DROP TABLE orders; fine'), (E'\\' DROP TABLE orders');"],
  ])("%s does not count", (_, sql) => {
    expect(contractionsOf(sql)).toEqual([]);
  });

  test("statements after a function body are still read", () => {
    const sql = "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $f$ SELECT 1; $f$;\nDROP TABLE orders;";
    expect(contractionsOf(sql).map(describeContraction)).toEqual(["drop table orders"]);
  });
});
