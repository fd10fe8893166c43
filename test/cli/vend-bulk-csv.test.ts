import { describe, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { batchKey, maxBatchBytes, planBatches } from "../../cli/bulk/batches.ts";
import { readOrders } from "../../cli/bulk/orders.ts";
import { CsvSyntaxError, parseCsv } from "../../cli/csv.ts";

describe("parseCsv (RFC 4180)", () => {
  test.each([
    [
      "plain",
      "a,b\n1,2\n",
      [
        [1, ["a", "b"]],
        [2, ["1", "2"]],
      ],
    ],
    [
      "CRLF, no final line break",
      "a,b\r\n1,2",
      [
        [1, ["a", "b"]],
        [2, ["1", "2"]],
      ],
    ],
    [
      "a lone CR",
      "a,b\r1,2\r",
      [
        [1, ["a", "b"]],
        [2, ["1", "2"]],
      ],
    ],
    [
      "mixed line endings",
      "a\r\nb\nc\rd",
      [
        [1, ["a"]],
        [2, ["b"]],
        [3, ["c"]],
        [4, ["d"]],
      ],
    ],
    ["a byte order mark", "\uFEFFservice,amount\n", [[1, ["service", "amount"]]]],
    ["quoted comma and doubled quote", 'a,"b,""c"""\n', [[1, ["a", 'b,"c"']]]],
    [
      "a quoted line break counts its lines",
      'a,"x\r\ny\nz"\nnext,1\n',
      [
        [1, ["a", "x\r\ny\nz"]],
        [4, ["next", "1"]],
      ],
    ],
    ["empty fields", ",,x,\n", [[1, ["", "", "x", ""]]]],
    ["an empty quoted field", '"",1\n', [[1, ["", "1"]]]],
    [
      "blank lines and spreadsheet rows of commas are left out",
      "a,b\n\n,\n  , \r\n1,2\n\n",
      [
        [1, ["a", "b"]],
        [5, ["1", "2"]],
      ],
    ],
  ] as const)("%s", (_name, input, expected) => {
    expect(parseCsv(input).map((r) => [r.line, r.fields])).toEqual(expected.map(([line, fields]) => [line, [...fields]]));
  });

  test.each([
    ["an unclosed quote, reported where it opened", 'a\n"b\nc\n', 2, "never closed"],
    ["text after a closing quote", 'a\n"b"c\n', 2, "after the closing quote"],
    ["a quote inside an unquoted field", 'a\nb"c\n', 2, "does not start with one"],
    ["an error after a quoted CRLF, which is one line", '"p\r\nq"\n"b"c\n', 3, "after the closing quote"],
  ])("%s is an error with its line", (_name, input, line, message) => {
    let caught: unknown;
    try {
      parseCsv(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CsvSyntaxError);
    expect((caught as CsvSyntaxError).line).toBe(line);
    expect((caught as Error).message).toContain(message);
  });

  test("reads what csv-parse reads, for any table of fields written the RFC 4180 way", () => {
    const field = fc.string({ unit: fc.constantFrom("a", "1", " ", ",", '"', "\n", "\r\n", "é", "x") });
    const table = fc.array(fc.array(field, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(table, fc.constantFrom("\n", "\r\n"), (rows, eol) => {
        const quote = (f: string) => `"${f.replaceAll('"', '""')}"`;
        const text = rows.map((r) => r.map(quote).join(",")).join(eol) + eol;
        const ours = parseCsv(text).map((r) => r.fields);
        const theirs = (parse(text, { relax_column_count: true }) as string[][]).filter((r) => r.some((f) => f.trim() !== ""));
        expect(ours).toEqual(theirs);
      }),
    );
  });
});

const orders = (text: string) => readOrders(parseCsv(text));

describe("rows to orders", () => {
  test("each service's fields, NGN as kobo, metadata columns and the line in metadata", () => {
    const file = [
      "Service,network,destination,amount,product_code,meter_type,phone_number,client_reference,metadata.invoice",
      "Airtime,MTN,08031234567,100.50,,,,inv-1,A1",
      "data,,08031234568,,mtn-data-1gb-1d,,,inv-2,",
      "electricity,IKEDC,45031234567,5000,,Postpaid,08031234569,inv-3,A3",
      "cable,dstv,7031234567,,dstv-compact,,,,",
    ].join("\n");
    const { orders: read, problems } = orders(file);
    expect(problems).toEqual([]);
    expect(read.map((o) => o.order)).toEqual([
      {
        service: "airtime",
        network: "mtn",
        phone_number: "08031234567",
        amount_kobo: 10_050,
        client_reference: "inv-1",
        metadata: { invoice: "A1", vendctl_line: "2" },
      },
      {
        service: "data",
        product_code: "mtn-data-1gb-1d",
        phone_number: "08031234568",
        client_reference: "inv-2",
        metadata: { vendctl_line: "3" },
      },
      {
        service: "electricity",
        network: "ikedc",
        meter_number: "45031234567",
        phone_number: "08031234569",
        amount_kobo: 500_000,
        meter_type: "postpaid",
        client_reference: "inv-3",
        metadata: { invoice: "A3", vendctl_line: "4" },
      },
      {
        service: "cable",
        product_code: "dstv-compact",
        network: "dstv",
        smartcard_number: "7031234567",
        metadata: { vendctl_line: "5" },
      },
    ]);
    expect(read[0]?.needsAirtimeProduct).toBe("mtn");
    expect(read.map((o) => o.clientReference)).toEqual(["inv-1", "inv-2", "inv-3", null]);
  });

  test("every problem is reported with its line, none sent", () => {
    const file = [
      "service,network,destination,amount,product_code,meter_type",
      "airtime,mtn,0803,100,,",
      "gas,,,,,",
      "data,mtn,08031234567,,,",
      "electricity,,123,50.123,,weekly",
      "airtime,mtn,08031234567,100",
      "cable,dstv,7031234567,,dstv-compact,prepaid",
    ].join("\r\n");
    const { problems } = orders(file);
    expect(problems).toEqual([
      { line: 2, message: 'destination "0803" is not a Nigerian phone number such as 08031234567' },
      { line: 3, message: 'service "gas": expected airtime, data, cable, electricity' },
      { line: 4, message: "no product_code (a bundle code)" },
      { line: 5, message: 'amount must be an amount in NGN such as 500 or 500.50, got "50.123"' },
      { line: 5, message: 'destination "123" is not a meter number (11 to 13 digits)' },
      { line: 5, message: "no disco" },
      { line: 5, message: 'meter_type "weekly": expected prepaid or postpaid' },
      { line: 6, message: "4 fields, but the header has 6" },
      { line: 7, message: "meter_type is only for electricity" },
    ]);
  });

  test("a header with unknown or repeated columns, or without service, lists the columns there are", () => {
    const { problems } = orders("servise,amount,Amount,metadata.vendctl_line\nairtime,1,1,1\n");
    expect(problems.map((p) => p.message)).toEqual([
      'unknown column "servise"',
      'column "Amount" appears twice',
      'column "metadata.vendctl_line": vendctl_line is set by vendctl',
      'no "service" column',
      "columns: service, product_code, destination, amount, network, disco, biller, meter_type, phone_number, client_reference, metadata.<key>",
    ]);
    expect(orders("").problems).toEqual([{ line: 1, message: "the file is empty: a header row and at least one order" }]);
    expect(orders("service\n").problems).toEqual([{ line: 1, message: "no orders after the header row" }]);
  });
});

describe("batches and their keys", () => {
  test("split in file order; the key is the file's SHA-256 and the batch's first and last lines", () => {
    const lines = Array.from({ length: 5 }, (_, i) => `airtime,mtn,0803123456${i},100`);
    const { orders: read } = orders(["service,network,destination,amount", ...lines].join("\n"));
    const digest = "ab".repeat(32);
    const batches = planBatches(read, 2, digest);
    expect(batches.map((b) => [b.number, b.firstLine, b.lastLine, b.orders.length])).toEqual([
      [1, 2, 3, 2],
      [2, 4, 5, 2],
      [3, 6, 6, 1],
    ]);
    expect(batches[1]?.idempotencyKey).toBe(`vendctl-bulk-${digest}-4-5`);
    expect(batchKey(digest, 100_000, 100_999).length).toBeLessThanOrEqual(128);
  });

  test("a batch is cut short before its request passes 1 MB (the API refuses a body over 1 MiB)", () => {
    const keys = Array.from({ length: 10 }, (_, i) => `metadata.note${i}`);
    const note = "x".repeat(500);
    const lines = Array.from({ length: 1000 }, () => `airtime,mtn,08031234567,100,${keys.map(() => note).join(",")}`);
    const { orders: read, problems } = orders([`service,network,destination,amount,${keys.join(",")}`, ...lines].join("\n"));
    expect(problems).toEqual([]);
    const batches = planBatches(read, 1000, "0".repeat(64));
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.flatMap((b) => b.orders)).toEqual(read);
    for (const batch of batches) {
      expect(Buffer.byteLength(JSON.stringify({ orders: batch.orders.map((o) => o.order) }))).toBeLessThanOrEqual(maxBatchBytes);
    }
    expect(batches[1]?.firstLine).toBe((batches[0]?.lastLine ?? 0) + 1);
  });
});
