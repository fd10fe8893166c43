/**
 * The rules a committed migration keeps, as pure functions over its text: a landed migration is never edited
 * (its SHA-256, recorded in test/fixtures/landed-migrations.json by scripts/land-migrations.ts, stays the file's),
 * and a migration that takes something away from old code (drops, renames or retypes a table or a column) says
 * since which earlier migration nothing uses it. test/unit/migration-policy.test.ts holds the tree to them.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** drizzle-kit's folder: the SQL files and `meta/_journal.json`. */
export const migrationsDir = join(import.meta.dir, "..", "src", "db", "migrations");

/** The committed record of landed migrations: drizzle-kit owns src/db/migrations, so it lives with the tests. */
export const landedFile = join(import.meta.dir, "..", "test", "fixtures", "landed-migrations.json");

/** One entry of drizzle-kit's `meta/_journal.json`; `when` is what drizzle compares with the last applied one. */
export interface JournalEntry {
  tag: string;
  when: number;
}

/** A landed migration as recorded: the journal's tag and time, and the SHA-256 of its `.sql` file. */
export interface LandedMigration extends JournalEntry {
  sha256: string;
}

export interface LandedRecord {
  about: string;
  migrations: LandedMigration[];
}

/** What a migration does that old code, still running during a rolling upgrade, may break on. */
export interface Contraction {
  kind: "drop table" | "rename table" | "move table" | "drop column" | "rename column" | "change column type";
  /** `table` or `table.column`, unquoted and lower case. */
  target: string;
}

/** `-- contract: <target>[, <target>…] unused since <tag>`. */
export interface ContractMarker {
  targets: string[];
  since: string;
}

/** The SHA-256 of a migration file's bytes (the hash drizzle itself records for an applied migration). */
export function digestOf(sql: string | Uint8Array): string {
  return createHash("sha256").update(sql).digest("hex");
}

/** The journal's entries and each one's file, as committed under `folder`. */
export function readMigrations(folder: string): (JournalEntry & { sql: string })[] {
  const journal = JSON.parse(readFileSync(join(folder, "meta/_journal.json"), "utf8")) as { entries: JournalEntry[] };
  return journal.entries.map(({ tag, when }) => ({ tag, when, sql: readFileSync(join(folder, `${tag}.sql`), "utf8") }));
}

/**
 * Every way the journal has left what landed: a landed migration edited, moved, retimed or removed, one in the
 * journal not recorded, a new one placed before a landed one or not later than the one before it (drizzle
 * applies only migrations newer than the last applied, so it would be skipped on a database already past it).
 */
export function landedProblems(
  landed: readonly LandedMigration[],
  journal: readonly (JournalEntry & { sql: string })[],
): string[] {
  const problems: string[] = [];
  landed.forEach((recorded, index) => {
    const entry = journal[index];
    const file = `src/db/migrations/${recorded.tag}.sql`;
    if (!journal.some(({ tag }) => tag === recorded.tag)) {
      problems.push(`${file} landed but is no longer in the journal: landed migrations are never removed`);
    } else if (entry?.tag !== recorded.tag) {
      problems.push(
        `${file} landed as migration ${index + 1}, the journal now has ${entry?.tag ?? "nothing"} there: new migrations go after the landed ones`,
      );
    } else if (digestOf(entry.sql) !== recorded.sha256) {
      problems.push(
        `${file} was edited after it landed (recorded sha256 ${recorded.sha256}, now ${digestOf(entry.sql)}): landed migrations are never edited: write a new migration instead`,
      );
    } else if (entry.when !== recorded.when) {
      problems.push(
        `${file}'s journal time changed after it landed (${recorded.when}, now ${entry.when}): landed migrations are never edited`,
      );
    }
  });
  const recorded = new Set(landed.map(({ tag }) => tag));
  for (const entry of journal) {
    if (!recorded.has(entry.tag)) {
      problems.push(
        `src/db/migrations/${entry.tag}.sql is not recorded as landed: run \`bun scripts/land-migrations.ts\` and commit both`,
      );
    }
  }
  journal.forEach((entry, index) => {
    const before = journal[index - 1];
    if (before && entry.when <= before.when) {
      problems.push(`${entry.tag} is not newer than ${before.tag} in the journal (when ${entry.when} <= ${before.when})`);
    }
  });
  return problems;
}

type Token = { kind: "word" | "name" | "punct"; text: string } | { kind: "literal" };

/** Where a quoted string starting at `start` ends; `backslashes` for E'…' strings. */
function endOfString(sql: string, start: number, quote: string, backslashes: boolean): number {
  let at = start + 1;
  while (at < sql.length) {
    const char = sql.charAt(at);
    if (backslashes && char === "\\") at += 2;
    else if (char === quote && sql.charAt(at + 1) === quote) at += 2;
    else if (char === quote) return at + 1;
    else at += 1;
  }
  return sql.length;
}

/** The text `pattern` (sticky) matches at `at`, if any. */
function matchAt(pattern: RegExp, sql: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(sql)?.[0];
}

/** Where a block comment starting at `start` ends: PostgreSQL's nest. */
function endOfBlockComment(sql: string, start: number): number {
  let depth = 0;
  let at = start;
  while (at < sql.length) {
    if (sql.startsWith("/*", at)) depth += 1;
    else if (sql.startsWith("*/", at)) depth -= 1;
    else {
      at += 1;
      continue;
    }
    at += 2;
    if (depth === 0) return at;
  }
  return sql.length;
}

const wordPattern = /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/y;
const dollarQuotePattern = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;
const numberPattern = /(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;

/**
 * The statements of a migration as tokens, and its comments. Strings, dollar-quoted bodies (functions, DO
 * blocks) and numbers are single opaque tokens, so nothing inside them is read as a statement or a comment.
 */
export function scanSql(sql: string): { statements: Token[][]; comments: string[] } {
  const statements: Token[][] = [];
  const comments: string[] = [];
  let statement: Token[] = [];
  let at = 0;
  while (at < sql.length) {
    const char = sql.charAt(at);
    const dollarQuote = char === "$" ? matchAt(dollarQuotePattern, sql, at) : undefined;
    const word = dollarQuote ? undefined : matchAt(wordPattern, sql, at);
    const number = dollarQuote || word ? undefined : matchAt(numberPattern, sql, at);
    if (/\s/.test(char)) {
      at += 1;
    } else if (sql.startsWith("--", at)) {
      const end = sql.indexOf("\n", at);
      const stop = end === -1 ? sql.length : end;
      comments.push(sql.slice(at + 2, stop));
      at = stop;
    } else if (sql.startsWith("/*", at)) {
      const end = endOfBlockComment(sql, at);
      comments.push(sql.slice(at + 2, Math.max(at + 2, end - 2)));
      at = end;
    } else if (char === "'") {
      statement.push({ kind: "literal" });
      at = endOfString(sql, at, "'", false);
    } else if (char === '"') {
      const end = endOfString(sql, at, '"', false);
      statement.push({ kind: "name", text: sql.slice(at + 1, end - 1).replaceAll('""', '"') });
      at = end;
    } else if (dollarQuote) {
      const close = sql.indexOf(dollarQuote, at + dollarQuote.length);
      statement.push({ kind: "literal" });
      at = close === -1 ? sql.length : close + dollarQuote.length;
    } else if (word) {
      at += word.length;
      if (/^e$/i.test(word) && sql.charAt(at) === "'") {
        statement.push({ kind: "literal" });
        at = endOfString(sql, at, "'", true);
      } else {
        statement.push({ kind: "word", text: word });
      }
    } else if (number) {
      statement.push({ kind: "literal" });
      at += number.length;
    } else if (char === ";") {
      if (statement.length > 0) statements.push(statement);
      statement = [];
      at += 1;
    } else {
      statement.push({ kind: "punct", text: char });
      at += 1;
    }
  }
  if (statement.length > 0) statements.push(statement);
  return { statements, comments };
}

function isWord(tokens: readonly Token[], at: number, ...keywords: string[]): boolean {
  return keywords.every((keyword, offset) => {
    const token = tokens[at + offset];
    return token?.kind === "word" && token.text.toUpperCase() === keyword;
  });
}

function isPunct(tokens: readonly Token[], at: number, text: string): boolean {
  const token = tokens[at];
  return token?.kind === "punct" && token.text === text;
}

/** A possibly qualified name at `at`: its last part, lower case, and where it ends. */
function nameAt(tokens: readonly Token[], at: number): { name: string; next: number } | undefined {
  let next = at;
  let name: string | undefined;
  for (;;) {
    const token = tokens[next];
    if (token?.kind !== "word" && token?.kind !== "name") return name === undefined ? undefined : { name, next };
    name = token.text.toLowerCase();
    next += 1;
    if (!isPunct(tokens, next, ".")) return { name, next };
    next += 1;
  }
}

/** An ALTER TABLE's actions: its tokens after the table name, split at commas outside parentheses. */
function actionsOf(tokens: readonly Token[]): Token[][] {
  const actions: Token[][] = [[]];
  let depth = 0;
  for (const token of tokens) {
    if (token.kind === "punct" && token.text === "(") depth += 1;
    if (token.kind === "punct" && token.text === ")") depth -= 1;
    if (depth === 0 && token.kind === "punct" && token.text === ",") actions.push([]);
    else actions[actions.length - 1]?.push(token);
  }
  return actions;
}

function alterTableAction(table: string, action: readonly Token[]): Contraction | undefined {
  const column = (at: number) => nameAt(action, isWord(action, at, "IF", "EXISTS") ? at + 2 : at);
  if (isWord(action, 0, "RENAME", "TO")) return { kind: "rename table", target: table };
  if (isWord(action, 0, "SET", "SCHEMA")) return { kind: "move table", target: table };
  if (isWord(action, 0, "RENAME") && !isWord(action, 1, "CONSTRAINT")) {
    const renamed = column(isWord(action, 1, "COLUMN") ? 2 : 1);
    return renamed && { kind: "rename column", target: `${table}.${renamed.name}` };
  }
  if (isWord(action, 0, "DROP") && !isWord(action, 1, "CONSTRAINT")) {
    const dropped = column(isWord(action, 1, "COLUMN") ? 2 : 1);
    return dropped && { kind: "drop column", target: `${table}.${dropped.name}` };
  }
  if (isWord(action, 0, "ALTER") && !isWord(action, 1, "CONSTRAINT")) {
    const altered = nameAt(action, isWord(action, 1, "COLUMN") ? 2 : 1);
    if (altered && (isWord(action, altered.next, "TYPE") || isWord(action, altered.next, "SET", "DATA", "TYPE"))) {
      return { kind: "change column type", target: `${table}.${altered.name}` };
    }
  }
  return undefined;
}

function statementContractions(tokens: readonly Token[]): Contraction[] {
  if (isWord(tokens, 0, "DROP", "TABLE")) {
    const dropped: Contraction[] = [];
    let at = isWord(tokens, 2, "IF", "EXISTS") ? 4 : 2;
    for (let table = nameAt(tokens, at); table; table = nameAt(tokens, at)) {
      dropped.push({ kind: "drop table", target: table.name });
      if (!isPunct(tokens, table.next, ",")) break;
      at = table.next + 1;
    }
    return dropped;
  }
  if (!isWord(tokens, 0, "ALTER", "TABLE")) return [];
  let at = isWord(tokens, 2, "IF", "EXISTS") ? 4 : 2;
  if (isWord(tokens, at, "ONLY")) at += 1;
  const table = nameAt(tokens, at);
  if (!table) return [];
  const rest = tokens.slice(isPunct(tokens, table.next, "*") ? table.next + 1 : table.next);
  return actionsOf(rest).flatMap((action) => alterTableAction(table.name, action) ?? []);
}

/**
 * What a migration takes away from the tables and columns old code uses: `DROP TABLE`, `ALTER TABLE … RENAME TO` /
 * `SET SCHEMA`, and `ALTER TABLE`'s `DROP [COLUMN]`, `RENAME [COLUMN]` and `ALTER [COLUMN] … [SET DATA] TYPE`. Not
 * constraints, indexes, triggers or functions (old code does not name them), nor anything inside a string or a
 * dollar-quoted body.
 */
export function contractionsOf(sql: string): Contraction[] {
  return scanSql(sql).statements.flatMap(statementContractions);
}

const markerPattern = /^\s*contract:\s*(.+?)\s+unused\s+since\s+(\S+)\s*$/i;

/** The `-- contract:` markers among a migration's comments, and the lines that start like one but do not parse. */
export function contractMarkersOf(sql: string): { markers: ContractMarker[]; malformed: string[] } {
  const markers: ContractMarker[] = [];
  const malformed: string[] = [];
  for (const line of scanSql(sql).comments.flatMap((comment) => comment.split("\n"))) {
    if (!/^\s*contract\s*:/i.test(line)) continue;
    const match = markerPattern.exec(line);
    if (!match?.[1] || !match[2]) {
      malformed.push(line.trim());
      continue;
    }
    const targets = match[1].split(",").map((target) => target.trim().replaceAll('"', "").toLowerCase());
    markers.push({ targets, since: match[2] });
  }
  return { markers, malformed };
}

/**
 * Why migration `tag` breaks expand/contract: each contraction needs a marker naming its target and a migration
 * earlier in `journalTags` since which nothing uses it (one release stops using it, a later release removes it).
 */
export function contractProblems(tag: string, sql: string, journalTags: readonly string[]): string[] {
  const file = `src/db/migrations/${tag}.sql`;
  const own = journalTags.indexOf(tag);
  const { markers, malformed } = contractMarkersOf(sql);
  const problems = malformed.map(
    (line) =>
      `${file}: "-- ${line}" is not a marker: write "-- contract: <table or table.column> unused since <earlier migration tag>"`,
  );
  const valid = markers.filter((marker) => {
    const since = journalTags.indexOf(marker.since);
    const earlier = since !== -1 && (own === -1 || since < own);
    if (!earlier) {
      const why = since === -1 ? "is not a migration in the journal" : `is not earlier than ${tag}`;
      problems.push(`${file}: its contract marker names ${marker.since}, which ${why}`);
    }
    return earlier;
  });
  for (const { kind, target } of contractionsOf(sql)) {
    if (valid.some((marker) => marker.targets.includes(target))) continue;
    problems.push(
      `${file}: ${kind} ${target} without "-- contract: ${target} unused since <earlier migration tag>": ` +
        "migrations expand then contract: one release stops using it, a later one removes it",
    );
  }
  return problems;
}
