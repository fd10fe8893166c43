import { type Colors, colorStatus } from "./color.ts";
import { formatNgnGrouped } from "./money.ts";
import { formatTime } from "./time.ts";

/** One column: `key` names the API field (CSV header); money columns show NGN with two decimals in tables. */
export interface Column<T> {
  key: string;
  header?: string;
  money?: boolean;
  get?: (row: T) => unknown;
  /** Only in tables (a summary) or only in CSV (the API's raw field). */
  only?: "table" | "csv";
  /** Left out of a table when no row has a value. */
  hideEmpty?: boolean;
}

/** How tables show values: times in local time or UTC, and colours (none when off). */
export interface TableStyle {
  utc: boolean;
  colors: Colors;
}

interface Cell {
  text: string;
  right: boolean;
  paint: (text: string) => string;
}

export const cellValue = <T>(row: T, column: Column<T>): unknown =>
  column.get ? column.get(row) : (row as Record<string, unknown>)[column.key];

const isTime = <T>(column: Column<T>) => column.key.endsWith("_at");

export function headerOf<T>(column: Column<T>, style?: TableStyle): string {
  const header = column.header ?? column.key.replace(/_kobo$/, "").toUpperCase();
  return style?.utc && isTime(column) ? `${header} (UTC)` : header;
}

const plain = (text: string) => text;

function tableCell<T>(row: T, column: Column<T>, style: TableStyle): Cell {
  const value = cellValue(row, column);
  const { colors } = style;
  if (value === null || value === undefined || value === "") return { text: "-", right: false, paint: colors.dim };
  if (column.money && typeof value === "number") return { text: `NGN ${formatNgnGrouped(value)}`, right: true, paint: plain };
  if (typeof value === "string" && isTime(column)) return { text: formatTime(value, style.utc), right: false, paint: plain };
  if (typeof value === "string" && column.key === "status") {
    return { text: value, right: false, paint: (text) => text.replace(value, colorStatus(colors, value)) };
  }
  return { text: typeof value === "object" ? JSON.stringify(value) : String(value), right: false, paint: plain };
}

const isEmpty = (value: unknown) => value === null || value === undefined || value === "";

/** The columns a table shows for these rows. */
function tableColumns<T>(columns: Column<T>[], rows: T[]): Column<T>[] {
  return columns.filter((c) => c.only !== "csv" && !(c.hideEmpty && rows.every((row) => isEmpty(cellValue(row, c)))));
}

/** Rows under a header, every column as wide as its widest cell; money right-aligned. */
export function renderTable<T>(allColumns: Column<T>[], rows: T[], style: TableStyle): string {
  const columns = tableColumns(allColumns, rows);
  const cells = rows.map((row) => columns.map((c) => tableCell(row, c, style)));
  const headers = columns.map((c) => headerOf(c, style));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]?.text.length ?? 0)));
  const last = columns.length - 1;
  const pad = (text: string, i: number, right: boolean) =>
    right ? text.padStart(widths[i] ?? 0) : i === last ? text : text.padEnd(widths[i] ?? 0);
  const headerLine = headers.map((h, i) => style.colors.bold(pad(h, i, columns[i]?.money === true))).join("  ");
  const lines = cells.map((row) => row.map((cell, i) => cell.paint(pad(cell.text, i, cell.right))).join("  "));
  return `${[headerLine.trimEnd(), ...lines.map((l) => l.trimEnd())].join("\n")}\n`;
}

/** One object as `FIELD  value` lines. */
export function renderRecord<T>(allColumns: Column<T>[], row: T, style: TableStyle): string {
  const columns = tableColumns(allColumns, [row]);
  const width = Math.max(...columns.map((c) => headerOf(c, style).length));
  const lines = columns.map((c) => {
    const cell = tableCell(row, c, style);
    return `${style.colors.bold(headerOf(c, style).padEnd(width))}  ${cell.paint(cell.text)}`;
  });
  return `${lines.join("\n")}\n`;
}
