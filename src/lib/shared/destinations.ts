// Shared by the server and the CLI: pure (no database, configuration or feature code).
/** Nigerian phone numbers in `080…`, `+234…` or `234…` form, normalised to 11 digits; null if not one. */
export function normalisePhone(input: string): string | null {
  const compact = input.replace(/[\s-]/g, "");
  let local: string;
  if (/^\+234\d{10}$/.test(compact)) local = `0${compact.slice(4)}`;
  else if (/^234\d{10}$/.test(compact)) local = `0${compact.slice(3)}`;
  else if (/^0\d{10}$/.test(compact)) local = compact;
  else return null;
  return /^0[789][01]\d{8}$/.test(local) ? local : null;
}

/** A prepaid or postpaid meter number: 11 to 13 digits. */
export const isMeterNumber = (value: string): boolean => /^\d{11,13}$/.test(value);

/** A cable smartcard or IUC number: 10 to 12 digits. */
export const isSmartcardNumber = (value: string): boolean => /^\d{10,12}$/.test(value);
