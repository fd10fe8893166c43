import { describe, expect, test } from "bun:test";
import { maskDestination } from "../../src/lib/mask.ts";
import { isMeterNumber, isSmartcardNumber, normalisePhone } from "../../src/lib/shared/destinations.ts";
import { formatNgn } from "../../src/lib/shared/money.ts";

describe("masking (openapi.yaml, Transaction.destination)", () => {
  test.each([
    ["08031234567", "0803****567"],
    ["45031234567", "4503****567"],
    ["7031234567", "7031***567"],
    ["123456789", "12*****89"],
    ["12345", "12*45"],
    ["1234", "****"],
  ])("%s → %s", (input, masked) => {
    expect(maskDestination(input)).toBe(masked);
  });
});

describe("phone numbers", () => {
  test.each([
    ["08031234567", "08031234567"],
    ["+2348031234567", "08031234567"],
    ["2348031234567", "08031234567"],
    ["0803 123 4567", "08031234567"],
    ["09121234567", "09121234567"],
    ["0803123456", null],
    ["080312345678", null],
    ["+2358031234567", null],
    ["06031234567", null],
    ["0803123456a", null],
    ["", null],
  ])("%s → %s", (input, normalised) => {
    expect(normalisePhone(input)).toBe(normalised);
  });
});

describe("meters, smartcards, NGN", () => {
  test("meter numbers are 11-13 digits, smartcards 10-12", () => {
    expect([10, 11, 13, 14].map((n) => isMeterNumber("1".repeat(n)))).toEqual([false, true, true, false]);
    expect([9, 10, 12, 13].map((n) => isSmartcardNumber("1".repeat(n)))).toEqual([false, true, true, false]);
    expect(isMeterNumber("4503123456x")).toBe(false);
  });

  test.each([
    [15000, "150.00"],
    [50000, "500.00"],
    [5, "0.05"],
    [123456789, "1234567.89"],
    [0, "0.00"],
  ])("%d kobo → NGN %s (two decimals, no grouping)", (kobo, text) => {
    expect(formatNgn(kobo)).toBe(text);
  });
});
