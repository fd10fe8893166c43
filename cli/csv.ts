import { CsvError, parse } from "csv-parse/sync";

/** One record of a CSV file and the line it starts on (1 is the first line of the file). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/** The file is not CSV: where, and what is wrong. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    problem: string,
  ) {
    super(`line ${line}: ${problem}`);
  }
}

const isBlank = (fields: string[]): boolean => fields.every((field) => field.trim() === "");

/** Line breaks in a piece of the file: CRLF, LF and a lone CR each count once. */
const lineBreaks = (text: string): number => text.match(/\r\n|\r|\n/g)?.length ?? 0;

/** Where the field still open at the end of `raw` (a record cut short) opened its quote. */
function openingQuote(raw: string): number {
  let inQuotes = false;
  let opened = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== '"') continue;
    inQuotes = !inQuotes;
    if (inQuotes) opened = i;
  }
  return opened;
}

/** csv-parse's error as ours: the line counted our way (csv-parse counts a quoted CRLF twice), our words. */
function syntaxError(error: CsvError, recordLine: number): CsvSyntaxError | undefined {
  // The record up to the error.
  const raw = typeof error.raw === "string" ? error.raw : "";
  const at = recordLine + lineBreaks(raw);
  switch (error.code) {
    case "CSV_QUOTE_NOT_CLOSED":
      return new CsvSyntaxError(recordLine + lineBreaks(raw.slice(0, openingQuote(raw))), "a quoted field is never closed");
    case "CSV_INVALID_CLOSING_QUOTE": {
      const after = /got "(.)"/.exec(error.message)?.[1] ?? "";
      return new CsvSyntaxError(at, `text after the closing quote of a field ("…"${after}…); double a quote inside quotes`);
    }
    case "INVALID_OPENING_QUOTE":
      return new CsvSyntaxError(
        at,
        'a quote inside a field that does not start with one; quote the field and double the quote ("")',
      );
    default:
      return undefined;
  }
}

/**
 * RFC 4180 CSV, read by csv-parse: fields separated by commas, records by CRLF, LF or CR (mixed too), an
 * optional final line break, a leading UTF-8 byte order mark ignored. A field in double quotes may hold
 * commas, line breaks and doubled quotes (`""` is one `"`); a quote anywhere else, or text after a closing
 * quote, is an error rather than a guess. Blank records (nothing but commas and spaces, as spreadsheets
 * export) are left out.
 */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let line = 1;
  try {
    parse(text, {
      bom: true,
      raw: true,
      relax_column_count: true,
      record_delimiter: ["\r\n", "\n", "\r"],
      // Kept here rather than in the result, counting lines as it goes (csv-parse's own count takes a quoted
      // CRLF for two lines). With `raw` a record comes with its text, which csv-parse's types leave out.
      on_record: (entry) => {
        const { record, raw } = entry as unknown as { record: string[]; raw: string };
        if (!isBlank(record)) records.push({ line, fields: record });
        line += lineBreaks(raw);
        return null;
      },
    });
  } catch (error) {
    const ours = error instanceof CsvError ? syntaxError(error, line) : undefined;
    throw ours ?? error;
  }
  return records;
}
