import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors.ts";
import {
  assertEndpointUrlAllowed,
  classifyAddress,
  type HostResolver,
  pinnedLookup,
  RefusedAddressError,
} from "../../src/webhooks/url-guard.ts";

// Addresses that carry (or route to) an internal IPv4 address inside IPv6, each accepted by the hand-written check.
const ipv6Tricks = [
  ["2002:7f00:1::", "6to4"], // 6to4 of 127.0.0.1
  ["2002:a9fe:a9fe::", "6to4"], // 6to4 of 169.254.169.254 (cloud metadata)
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "teredo"], // Teredo, client 127.0.0.1 (stored inverted)
  ["2001::", "teredo"],
  ["::ffff:0:7f00:1", "rfc6145"], // IPv4-translated 127.0.0.1
  ["64:ff9b:1::7f00:1", "rfc6052"], // local-use NAT64 of 127.0.0.1
  ["64:ff9b::7f00:1", "rfc6052"], // well-known NAT64 of 127.0.0.1
  ["64:ff9b::808:808", "rfc6052"], // NAT64 of a public address: refused too, the prefix is not ours to trust
  ["::7f00:1", "ipv4Compatible"], // IPv4-compatible 127.0.0.1
  ["::808:808", "ipv4Compatible"],
] as const;

describe("address classification (ipaddr.js ranges; only public unicast passes)", () => {
  test.each([
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.10", "private"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.1", "reserved"],
    ["198.18.0.1", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fc00::1", "uniqueLocal"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:a9fe:a9fe", "linkLocal"],
    ["::127.0.0.1", "ipv4Compatible"],
    ["example.com", "invalid"],
    ...ipv6Tricks,
  ] as const)("%s is refused as %s", (address, range) => {
    expect(classifyAddress(address)).toBe(range);
  });

  test.each([
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "100.128.0.1",
    "93.184.216.34",
    "2001:4860:4860::8888",
    "2606:4700::1111",
    "::ffff:8.8.8.8",
  ])("%s is public", (address) => {
    expect(classifyAddress(address)).toBeNull();
  });
});

/** A resolver the test controls: no real DNS is asked. */
function fixedResolver(table: Record<string, string[]>): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

const resolver = fixedResolver({
  "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "split.example.com": ["93.184.216.34", "10.0.0.7"],
  "internal.example.com": ["10.1.2.3"],
  "sixtofour.example.com": ["2002:7f00:1::"],
});

async function refusal(url: string, mode: "test" | "live", allowPrivateUrls = false): Promise<string | null> {
  try {
    await assertEndpointUrlAllowed(url, mode, { allowPrivateUrls, resolveHost: resolver });
    return null;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    expect(error.code).toBe("VALIDATION_FAILED");
    const errors = (error.data as { errors: { field: string; message: string }[] }).errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe("url");
    return errors[0]?.message ?? "";
  }
}

describe("endpoint URL guard", () => {
  test.each(ipv6Tricks.map(([address]) => address))("https://[%s]/ is refused in live mode", async (address) => {
    expect(await refusal(`https://[${address}]/hooks`, "live")).toBe("must not be a private or loopback address");
  });

  test.each([
    ["ftp://example.com/x", "test", false, "must use http or https"],
    ["http://127.0.0.1:4000/hooks", "test", false, "must not be a private or loopback address"],
    ["http://[::ffff:7f00:1]:4000/hooks", "test", false, "must not be a private or loopback address"],
    ["http://internal.example.com/hooks", "test", false, "must resolve to public addresses only"],
    ["http://hooks.example.com/hooks", "test", false, null],
    ["http://127.0.0.1:4000/hooks", "test", true, null],
    ["http://example.com/hooks", "live", false, "must use https in live mode"],
    ["https://10.0.0.5/hooks", "live", false, "must not be a private or loopback address"],
    ["https://169.254.169.254/latest", "live", false, "must not be a private or loopback address"],
    ["https://split.example.com/hooks", "live", false, "must resolve to public addresses only"],
    ["https://sixtofour.example.com/hooks", "live", false, "must resolve to public addresses only"],
    ["https://nowhere.example.com/hooks", "live", false, "must resolve to public addresses only"],
    ["https://hooks.example.com/hooks", "live", false, null],
    ["https://93.184.216.34/hooks", "live", false, null],
    ["https://127.0.0.1/hooks", "live", true, null],
    ["http://127.0.0.1/hooks", "live", true, "must use https in live mode"],
  ] as const)("%s in %s mode (allow private: %p)", async (url, mode, allowPrivate, expected) => {
    expect(await refusal(url, mode, allowPrivate)).toBe(expected);
  });

  test("a refusal names neither the resolved address nor a DNS error", async () => {
    for (const url of ["https://internal.example.com/", "https://nowhere.example.com/"]) {
      const message = (await refusal(url, "live")) ?? "";
      expect(message).not.toMatch(/10\.1\.2\.3|ENOTFOUND|getaddrinfo|private\b.*10\./);
    }
  });
});

describe("the connect-time lookup", () => {
  const lookupOnce = (hostname: string, allowPrivateUrls: boolean) =>
    new Promise<{ error: Error | null; addresses: unknown }>((resolve) => {
      pinnedLookup(resolver, allowPrivateUrls)(hostname, { all: true }, (error, addresses) => resolve({ error, addresses }));
    });

  test("hands the socket exactly the addresses it checked", async () => {
    expect(await lookupOnce("hooks.example.com", false)).toEqual({
      error: null,
      addresses: [
        { address: "93.184.216.34", family: 4 },
        { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
      ],
    });
  });

  test("refuses a host when any address it resolves to is not public", async () => {
    for (const hostname of ["split.example.com", "internal.example.com", "sixtofour.example.com"]) {
      const { error } = await lookupOnce(hostname, false);
      expect(error).toBeInstanceOf(RefusedAddressError);
    }
    expect((await lookupOnce("internal.example.com", true)).error).toBeNull();
  });
});
