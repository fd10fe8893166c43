import fc from "fast-check";
import { resolveRef } from "../../src/http/spec.ts";

type Schema = Record<string, unknown>;

/** Strings PostgreSQL, URL parsers and JSON handling find hard: NUL, unpaired surrogates, urn ids, encodings. */
export const nastyString = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "x\udfffy",
    "__proto__",
    "constructor",
    "%00",
    "%2e%2e%2f",
    "../../etc/passwd",
    "urn:uuid:00000000-0000-4000-8000-000000000000",
    "00000000-0000-4000-8000-000000000000",
    "0000000-0000-4000-8000-0000000000000",
    "NaN",
    "-1",
    "1e309",
    "9".repeat(40),
    "'; drop table transactions; --",
    "😀".repeat(40),
    "x".repeat(5000),
  ),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 20 }),
);

/** Realistic values by field name, so generated requests also get past validation into the services. */
const hints: Record<string, fc.Arbitrary<unknown>> = {
  product_code: fc.constantFrom("mtn-airtime", "glo-airtime", "mtn-data-1gb-1d", "ikedc-prepaid", "dstv-compact", "nope"),
  serviceid: fc.constantFrom("mtn-airtime", "airtel-airtime", "mtn-data-1gb-1d"),
  service_id: fc.constantFrom("mtn-airtime", "gotv-max"),
  phone_number: fc.constantFrom("08031234567", "+2348031231111", "2348031232222", "0803123", "08031234444"),
  receiver_phone_number: fc.constantFrom("08031234567", "08031235555", "08031236666"),
  destination: fc.constantFrom("08031234567", "12345678901", "1234567890"),
  network: fc.constantFrom("mtn", "glo", "airtel", "9mobile", "ikedc", "dstv", "nope"),
  biller: fc.constantFrom("dstv", "gotv", "ikedc", "nope"),
  meter_number: fc.constantFrom("12345678901", "45678901234", "1234"),
  smartcard_number: fc.constantFrom("1234567890", "7012345678", "12"),
  amount_kobo: fc.oneof(fc.constantFrom(5_000, 10_000, 100_000, 5_000_000, 0, -1, 2 ** 53), fc.integer()),
  amount: fc.oneof(fc.constantFrom(10_000, 150_000), fc.integer()),
  mode: fc.constantFrom("test", "live", "TEST"),
  url: fc.constantFrom("http://127.0.0.1:9/hook", "http://localhost:9/other", "ftp://x", "not a url", "https://[::1]/"),
};

const pick = (schema: Schema): Schema => (schema.allOf ? Object.assign({}, ...(schema.allOf as Schema[])) : schema);

/** Values of (roughly) a JSON schema of openapi.yaml; `mutate` mixes in wrong types and nasty strings. */
export function arbitraryFor(document: Schema, raw: unknown, depth = 0, name = ""): fc.Arbitrary<unknown> {
  const schema = pick(resolveRef(document, raw as Schema) ?? {});
  const hint = hints[name];
  const wrong = fc.oneof(nastyString, fc.integer(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }));
  const mutate = (valid: fc.Arbitrary<unknown>) => fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: wrong });
  if (hint) return mutate(hint);
  const variants = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (variants) return fc.oneof(...variants.map((v) => arbitraryFor(document, v, depth + 1, name)));
  if (Array.isArray(schema.enum)) return mutate(fc.constantFrom(...(schema.enum as unknown[])));
  switch (schema.type) {
    case "integer":
      return mutate(fc.integer({ min: Number(schema.minimum ?? -1000), max: Number(schema.maximum ?? 10_000_000) }));
    case "number":
      return mutate(fc.double({ noNaN: true }));
    case "boolean":
      return mutate(fc.boolean());
    case "array":
      return depth > 3 ? fc.constant([]) : mutate(fc.array(arbitraryFor(document, schema.items, depth + 1), { maxLength: 3 }));
    case "object": {
      if (depth > 3) return fc.constant({});
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      const record = fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([key, child]) => [key, arbitraryFor(document, child, depth + 1, key)]),
        ),
        { requiredKeys: [] },
      );
      const extra = fc.dictionary(nastyString, fc.oneof(nastyString, fc.integer()), { maxKeys: 3 });
      if (Object.keys(properties).length === 0) return mutate(extra);
      return mutate(
        fc.oneof(
          { weight: 4, arbitrary: record },
          { weight: 1, arbitrary: fc.tuple(record, extra).map(([a, b]) => ({ ...b, ...a })) },
        ),
      );
    }
    default: {
      const maxLength = Number(schema.maxLength ?? 64);
      const text =
        schema.format === "uuid"
          ? fc.uuid()
          : schema.format === "date-time"
            ? fc.date().map((d) => (Number.isNaN(d.getTime()) ? "x" : d.toISOString()))
            : fc.string({ maxLength: Math.min(maxLength + 2, 80) });
      return mutate(text);
    }
  }
}
