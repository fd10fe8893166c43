/**
 * Builds the source of generated/constants.ts: every string enumeration of `components.schemas`, as a
 * readonly tuple and its union type, so the schema, the services and the CLI never retype a list.
 *
 * Naming: a schema that is itself an enum keeps its name (`TransactionStatus` → `transactionStatuses`,
 * type `TransactionStatus`). An enum on an object property is named after the property when every schema
 * that has it lists the same values (`meter_type` → `meterTypes`, type `MeterType`), and after the
 * schema and the property otherwise (`LedgerEntry.kind` → `ledgerEntryKinds`, type `LedgerEntryKind`).
 * `null` in a nullable enum is left out. Order follows the spec, so the output is stable.
 */
import { parse } from "yaml";

interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, SchemaNode>;
}

interface EnumConstant {
  /** PascalCase type name; the constant is its camelCase plural. */
  typeName: string;
  values: string[];
  /** Where the values come from, e.g. `components.schemas.Product.kind`. */
  sources: string[];
}

const pascalCase = (name: string): string =>
  name
    .split(/[_\-.\s]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");

function plural(word: string): string {
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

const constantName = (typeName: string): string => plural(typeName.charAt(0).toLowerCase() + typeName.slice(1));

/** The string values of a string enum, or undefined when the node is not one. */
function stringEnum(node: SchemaNode | undefined): string[] | undefined {
  if (!node?.enum) return undefined;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (!types.includes("string")) return undefined;
  const values = node.enum.filter((value): value is string => typeof value === "string");
  return values.length > 0 ? values : undefined;
}

const sameValues = (a: string[], b: string[]): boolean => a.length === b.length && a.every((value, i) => value === b[i]);

function collectEnums(schemas: Record<string, SchemaNode>): EnumConstant[] {
  const named: EnumConstant[] = [];
  const byProperty = new Map<string, { schema: string; values: string[] }[]>();
  for (const [schema, node] of Object.entries(schemas)) {
    const values = stringEnum(node);
    if (values) named.push({ typeName: schema, values, sources: [`components.schemas.${schema}`] });
    for (const [property, child] of Object.entries(node.properties ?? {})) {
      const propertyValues = stringEnum(child);
      if (!propertyValues) continue;
      const uses = byProperty.get(property) ?? [];
      uses.push({ schema, values: propertyValues });
      byProperty.set(property, uses);
    }
  }
  const properties: EnumConstant[] = [];
  for (const [property, uses] of byProperty) {
    const [first] = uses;
    if (first && uses.length > 1 && uses.every((use) => sameValues(use.values, first.values))) {
      const sources = uses.map((use) => `components.schemas.${use.schema}.${property}`);
      properties.push({ typeName: pascalCase(property), values: first.values, sources });
      continue;
    }
    for (const use of uses) {
      const typeName = `${use.schema}${pascalCase(property)}`;
      properties.push({ typeName, values: use.values, sources: [`components.schemas.${use.schema}.${property}`] });
    }
  }
  return [...named, ...properties];
}

function render(constant: EnumConstant): string {
  const name = constantName(constant.typeName);
  const list = constant.values.map((value) => JSON.stringify(value)).join(", ");
  return [
    `/** ${constant.sources.join(", ")} */`,
    `export const ${name} = [${list}] as const;`,
    `export type ${constant.typeName} = (typeof ${name})[number];`,
  ].join("\n");
}

/** The operations of the top-level `webhooks`: what the service sends rather than serves. */
function webhookOperationIds(webhooks: Record<string, Record<string, { operationId?: string }>>): string[] {
  return Object.values(webhooks).flatMap((item) =>
    Object.values(item).flatMap((operation) => (operation?.operationId ? [operation.operationId] : [])),
  );
}

/** The whole module, starting with `header`. */
export function enumConstantsSource(specText: string, header: string): string {
  const spec = parse(specText) as {
    components?: { schemas?: Record<string, SchemaNode> };
    webhooks?: Record<string, Record<string, { operationId?: string }>>;
  };
  const constants = collectEnums(spec.components?.schemas ?? {});
  const names = new Set<string>();
  for (const constant of constants) {
    if (names.has(constant.typeName)) throw new Error(`two enumerations would both be named ${constant.typeName}`);
    names.add(constant.typeName);
  }
  const sent: EnumConstant = {
    typeName: "SentOperationId",
    values: webhookOperationIds(spec.webhooks ?? {}),
    sources: ["webhooks (operations the service sends, not serves)"],
  };
  return `${header}\n${[...constants, sent].map(render).join("\n\n")}\n`;
}
