import { stringify } from "csv-stringify/sync";
import { type Colors, colorsFor } from "./color.ts";
import { UsageError } from "./errors.ts";
import { parseFields, runJq, selectFields } from "./fields.ts";
import { io } from "./io.ts";
import { writeThroughPager } from "./pager.ts";
import { type Column, cellValue, renderRecord, renderTable, type TableStyle } from "./table.ts";

export type { Column } from "./table.ts";

export type Format = "table" | "json" | "jsonl" | "csv";

export interface FormatFlags {
  json?: boolean;
  /** `--json a,b` (rewritten by main() to this hidden option): only these fields. */
  jsonFields?: string;
  jsonl?: boolean;
  csv?: boolean;
  table?: boolean;
  jq?: string;
  utc?: boolean;
  /** false with --no-color. */
  color?: boolean;
  /** false with --no-pager. */
  pager?: boolean;
}

interface Sink {
  write(chunk: string, callback: (error?: Error | null) => void): boolean;
  isTTY?: boolean;
  rows?: number;
}

/** The format asked for; without a flag, a table on a terminal and JSON otherwise. --jq and field lists mean JSON. */
export function formatFrom(flags: FormatFlags, stdoutIsTTY: boolean): Format {
  const chosen = (["json", "jsonl", "csv", "table"] as const).filter((f) => flags[f]);
  if (chosen.length > 1) throw new UsageError(`choose one output format, not ${chosen.map((f) => `--${f}`).join(" and ")}`);
  const wantsJson = flags.jq !== undefined ? "--jq" : flags.jsonFields !== undefined ? "--json FIELDS" : undefined;
  if (wantsJson && chosen[0] && chosen[0] !== "json") throw new UsageError(`${wantsJson} prints JSON: leave out --${chosen[0]}`);
  return chosen[0] ?? (wantsJson || !stdoutIsTTY ? "json" : "table");
}

/** Everything about how output looks, decided once from the flags, the environment and the terminal. */
export interface OutputOptions {
  format: Format;
  /** Only these top-level fields in JSON (of each item of a list). */
  fields?: string[];
  /** A jq expression applied to the whole JSON output. */
  jq?: string;
  utc?: boolean;
  colors?: Colors;
  /** The pager command, when tables longer than the terminal should be paged. */
  pager?: string;
}

export function outputOptions(flags: FormatFlags, format: Format): Omit<OutputOptions, "colors" | "pager"> {
  return {
    format,
    ...(flags.jsonFields === undefined ? {} : { fields: parseFields(flags.jsonFields) }),
    ...(flags.jq === undefined ? {} : { jq: flags.jq }),
    utc: flags.utc === true,
  };
}

function csvCell<T>(row: T, column: Column<T>): string {
  const value = cellValue(row, column);
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** Writes command output in the chosen format; every write waits until the data has left the process. */
export class Printer {
  readonly format: Format;
  readonly style: TableStyle;
  private wrote = false;

  constructor(
    private readonly options: OutputOptions,
    private readonly out: Sink = io().stdout,
    private readonly err: Sink = io().stderr,
  ) {
    this.format = options.format;
    this.style = { utc: options.utc === true, colors: options.colors ?? colorsFor(false) };
  }

  /** Colours for stdout: none unless it is a terminal and colour is wanted. */
  get colors(): Colors {
    return this.style.colors;
  }

  write(text: string): Promise<void> {
    this.wrote = true;
    return new Promise((resolve) => this.out.write(text, () => resolve()));
  }

  /** A human note: on stdout with a table, on stderr when stdout carries data for a program. */
  note(text: string): Promise<void> {
    const sink = this.format === "table" ? this.out : this.err;
    return new Promise((resolve) => sink.write(`${text}\n`, () => resolve()));
  }

  /** JSON of the API's data, narrowed to --json fields and filtered by --jq when asked. */
  async json(data: unknown): Promise<void> {
    const selected = this.options.fields ? selectFields(data, this.options.fields) : data;
    if (this.options.jq !== undefined) return this.write(await runJq(selected, this.options.jq));
    return this.write(`${JSON.stringify(selected, null, 2)}\n`);
  }

  /** Whether JSON lists must be collected whole first: --jq reads the whole output. */
  get collectsJson(): boolean {
    return this.options.jq !== undefined;
  }

  /** Keeps --json fields of each item. */
  pick<T>(items: T[]): unknown[] {
    return this.options.fields ? (selectFields(items, this.options.fields) as unknown[]) : items;
  }

  /**
   * A table: through the pager when it is longer than the terminal and nothing else was written yet
   * (a screen redrawn by --watch, or a second table after a first, is never paged).
   */
  async table(text: string): Promise<void> {
    const rows = this.out.rows ?? 0;
    const paging = this.options.pager !== undefined && !this.wrote && rows > 0 && this.out.isTTY;
    if (paging && this.options.pager && text.split("\n").length - 1 > rows) {
      this.wrote = true;
      if (await writeThroughPager(this.options.pager, text)) return;
    }
    return this.write(text);
  }

  /** One object: JSON unchanged, or a two-column table of the chosen fields. */
  async record<T>(data: T, columns: Column<T>[]): Promise<void> {
    if (this.format === "json") return this.json(data);
    if (this.format !== "table") return this.listAll(columns, [data]);
    await this.table(renderRecord(columns, data, this.style));
  }

  /** A list written page by page as it arrives (a table waits for every row, to align them). */
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
  private held: T[] = [];

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
    const { format } = this.printer;
    if (format === "table" || (format === "json" && this.printer.collectsJson)) {
      this.held.push(...items);
      return;
    }
    if (format === "jsonl") {
      return this.printer.write(
        this.printer
          .pick(items)
          .map((item) => `${JSON.stringify(item)}\n`)
          .join(""),
      );
    }
    if (format === "json") {
      const body = this.printer
        .pick(items)
        .map((item) => JSON.stringify(item))
        .join(",\n");
      return this.printer.write(`${first ? "[\n" : ",\n"}${body}`);
    }
    const columns = this.csvColumns();
    const records = items.map((item) => columns.map((c) => csvCell(item, c)));
    const header = first ? [columns.map((c) => c.key)] : [];
    return this.printer.write(stringify([...header, ...records]));
  }

  private csvColumns(): Column<T>[] {
    return this.columns.filter((c) => c.only !== "table");
  }

  async end(): Promise<void> {
    const { format } = this.printer;
    if (format === "json" && this.printer.collectsJson) return this.printer.json(this.held);
    if (format === "json") return this.printer.write(this.count === 0 ? "[]\n" : "\n]\n");
    if (format === "table") {
      if (this.count === 0) return this.printer.write("No results.\n");
      return this.printer.table(renderTable(this.columns, this.held, this.printer.style));
    }
    if (this.count === 0 && format === "csv") return this.printer.write(stringify([this.csvColumns().map((c) => c.key)]));
  }
}
