import { isMeterNumber, isSmartcardNumber, normalisePhone } from "../../src/lib/shared/destinations.ts";
import { parseNgn } from "../money.ts";
import { ask } from "../prompt.ts";

export const askPhone = (): Promise<string> =>
  ask("Phone number", { validate: (value) => normalisePhone(value) !== null || "a Nigerian phone number such as 08031234567" });

export const askMeter = (): Promise<string> =>
  ask("Meter number", { validate: (value) => isMeterNumber(value) || "11 to 13 digits" });

export const askSmartcard = (): Promise<string> =>
  ask("Smartcard number", { validate: (value) => isSmartcardNumber(value) || "10 to 12 digits" });

/** Asks for an amount in NGN (`example` shows one when the answer is not an amount) and returns it in kobo. */
export async function askAmount(example: string): Promise<number> {
  const validate = (value: string): true | string =>
    /^\d+(\.\d{1,2})?$/.test(value.trim()) || `an amount in NGN, e.g. ${example}`;
  return parseNgn(await ask("Amount (NGN)", { validate }));
}
