import { isMeterNumber, isSmartcardNumber, normalisePhone } from "../../src/lib/shared/destinations.ts";
import { parseNgn } from "../money.ts";
import { ask } from "../prompt.ts";
import { type AmountRange, describeRange, outOfRange } from "./amount.ts";

export const askPhone = (): Promise<string> =>
  ask("Phone number", { validate: (value) => normalisePhone(value) !== null || "a Nigerian phone number such as 08031234567" });

export const askMeter = (): Promise<string> =>
  ask("Meter number", { validate: (value) => isMeterNumber(value) || "11 to 13 digits" });

export const askSmartcard = (): Promise<string> =>
  ask("Smartcard number", { validate: (value) => isSmartcardNumber(value) || "10 to 12 digits" });

/**
 * Asks for an amount in NGN and returns it in kobo. With `range` the message shows it and an amount
 * outside it is asked again; `example` shows an amount when the answer is not one.
 */
export async function askAmount(example: string, range?: AmountRange): Promise<number> {
  const validate = (value: string): true | string => {
    let kobo: number;
    try {
      kobo = parseNgn(value);
    } catch {
      return `an amount in NGN, e.g. ${example}`;
    }
    return (range && outOfRange(range, kobo)) ?? true;
  };
  const message = range ? `Amount (${describeRange(range)})` : "Amount (NGN)";
  return parseNgn(await ask(message, { validate }));
}
