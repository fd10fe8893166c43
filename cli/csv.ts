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

/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF, LF or CR (mixed too), an optional final line
 * break, a leading UTF-8 byte order mark ignored. A field in double quotes may hold commas, line breaks and
 * doubled quotes (`""` is one `"`); a quote anywhere else, or text after a closing quote, is an error
 * rather than a guess. Blank records (nothing but commas and spaces, as spreadsheets export) are left out.
 */
export function parseCsv(text: string): CsvRecord[] {
  const input = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  let line = 1;
  let position = 0;
  while (position < input.length) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let value = "";
      if (input[position] === '"') {
        const opened = line;
        position++;
        for (;;) {
          if (position >= input.length) throw new CsvSyntaxError(opened, "a quoted field is never closed");
          const char = input[position] as string;
          if (char === '"') {
            if (input[position + 1] === '"') {
              value += '"';
              position += 2;
              continue;
            }
            position++;
            break;
          }
          if (char === "\n" || (char === "\r" && input[position + 1] !== "\n")) line++;
          value += char;
          position++;
        }
        const after = input[position];
        if (after !== undefined && after !== "," && after !== "\r" && after !== "\n") {
          throw new CsvSyntaxError(line, `text after the closing quote of a field ("…"${after}…); double a quote inside quotes`);
        }
      } else {
        while (position < input.length && !",\r\n".includes(input[position] as string)) {
          if (input[position] === '"') {
            throw new CsvSyntaxError(
              line,
              'a quote inside a field that does not start with one; quote the field and double the quote ("")',
            );
          }
          value += input[position];
          position++;
        }
      }
      fields.push(value);
      if (input[position] === ",") {
        position++;
        continue;
      }
      break;
    }
    if (input[position] === "\r") position++;
    if (input[position] === "\n") position++;
    line++;
    if (!isBlank(fields)) records.push({ line: start, fields });
  }
  return records;
}
