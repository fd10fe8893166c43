import { stringify } from "yaml";

type Json = Record<string, unknown>;

export type SpecViewName = "client" | "admin";

/** The operation groups (tags) each reference page shows; every tag of openapi.yaml is in exactly one. */
export const viewTags: Readonly<Record<SpecViewName, readonly string[]>> = {
  client: ["Vending", "Verification", "Transactions", "Catalogue", "Wallet", "Webhooks", "Keys", "Request logs"],
  admin: ["Admin", "Callbacks", "Operations"],
};

const methods = ["get", "put", "post", "delete", "patch", "options", "head", "trace"];

/** Operations of a path item (or a webhook) whose tags are in `tags`; the item's other fields kept. Null when none is. */
function filterItem(item: Json, tags: readonly string[]): Json | null {
  const kept: Json = {};
  let operations = 0;
  for (const [key, value] of Object.entries(item)) {
    if (!methods.includes(key)) {
      kept[key] = value;
      continue;
    }
    const operationTags = ((value as Json).tags ?? []) as string[];
    if (operationTags.some((tag) => tags.includes(tag))) {
      kept[key] = value;
      operations++;
    }
  }
  return operations > 0 ? kept : null;
}

function filterItems(items: Json | undefined, tags: readonly string[]): Json {
  const kept: Json = {};
  for (const [name, item] of Object.entries(items ?? {})) {
    const filtered = filterItem(item as Json, tags);
    if (filtered) kept[name] = filtered;
  }
  return kept;
}

/** Every `#/components/<section>/<name>` a value refers to, and the security schemes its requirements name. */
function collectReferences(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectReferences(item, found);
    return;
  }
  if (!value || typeof value !== "object") return;
  for (const [key, child] of Object.entries(value)) {
    if (key === "$ref" && typeof child === "string" && child.startsWith("#/components/")) {
      found.add(child.slice("#/components/".length).split("/").slice(0, 2).join("/"));
    } else if (key === "security" && Array.isArray(child)) {
      for (const requirement of child)
        for (const scheme of Object.keys(requirement ?? {})) found.add(`securitySchemes/${scheme}`);
    } else {
      collectReferences(child, found);
    }
  }
}

/** The components reachable from `roots` (directly or through other components); the rest left out. */
function reachableComponents(components: Json, roots: unknown): Json {
  const found = new Set<string>();
  collectReferences(roots, found);
  const done = new Set<string>();
  for (let pending = [...found]; pending.length > 0; pending = [...found].filter((entry) => !done.has(entry))) {
    for (const entry of pending) {
      done.add(entry);
      const [section = "", name = ""] = entry.split("/");
      collectReferences((components[section] as Json | undefined)?.[name], found);
    }
  }
  const kept: Json = {};
  for (const [section, entries] of Object.entries(components)) {
    const names = Object.keys(entries as Json).filter((name) => found.has(`${section}/${name}`));
    if (names.length > 0) kept[section] = Object.fromEntries(names.map((name) => [name, (entries as Json)[name]]));
  }
  return kept;
}

/**
 * The contract cut to the operations and webhooks of `tags`, and only the components they (and `security`,
 * the document's by default) use: for a reference page, and for each of the SDK's generated clients.
 */
export function contractCut(document: Json, tags: readonly string[], security: unknown = document.security): Json {
  const paths = filterItems(document.paths as Json, tags);
  const webhooks = filterItems(document.webhooks as Json | undefined, tags);
  const result: Json = {
    ...document,
    security,
    tags: ((document.tags ?? []) as Json[]).filter((tag) => tags.includes(String(tag.name))),
    paths,
    components: reachableComponents(document.components as Json, { paths, webhooks, security }),
  };
  if (Object.keys(webhooks).length > 0) result.webhooks = webhooks;
  else delete result.webhooks;
  return result;
}

/**
 * The part of the contract one reference page shows (`contractCut` of its tags). The admin view has its own
 * introduction (`info.x-admin-description`) and the admin token as its default security; the client view
 * keeps the document's.
 */
export function specView(document: Json, view: SpecViewName): Json {
  const { "x-admin-description": adminDescription, ...info } = document.info as Json;
  const security = view === "admin" ? [{ AdminToken: [] }] : document.security;
  const viewInfo =
    view === "admin" ? { ...info, title: `${String(info.title)}: operator reference`, description: adminDescription } : info;
  return { ...contractCut(document, viewTags[view], security), info: viewInfo };
}

/** The view as YAML text, as `/openapi.yaml?view=` serves it. */
export function specViewText(document: Json, view: SpecViewName): string {
  return stringify(specView(document, view), { lineWidth: 0, aliasDuplicateObjects: false });
}
