import { stringify } from "csv-stringify/sync";
import { formatNgn } from "../src/lib/shared/money.ts";
import { UsageError } from "./errors.ts";

export type Format = "table" | "json" | "jsonl" | "csv";

export interface FormatFlags {
  json?: boolean;
  jsonl?: boolean;
  csv?: boolean;
  table?: boolean;
}

/** One column: `key` names the API field (CSV header); money columns show NGN with two decimals in tables. */
export interface Column<T> {
  key: string;
  header?: string;
  money?: boolean;
  get?: (row: T) => unknown;
}

interface Sink {
  write(chunk: string, callback: (error?: Error | null) => void): boolean;
  isTTY?: boolean;
}

/** The format asked for; without a flag, a table on a terminal and JSON otherwise. */
export function formatFrom(flags: FormatFlags, stdoutIsTTY: boolean): Format {
  const chosen = (["json", "jsonl", "csv", "table"] as const).filter((f) => flags[f]);
  if (chosen.length > 1) throw new UsageError(`choose one output format, not ${chosen.map((f) => `--${f}`).join(" and ")}`);
  return chosen[0] ?? (stdoutIsTTY ? "table" : "json");
}

const cellValue = <T>(row: T, column: Column<T>): unknown =>
  column.get ? column.get(row) : (row as Record<string, unknown>)[column.key];

function tableCell<T>(row: T, column: Column<T>): string {
  const value = cellValue(row, column);
  if (value === null || value === undefined) return "-";
  if (column.money && typeof value === "number") return `NGN ${formatNgn(value)}`;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function csvCell<T>(row: T, column: Column<T>): string {
  const value = cellValue(row, column);
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

const headerOf = <T>(column: Column<T>): string => column.header ?? column.key.replace(/_kobo$/, "").toUpperCase();

/** Writes command output in the chosen format; every write waits until the data has left the process. */
export class Printer {
  constructor(
    readonly format: Format,
    private readonly out: Sink = process.stdout,
    private readonly err: Sink = process.stderr,
  ) {}

  write(text: string): Promise<void> {
    return new Promise((resolve) => this.out.write(text, () => resolve()));
  }

  /** A human note: on stdout with a table, on stderr when stdout carries data for a program. */
  note(text: string): Promise<void> {
    const sink = this.format === "table" ? this.out : this.err;
    return new Promise((resolve) => sink.write(`${text}\n`, () => resolve()));
  }

  /** One object: JSON unchanged, or a two-column table of the chosen fields. */
  async record<T>(data: T, columns: Column<T>[]): Promise<void> {
    if (this.format === "json") return this.write(`${JSON.stringify(data, null, 2)}\n`);
    if (this.format !== "table") return this.list(columns).rows([data]);
    const width = Math.max(...columns.map((c) => headerOf(c).length));
    await this.write(`${columns.map((c) => `${headerOf(c).padEnd(width)}  ${tableCell(data, c)}`).join("\n")}\n`);
  }

  /** A list written page by page as it arrives. */
  list<T>(columns: Column<T>[]): ListWriter<T> {
    return new ListWriter(this, columns);
  }

  /** A list that arrived in one answer. */
  async listAll<T>(columns: Column<T>[], items: T[]): Promise<void> {
    const writer = this.list(columns);
    await writer.rows(items);
    await writer.end();
  }
}

export class ListWriter<T> {
  private count = 0;
  private widths: number[] = [];

  constructor(
    private readonly printer: Printer,
    private readonly columns: Column<T>[],
  ) {}

  get written(): number {
    return this.count;
  }

  async rows(items: T[]): Promise<void> {
    if (items.length === 0) return;
    const first = this.count === 0;
    this.count += items.length;
    const format = this.printer.format;
    if (format === "jsonl") return this.printer.write(items.map((item) => `${JSON.stringify(item)}\n`).join(""));
    if (format === "json") {
      const body = items.map((item) => JSON.stringify(item)).join(",\n");
      return this.printer.write(`${first ? "[\n" : ",\n"}${body}`);
    }
    if (format === "csv") {
      const records = items.map((item) => this.columns.map((c) => csvCell(item, c)));
      const header = first ? [this.columns.map((c) => c.key)] : [];
      return this.printer.write(stringify([...header, ...records]));
    }
    const cells = items.map((item) => this.columns.map((c) => tableCell(item, c)));
    if (first) {
      const headers = this.columns.map(headerOf);
      // Widths come from the first page; later pages reuse them so rows can stream.
      this.widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? "").length)));
      cells.unshift(headers);
    }
    await this.printer.write(cells.map((row) => this.line(row)).join(""));
  }

  private line(row: string[]): string {
    const last = row.length - 1;
    return `${row.map((cell, i) => (i === last ? cell : cell.padEnd(this.widths[i] ?? 0))).join("  ")}\n`;
  }

  async end(): Promise<void> {
    const format = this.printer.format;
    if (format === "json") return this.printer.write(this.count === 0 ? "[]\n" : "\n]\n");
    if (this.count === 0 && format === "table") return this.printer.write("No results.\n");
    if (this.count === 0 && format === "csv") return this.printer.write(stringify([this.columns.map((c) => c.key)]));
  }
}
