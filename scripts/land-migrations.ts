/**
 * `bun scripts/land-migrations.ts`: records each new migration of the journal (tag, time, SHA-256) at the end of
 * test/fixtures/landed-migrations.json, to be committed with it. What landed before is never rewritten: a landed
 * migration that was edited, moved or removed, or a new one that breaks expand/contract, is said and nothing is
 * written (exit 1).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import {
  contractProblems,
  digestOf,
  type LandedRecord,
  landedFile,
  landedProblems,
  migrationsDir,
  readMigrations,
} from "./migration-policy.ts";

const about =
  "The SHA-256 of every landed migration's .sql file, in journal order. Appended by `bun scripts/land-migrations.ts` " +
  "when a migration is committed; an entry is never changed (test/unit/migration-policy.test.ts).";

const journal = readMigrations(migrationsDir);
const record: LandedRecord = existsSync(landedFile)
  ? (JSON.parse(readFileSync(landedFile, "utf8")) as LandedRecord)
  : { about, migrations: [] };
const landedTags = new Set(record.migrations.map(({ tag }) => tag));
const fresh = journal.filter(({ tag }) => !landedTags.has(tag));
const tags = journal.map(({ tag }) => tag);
// The first record takes the migrations that landed before these rules as they are; the test names the ones it excuses.
const checked = record.migrations.length === 0 ? [] : fresh;
const problems = [
  ...landedProblems(record.migrations, journal).filter((problem) => !problem.includes("is not recorded as landed")),
  ...checked.flatMap(({ tag, sql }) => contractProblems(tag, sql, tags)),
];
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
if (fresh.length === 0) {
  console.log(`Nothing to land: all ${journal.length} migrations are recorded.`);
  process.exit(0);
}
const landed: LandedRecord = {
  about: record.about,
  migrations: [...record.migrations, ...fresh.map(({ tag, when, sql }) => ({ tag, when, sha256: digestOf(sql) }))],
};
writeFileSync(landedFile, `${JSON.stringify(landed, null, 2)}\n`);
console.log(`Landed ${fresh.map(({ tag }) => tag).join(", ")} in ${landedFile}.`);
