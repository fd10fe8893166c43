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

export const isMeterNumber = (value: string): boolean => /^\d{11,13}$/.test(value);
export const isSmartcardNumber = (value: string): boolean => /^\d{10,12}$/.test(value);

/** `Insufficient wallet balance: available NGN 150.00, required NGN 500.00` style: two decimals, no grouping. */
export function formatNgn(kobo: number): string {
  const sign = kobo < 0 ? "-" : "";
  const abs = Math.abs(kobo);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}
