import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors.ts";
import { assertEndpointUrlAllowed, checkPublicHost, classifyAddress } from "../../src/webhooks/url-guard.ts";

describe("IP address classification", () => {
  test.each([
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.10", "private"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.254", "cgnat"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fc00::1", "unique-local"],
    ["fd12:3456:789a::1", "unique-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["fec0::1", "site-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["64:ff9b::192.168.0.1", "private"],
  ] as const)("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  test.each([
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "172.15.255.255",
    "100.128.0.1",
    "192.169.0.1",
    "2001:4860:4860::8888",
    "2606:4700::1111",
    "::ffff:8.8.8.8",
  ])("%s is public", (address) => {
    expect(classifyAddress(address)).toBeNull();
  });

  test("a host name is not classified without DNS", () => {
    expect(classifyAddress("example.com")).toBeNull();
  });

  test("localhost resolves to loopback and is refused", async () => {
    const check = await checkPublicHost("localhost");
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toContain("loopback");
  });
});

async function refusal(url: string, mode: "test" | "live", allowPrivate = false): Promise<string | null> {
  try {
    await assertEndpointUrlAllowed(url, mode, allowPrivate);
    return null;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    expect(error.code).toBe("VALIDATION_FAILED");
    const errors = (error.data as { errors: { field: string; message: string }[] }).errors;
    expect(errors[0]?.field).toBe("url");
    return errors[0]?.message ?? "";
  }
}

describe("endpoint URL guard", () => {
  test.each([
    ["http://127.0.0.1:4000/hooks", "test", false, null],
    ["http://localhost/hooks", "test", false, null],
    ["ftp://example.com/x", "test", false, "must use http or https"],
    ["http://example.com/hooks", "live", false, "must use https in live mode"],
    ["https://127.0.0.1/hooks", "live", false, "127.0.0.1 is loopback"],
    ["https://[::1]/hooks", "live", false, "::1 is loopback"],
    ["https://10.0.0.5/hooks", "live", false, "10.0.0.5 is private"],
    ["https://169.254.169.254/latest", "live", false, "is link-local"],
    ["https://localhost/hooks", "live", false, "is loopback"],
    ["https://93.184.216.34/hooks", "live", false, null],
    ["https://127.0.0.1/hooks", "live", true, null],
    ["http://127.0.0.1/hooks", "live", true, "must use https in live mode"],
  ] as const)("%s in %s mode (allow private: %p)", async (url, mode, allowPrivate, expected) => {
    const message = await refusal(url, mode, allowPrivate);
    if (expected === null) expect(message).toBeNull();
    else expect(message).toContain(expected);
  });
});
