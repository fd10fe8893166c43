import { describe, expect, test } from "bun:test";
import { addressAllowed, canonicalCidr, parseAllowList } from "../../src/auth/allow-list.ts";

describe("canonicalCidr", () => {
  test.each([
    ["203.0.113.7", "203.0.113.7/32"],
    [" 10.1.2.3/8 ", "10.0.0.0/8"],
    ["0.0.0.0/0", "0.0.0.0/0"],
    ["::1", "::1/128"],
    ["2001:DB8:0:0:0:0:0:1/32", "2001:db8::/32"],
    ["::ffff:10.0.0.0/104", "::ffff:a00:0/104"],
  ])("%s → %s", (entry, cidr) => {
    expect(canonicalCidr(entry)).toEqual({ cidr });
  });

  test.each([
    "",
    "10.0.0.256",
    "127.1",
    "0x7f.0.0.1",
    "10.0.0.0/",
    "10.0.0.0/33",
    "10.0.0.0/-1",
    "10.0.0.0/8/8",
    "::1/129",
    "fe80::1%eth0",
    "example.com",
  ])("%p is refused", (entry) => {
    expect("error" in canonicalCidr(entry)).toBe(true);
  });
});

test("parseAllowList names each bad entry by its index and drops duplicates", () => {
  expect(parseAllowList(["10.0.0.1/8", "nope", "10.0.0.0/8", "::1/200"])).toEqual({
    cidrs: ["10.0.0.0/8"],
    errors: [
      { field: "allowed_ips[1]", message: "is not an IP address or CIDR block (nope)" },
      { field: "allowed_ips[3]", message: "has a prefix length over 128 (::1/200)" },
    ],
  });
});

describe("addressAllowed", () => {
  test.each([
    [["10.0.0.0/8"], "10.255.0.1", true],
    [["10.0.0.0/8"], "11.0.0.1", false],
    [["10.0.0.0/8"], "::ffff:10.0.0.1", true],
    [["::ffff:10.0.0.0/104"], "10.0.0.1", true],
    [["::1/128"], "::1", true],
    [["::1/128"], "127.0.0.1", false],
    [["0.0.0.0/0"], "2001:db8::1", false],
    [["::/0"], "2001:db8::1", true],
    [["fe80::/10"], "fe80::1%eth0", true],
    [["10.0.0.0/8"], "in-process", false],
    [["10.0.0.0/8"], "", false],
  ])("%p from %s: %p", (cidrs, address, allowed) => {
    expect(addressAllowed(address, cidrs)).toBe(allowed);
  });
});
