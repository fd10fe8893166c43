// The helpers live in src/lib/shared/, which the CLI imports too; import them from there.
export { isMeterNumber, isSmartcardNumber, normalisePhone } from "./shared/destinations.ts";
export { formatNgn } from "./shared/money.ts";
