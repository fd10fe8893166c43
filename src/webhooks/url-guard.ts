import { lookup } from "node:dns/promises";
import { isIPv4, isIPv6 } from "node:net";
import type { Mode } from "../auth/keys.ts";
import { validationError } from "../errors.ts";

/** Why an address is not a public internet address. */
export type AddressClass =
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "cgnat"
  | "unique-local"
  | "site-local"
  | "multicast"
  | "reserved";

const ipv4Ranges: [prefix: number, bits: number, kind: AddressClass][] = [
  [0x00000000, 8, "unspecified"],
  [0x0a000000, 8, "private"],
  [0x64400000, 10, "cgnat"],
  [0x7f000000, 8, "loopback"],
  [0xa9fe0000, 16, "link-local"],
  [0xac100000, 12, "private"],
  [0xc0000000, 24, "reserved"],
  [0xc0a80000, 16, "private"],
  [0xc6120000, 15, "reserved"],
  [0xe0000000, 4, "multicast"],
  [0xf0000000, 4, "reserved"],
];

function ipv4ToNumber(address: string): number {
  return address.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

function classifyIpv4(value: number): AddressClass | null {
  for (const [prefix, bits, kind] of ipv4Ranges) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((value & mask) >>> 0 === prefix) return kind;
  }
  return null;
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded IPv4 tail becomes two groups). */
function ipv6Groups(address: string): number[] {
  const lastColon = address.lastIndexOf(":");
  const tail = address.slice(lastColon + 1);
  let text = address;
  if (isIPv4(tail)) {
    const v4 = ipv4ToNumber(tail);
    text = `${address.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const [head = "", rest] = text.split("::");
  const left = parse(head);
  if (rest === undefined) return left;
  const right = parse(rest);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function classifyIpv6(address: string): AddressClass | null {
  const g = ipv6Groups(address);
  const embeddedV4 = (((g[6] ?? 0) << 16) | (g[7] ?? 0)) >>> 0;
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return "unspecified";
  if (zeroUpTo(7) && g[7] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address.
  if (zeroUpTo(5) && (g[5] === 0xffff || g[5] === 0)) return classifyIpv4(embeddedV4);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return classifyIpv4(embeddedV4);
  const first = g[0] ?? 0;
  if ((first & 0xfe00) === 0xfc00) return "unique-local";
  if ((first & 0xffc0) === 0xfe80) return "link-local";
  if ((first & 0xffc0) === 0xfec0) return "site-local";
  if ((first & 0xff00) === 0xff00) return "multicast";
  return null;
}

/** The class of a non-public IP address, or null for a public one (and for anything that is not an IP literal). */
export function classifyAddress(address: string): AddressClass | null {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (isIPv4(bare)) return classifyIpv4(ipv4ToNumber(bare));
  if (isIPv6(bare)) return classifyIpv6(bare);
  return null;
}

export type AddressCheck = { ok: true } | { ok: false; reason: string };

/** Resolves `hostname` (all addresses) and refuses it when any address is not public. */
export async function checkPublicHost(hostname: string): Promise<AddressCheck> {
  const bare = hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIPv4(bare) || isIPv6(bare)) addresses = [bare];
  else {
    try {
      addresses = (await lookup(bare, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch {
      return { ok: false, reason: `host ${hostname} could not be resolved` };
    }
  }
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (kind) return { ok: false, reason: `must not resolve to a private or loopback address (${address} is ${kind})` };
  }
  return { ok: true };
}

const refuse = (message: string) => validationError([{ field: "url", message }], `Webhook URL refused: url ${message}`);

/**
 * Test mode takes any http(s) URL (developers run local receivers). Live mode needs https and a host
 * whose every address is public, unless the operator allows private URLs.
 */
export async function assertEndpointUrlAllowed(raw: string, mode: Mode, allowPrivateUrls: boolean): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse("must use http or https");
  if (mode === "test") return;
  if (url.protocol !== "https:") throw refuse("must use https in live mode");
  if (allowPrivateUrls) return;
  const check = await checkPublicHost(url.hostname);
  if (!check.ok) throw refuse(`${check.reason} in live mode`);
}
