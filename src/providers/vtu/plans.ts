import { nairaToKobo } from "../../lib/shared/money.ts";
import { isRecord, readText } from "../readings.ts";
import type { ProviderPlan } from "../types.ts";
import { readCode } from "./answers.ts";
import type { VtuPlanSource } from "./mapping.ts";

/**
 * Reads a `GET /api/service-variations?serviceID=` answer: `{response_description: "000", content: {serviceID,
 * variations: [{variation_code, name, variation_amount: "100.00", fixedPrice: "Yes"}]}}` (older answers spell it
 * `varations`). Plans without a fixed price are left out (nothing to compare). A string: why it cannot be read.
 */
export function readVtuVariations(body: unknown, source: VtuPlanSource): ProviderPlan[] | string {
  if (!isRecord(body)) return "the answer is not a JSON object";
  const code = readCode({ code: body.code ?? body.response_description });
  if (code !== undefined && code !== "000") return `code ${code}`;
  const content = body.content;
  if (!isRecord(content)) return "the answer has no content";
  const answeredFor = readText(content, "serviceID");
  if (answeredFor !== undefined && answeredFor !== source.serviceID) return `the answer is about ${answeredFor}`;
  const variations = content.variations ?? content.varations;
  if (!Array.isArray(variations)) return "the answer has no variations";
  const plans: ProviderPlan[] = [];
  for (const [index, variation] of variations.entries()) {
    if (!isRecord(variation)) return `variation ${index} is not an object`;
    const planCode = readText(variation, "variation_code");
    const faceValueKobo = nairaToKobo(variation.variation_amount);
    if (!planCode || planCode.length > 64 || faceValueKobo === undefined) {
      return `variation ${index} has no readable variation_code and variation_amount`;
    }
    if (String(variation.fixedPrice ?? "Yes").toLowerCase() === "no") continue;
    const name = (readText(variation, "name") ?? planCode).slice(0, 200);
    plans.push({ code: planCode, name, service: source.service, network: source.network, faceValueKobo });
  }
  return plans;
}
