/**
 * A copy of the contract cut down to some operations, for the SDK's generated code: the client SDK gets the
 * operations an API key calls, the operator SDK the admin API. Paths and webhooks keep only the operations
 * `keep` accepts; `components` keeps only what those operations reach through `$ref`, so each SDK's types name
 * nothing of the other's.
 */
import { parse } from "yaml";

type Node = Record<string, unknown>;

export interface OperationInfo {
  operationId: string;
  tags: readonly string[];
}

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value);

/** Path items with only the kept operations; items left with none are dropped. */
function filterPathItems(items: unknown, keep: (operation: OperationInfo) => boolean): Node {
  const kept: Node = {};
  if (!isNode(items)) return kept;
  for (const [path, item] of Object.entries(items)) {
    if (!isNode(item)) continue;
    const copy: Node = {};
    let operations = 0;
    for (const [key, value] of Object.entries(item)) {
      if (!methods.includes(key)) copy[key] = value;
      else if (isNode(value)) {
        const info = { operationId: String(value.operationId ?? ""), tags: (value.tags as string[] | undefined) ?? [] };
        if (keep(info)) {
          copy[key] = value;
          operations += 1;
        }
      }
    }
    if (operations > 0) kept[path] = copy;
  }
  return kept;
}

function collectRefs(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, into);
  else if (isNode(node))
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") into.add(value);
      else collectRefs(value, into);
    }
}

/** `#/components/schemas/LedgerEntry/properties/kind` → `["schemas", "LedgerEntry"]`. */
function componentOf(ref: string): [string, string] | undefined {
  const match = /^#\/components\/([^/]+)\/([^/]+)/.exec(ref);
  return match?.[1] && match[2] ? [match[1], match[2]] : undefined;
}

/** The components reachable from `roots`, each section keeping the spec's order. */
function reachableComponents(components: Node, roots: unknown[]): Node {
  const reached = new Set<string>();
  const pending: unknown[] = [...roots];
  while (pending.length > 0) {
    const refs = new Set<string>();
    collectRefs(pending.pop(), refs);
    for (const ref of refs) {
      const target = componentOf(ref);
      if (!target) continue;
      const key = target.join("/");
      if (reached.has(key)) continue;
      reached.add(key);
      const section = components[target[0]];
      if (isNode(section)) pending.push(section[target[1]]);
    }
  }
  const kept: Node = {};
  for (const [sectionName, section] of Object.entries(components)) {
    if (!isNode(section)) continue;
    // Security schemes are named by operations, not referenced: keep them all.
    if (sectionName === "securitySchemes") {
      kept[sectionName] = section;
      continue;
    }
    const entries = Object.entries(section).filter(([name]) => reached.has(`${sectionName}/${name}`));
    if (entries.length > 0) kept[sectionName] = Object.fromEntries(entries);
  }
  return kept;
}

/** The contract (YAML text) with only the operations `keep` accepts, and the components they use. */
export function specSubset(specText: string, keep: (operation: OperationInfo) => boolean): Node {
  const spec = parse(specText) as Node;
  const paths = filterPathItems(spec.paths, keep);
  const webhooks = filterPathItems(spec.webhooks, keep);
  const keptTags = new Set([...Object.values(paths), ...Object.values(webhooks)].flatMap((item) => tagsOf(item as Node)));
  const tags = Array.isArray(spec.tags) ? spec.tags.filter((tag) => isNode(tag) && keptTags.has(String(tag.name))) : [];
  const { paths: _paths, webhooks: _webhooks, components, ...rest } = spec;
  return {
    ...rest,
    tags,
    paths,
    ...(Object.keys(webhooks).length > 0 ? { webhooks } : {}),
    components: reachableComponents(isNode(components) ? components : {}, [paths, webhooks, spec.security]),
  };
}

function tagsOf(item: Node): string[] {
  return methods.flatMap((method) => {
    const operation = item[method];
    return isNode(operation) && Array.isArray(operation.tags) ? operation.tags.map(String) : [];
  });
}
