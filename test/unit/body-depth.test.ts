import { describe, expect, test } from "bun:test";
import { nestsDeeperThan, unstorableText } from "../../src/http/validation.ts";

describe("nestsDeeperThan", () => {
  const cases: [string, string, number, boolean][] = [
    ["flat object", '{"a":1}', 1, false],
    ["two levels against a limit of one", '{"a":[1]}', 1, true],
    ["siblings do not add up", '[[1],[2],{"a":[3]}]', 3, false],
    ["brackets in strings are text", '{"a":"[[[[{{{{"}', 1, false],
    ["an escaped quote does not end the string", '{"a":"\\"[[[["}', 1, false],
    ["an escaped backslash before the closing quote", '{"a":"\\\\","b":[[1]]}', 3, false],
    ["an escaped backslash before the closing quote, deeper", '{"a":"\\\\","b":[[[1]]]}', 3, true],
    ["64 levels at a limit of 64", `${"[".repeat(64)}${"]".repeat(64)}`, 64, false],
    ["65 levels at a limit of 64", `${"[".repeat(65)}${"]".repeat(65)}`, 64, true],
    ["unbalanced openings still count", "[".repeat(1_000_000), 64, true],
  ];
  test.each(cases)("%s", (_, text, limit, deeper) => {
    expect(nestsDeeperThan(text, limit)).toBe(deeper);
  });
});

describe("unstorableText walks without recursion", () => {
  test("a value nested 200,000 levels is walked without exhausting the stack", () => {
    let value: unknown = "a\u0000b";
    for (let i = 0; i < 200_000; i++) value = i % 2 ? [value] : { k: value };
    const problems = unstorableText(value);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toContain("NUL");
  });

  test("problems come out in document order, array items by index", () => {
    expect(
      unstorableText({
        orders: [{ client_reference: "ok" }, { client_reference: "a\u0000", "bad\u0000": 1 }],
        note: "\ud800",
        tags: ["x", "\u0000"],
      }),
    ).toEqual([
      {
        field: "orders[1].client_reference",
        message: "contains a NUL character or an unpaired surrogate, which cannot be stored",
      },
      { field: "orders[1]", message: "has a key that contains a NUL character or an unpaired surrogate, which cannot be stored" },
      { field: "note", message: "contains a NUL character or an unpaired surrogate, which cannot be stored" },
      { field: "tags[1]", message: "contains a NUL character or an unpaired surrogate, which cannot be stored" },
    ]);
  });
});
