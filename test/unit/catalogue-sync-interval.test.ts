import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/load-config.ts";

describe("CATALOGUE_SYNC_INTERVAL", () => {
  test.each([
    [undefined, undefined],
    ["", undefined],
    ["0", undefined],
    ["off", undefined],
    ["15", 900_000],
    ["90s", 90_000],
    ["30m", 1_800_000],
    ["6h", 21_600_000],
    ["1d", 86_400_000],
    ["7d", 604_800_000],
  ])("%p → %p ms", (value, ms) => {
    expect(loadConfig({ CATALOGUE_SYNC_INTERVAL: value }).operations.catalogueSyncIntervalMs).toBe(ms);
  });

  test.each([
    ["59s", "must be between 1m and 7d"],
    ["8d", "must be between 1m and 7d"],
    ["6 hours", "must be a duration such as 30m"],
    ["-5", "must be a duration such as 30m"],
  ])("%p is refused, naming the variable", (value, problem) => {
    expect(() => loadConfig({ CATALOGUE_SYNC_INTERVAL: value })).toThrow(`CATALOGUE_SYNC_INTERVAL ${problem}`);
  });
});
