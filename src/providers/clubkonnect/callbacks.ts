/** What a ClubKonnect callback says: which order, and the status it reports (only a hint until re-queried). */
export interface ClubkonnectCallbackHint {
  /** Our reference, sent as RequestID. */
  requestId?: string;
  /** ClubKonnect's own order id. */
  orderId?: string;
  /** ORDER_COMPLETED, ORDER_CANCELLED…, as sent. */
  status?: string;
}

// Longer values are no id of ours or ClubKonnect's; dropped rather than passed on.
const maxLength = 128;

/**
 * Reads the query of a ClubKonnect callback (`?orderdate=…&orderid=…&requestid=…&statuscode=…&orderstatus=…
 * &orderremark=…`; names matched in any case). Anyone can send one, so the service only re-queries the order it
 * names. Null when it names no order.
 */
export function readClubkonnectCallback(query: Record<string, string>): ClubkonnectCallbackHint | null {
  const byName = new Map(Object.entries(query).map(([name, value]) => [name.toLowerCase(), value.trim()]));
  const read = (name: string) => {
    const value = byName.get(name);
    return value && value.length <= maxLength ? value : undefined;
  };
  const requestId = read("requestid");
  const orderId = read("orderid");
  if (!requestId && !orderId) return null;
  const status = read("orderstatus") ?? read("status");
  return { ...(requestId ? { requestId } : {}), ...(orderId ? { orderId } : {}), ...(status ? { status } : {}) };
}
