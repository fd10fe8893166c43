import { lookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import type { PrivateUrlsSetting } from "../config.ts";
import { validationError } from "../errors.ts";
import type { Mode } from "../lib/scope.ts";

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has; injectable so tests (and drills) control DNS. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const resolveWithSystemDns: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family }));

/** An address the guard will not connect to; `range` (an ipaddr.js range name) is for the server log only. */
export class RefusedAddressError extends Error {
  readonly code = "WEBHOOK_ADDRESS_REFUSED";
  constructor(readonly range: string) {
    super(`webhook target refused: ${range} address`);
  }
}

/** The address as WHATWG URL writes it: one spelling per address (`::127.0.0.1` is `::7f00:1`). */
function canonical(bare: string): string {
  if (isIP(bare) !== 6 || bare.includes("%")) return bare;
  return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
}

/**
 * Null for a public unicast address; otherwise why not: the ipaddr.js range (`loopback`, `private`,
 * `6to4`, `teredo`, `rfc6052` (NAT64), `rfc6145`, …), `ipv4Compatible`, or `invalid` for a non-address.
 * IPv4-mapped addresses are judged by the IPv4 address they carry. Every IPv6 range that embeds an
 * IPv4 address or tunnels to one is refused whole: what sits behind a relay is not ours to check.
 */
export function classifyAddress(address: string): string | null {
  const bare = canonical(address.replace(/^\[|\]$/g, ""));
  if (isIP(bare.replace(/%.*$/, "")) === 0 || !ipaddr.isValid(bare)) return "invalid";
  const parsed = ipaddr.parse(bare);
  const ip = parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
  const range = ip.range();
  if (range !== "unicast") return range;
  if (ip instanceof ipaddr.IPv6 && ip.parts.slice(0, 6).every((part) => part === 0)) return "ipv4Compatible";
  return null;
}

/** Throws RefusedAddressError unless every address is public (or private ones are allowed). */
function assertAddressesAllowed(addresses: ResolvedAddress[], allowPrivateUrls: boolean): void {
  if (addresses.length === 0) throw Object.assign(new Error("no addresses"), { code: "ENOTFOUND" });
  if (allowPrivateUrls) return;
  for (const { address } of addresses) {
    const range = classifyAddress(address);
    if (range) throw new RefusedAddressError(range);
  }
}

/**
 * The `lookup` a webhook socket connects through: it resolves once, refuses the host when any address
 * is not public, and hands the socket exactly the addresses it checked. Checking here rather than
 * before the request closes the DNS-rebinding gap between a check and a second resolution.
 */
export function pinnedLookup(resolveHost: HostResolver, allowPrivateUrls: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolveHost(hostname)
      .then((resolved) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = family ? resolved.filter((entry) => entry.family === family) : resolved;
        assertAddressesAllowed(addresses, allowPrivateUrls);
        const [first] = addresses;
        if (!first) throw Object.assign(new Error("no addresses"), { code: "ENOTFOUND" });
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, ""));
  };
}

/** An IP literal from a URL host (`[::1]` → `::1`), or null for a host name. */
export function ipLiteralOf(hostname: string): string | null {
  const bare = hostname.replace(/^\[|\]$/g, "");
  return isIP(bare) === 0 ? null : bare;
}

/** Whether an endpoint of `mode` may target non-public addresses under WEBHOOK_ALLOW_PRIVATE_URLS. */
export function privateUrlsAllowedFor(setting: PrivateUrlsSetting, mode: Mode): boolean {
  return setting === true || (setting === "test" && mode === "test");
}

const refuse = (message: string) => validationError([{ field: "url", message }], `Webhook URL refused: url ${message}`);

/**
 * An endpoint URL must be http(s), https in live mode, and (unless private URLs are allowed for the
 * mode) a host whose every address is public. Refusals name the rule, never a resolved address or a DNS error, so
 * the answer cannot be used to map a network. The same rule is applied again at every send.
 */
export async function assertEndpointUrlAllowed(
  raw: string,
  mode: Mode,
  options: { allowPrivateUrls: PrivateUrlsSetting; resolveHost?: HostResolver },
): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refuse("must use http or https");
  if (mode === "live" && url.protocol !== "https:") throw refuse("must use https in live mode");
  if (privateUrlsAllowedFor(options.allowPrivateUrls, mode)) return;
  const literal = ipLiteralOf(url.hostname);
  if (literal) {
    if (classifyAddress(literal)) throw refuse("must not be a private or loopback address");
    return;
  }
  try {
    assertAddressesAllowed(await (options.resolveHost ?? resolveWithSystemDns)(url.hostname), false);
  } catch {
    throw refuse("must resolve to public addresses only");
  }
}
