import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import type { FieldError } from "../errors.ts";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * One allow-list entry in canonical form (`203.0.113.0/24`, `2001:db8::/48`), or why it is not one. A bare
 * address is a block of one (/32 or /128); host bits are cleared; only the plain notations `net.isIP`
 * accepts are taken (no `127.1`, no octal, no zone id).
 */
export function canonicalCidr(entry: string): { cidr: string } | { error: string } {
  const [address = "", prefix, extra] = entry.trim().split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined || address.includes("%")) return { error: "is not an IP address or CIDR block" };
  const maxBits = family === 4 ? 32 : 128;
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return { error: "has a prefix length that is not a number" };
  const bits = prefix === undefined ? maxBits : Number(prefix);
  if (bits > maxBits) return { error: `has a prefix length over ${maxBits}` };
  const network =
    family === 4
      ? ipaddr.IPv4.networkAddressFromCIDR(`${address}/${bits}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${address}/${bits}`);
  const text = network instanceof ipaddr.IPv6 ? network.toRFC5952String() : network.toString();
  return { cidr: `${text}/${bits}` };
}

/** Checks every entry of a requested allow-list; the canonical list, or one error per bad entry (`allowed_ips[2]`). */
export function parseAllowList(entries: string[], field = "allowed_ips"): { cidrs: string[]; errors: FieldError[] } {
  const cidrs: string[] = [];
  const errors: FieldError[] = [];
  entries.forEach((entry, index) => {
    const parsed = canonicalCidr(entry);
    if ("error" in parsed) errors.push({ field: `${field}[${index}]`, message: `${parsed.error} (${entry.slice(0, 64)})` });
    else if (!cidrs.includes(parsed.cidr)) cidrs.push(parsed.cidr);
  });
  return { cidrs, errors };
}

function parseClient(address: string): Address[] {
  const plain = address.split("%")[0] ?? "";
  if (isIP(plain) === 0) return [];
  const parsed = ipaddr.parse(plain);
  // An IPv4 client may reach a dual-stack listener as ::ffff:a.b.c.d: it is checked in both forms.
  if (parsed instanceof ipaddr.IPv6) return parsed.isIPv4MappedAddress() ? [parsed.toIPv4Address(), parsed] : [parsed];
  return [parsed, parsed.toIPv4MappedAddress()];
}

/** Whether `address` (the client's, as the server determined it) lies in one of the canonical blocks. */
export function addressAllowed(address: string, cidrs: readonly string[]): boolean {
  const candidates = parseClient(address);
  return cidrs.some((cidr) => {
    const [network, bits] = ipaddr.parseCIDR(cidr);
    return candidates.some((candidate) => candidate.kind() === network.kind() && candidate.match(network, bits));
  });
}
