/**
 * Which file of src/ writes which table. It reads each file's syntax tree (comments are not part of it) and finds:
 * - in SQL text (strings, template strings, `+` chains; SQL comments left out): `insert into`, `update`,
 *   `delete from`, `merge into`, `truncate` (each table of its list), `copy t from`, and `alter table x rename to t`
 *   (a copy put in a table's place), whatever alias follows the table, its name quoted or `public.`-qualified;
 * - Drizzle's `.insert(t)`, `.update(t)` and `.delete(t)` of a table object, also through `const d = t` or
 *   `alias(t, "x")`.
 * A table name that reaches SQL through `${...}` is resolved: string literals and arrays of them, constants and
 * array destructuring, `sql.raw`, `sql.identifier`, `getTableName`, a postgres.js `tx(name)`, `list.join(", ")`,
 * `for (const t of list)`, a parameter typed by a union of literals or `(typeof list)[number]`, a parameter of a
 * function of the same file (the arguments of its calls), a Drizzle table object, and a name imported from a
 * module of the tree (its exported constant or table); every binding of a name in a file counts, whatever its scope
 * (more tables, never fewer). Not seen: names built at run time from elsewhere, and the
 * functions and triggers of `src/db/migrations/` (plpgsql), which are left out.
 * `bun scripts/table-writers.ts` prints the table ARCHITECTURE.md keeps between its `table-writers` markers;
 * test/unit/table-writers.test.ts holds the tree to it and to the rules of who writes what.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve as resolvePath } from "node:path";
import { getTableName, isTable } from "drizzle-orm";
import ts from "typescript";
import * as schema from "../src/db/schema/index.ts";

const root = join(import.meta.dir, "..");

/** Table names by the name the schema exports them under (`providerAttempts` → `provider_attempts`). */
export const tablesByExport: ReadonlyMap<string, string> = new Map(
  Object.entries(schema).flatMap(([name, value]) => (isTable(value) ? [[name, getTableName(value)] as const] : [])),
);

/** Every table the service has: the schema's, and those only migrations create (written by SQL alone). */
const knownTables = new Set([
  ...tablesByExport.values(),
  ...readdirSync(join(root, "src/db/migrations"))
    .filter((name) => name.endsWith(".sql"))
    .flatMap((name) => [
      ...readFileSync(join(root, "src/db/migrations", name), "utf8").matchAll(/create table (?:if not exists )?"?(\w+)/gi),
    ])
    .map((match) => (match[1] ?? "").toLowerCase()),
]);

type Mode = "name" | "table";
type Binding =
  | { kind: "value"; node: ts.Expression }
  | { kind: "parameter"; node: ts.ParameterDeclaration }
  | { kind: "import"; from: string; name: string }
  | { kind: "type"; node: ts.TypeNode };

interface Module {
  path: string;
  source: ts.SourceFile;
  bindings: Map<string, Binding[]>;
  /** `export * from` modules, by path. */
  reexports: string[];
}

const modules = new Map<string, Module>();

function moduleOf(path: string, text?: string): Module | undefined {
  const cached = text === undefined ? modules.get(path) : undefined;
  if (cached) return cached;
  let code = text;
  if (code === undefined) {
    try {
      code = readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  }
  const source = ts.createSourceFile(path, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const module: Module = { path, source, bindings: new Map(), reexports: [] };
  const bind = (name: string, binding: Binding) => module.bindings.set(name, [...(module.bindings.get(name) ?? []), binding]);
  const target = (specifier: ts.Expression) =>
    ts.isStringLiteral(specifier) && specifier.text.startsWith(".") ? resolvePath(dirname(path), specifier.text) : undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.initializer) {
      const init = node.initializer;
      if (ts.isIdentifier(node.name)) bind(node.name.text, { kind: "value", node: init });
      else if (ts.isArrayBindingPattern(node.name) && ts.isArrayLiteralExpression(unwrap(init)))
        node.name.elements.forEach((element, index) => {
          const value = (unwrap(init) as ts.ArrayLiteralExpression).elements[index];
          if (ts.isBindingElement(element) && ts.isIdentifier(element.name) && value)
            bind(element.name.text, { kind: "value", node: value });
        });
    } else if (ts.isForOfStatement(node) && ts.isVariableDeclarationList(node.initializer)) {
      for (const declaration of node.initializer.declarations)
        if (ts.isIdentifier(declaration.name)) bind(declaration.name.text, { kind: "value", node: node.expression });
    } else if (ts.isParameter(node) && ts.isIdentifier(node.name)) bind(node.name.text, { kind: "parameter", node });
    else if (ts.isTypeAliasDeclaration(node)) bind(node.name.text, { kind: "type", node: node.type });
    else if (ts.isImportDeclaration(node)) {
      const from = target(node.moduleSpecifier);
      const clause = node.importClause?.namedBindings;
      if (from && clause && ts.isNamedImports(clause))
        for (const element of clause.elements)
          bind(element.name.text, { kind: "import", from, name: (element.propertyName ?? element.name).text });
      if (from && clause && ts.isNamespaceImport(clause)) bind(clause.name.text, { kind: "import", from, name: "*" });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const from = target(node.moduleSpecifier);
      if (from && !node.exportClause) module.reexports.push(from);
      if (from && node.exportClause && ts.isNamedExports(node.exportClause))
        for (const element of node.exportClause.elements)
          bind(element.name.text, { kind: "import", from, name: (element.propertyName ?? element.name).text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (text === undefined) modules.set(path, module);
  return module;
}

function unwrap(node: ts.Expression): ts.Expression {
  let inner = node;
  while (
    ts.isParenthesizedExpression(inner) ||
    ts.isAsExpression(inner) ||
    ts.isSatisfiesExpression(inner) ||
    ts.isNonNullExpression(inner) ||
    ts.isTypeAssertionExpression(inner)
  )
    inner = inner.expression;
  return inner;
}

const calleeName = (call: ts.CallExpression): string | undefined => {
  const callee = unwrap(call.expression);
  if (ts.isIdentifier(callee)) return callee.text;
  return ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
};

/** At most this many names from one template of several unknowns. */
const combinationLimit = 256;

const combine = (parts: string[][]): string[] =>
  parts.reduce<string[]>((acc, options) => acc.flatMap((a) => options.map((o) => a + o)).slice(0, combinationLimit), [""]);

/**
 * The values `node` may have: string values (`name`), or the names of the Drizzle tables it may be (`table`).
 * `seen` guards against cycles.
 */
function valuesOf(node: ts.Expression, module: Module, mode: Mode, seen: Set<ts.Node>): string[] {
  const expression = unwrap(node);
  if (seen.has(expression)) return [];
  seen.add(expression);
  if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression))
    return mode === "name" ? [expression.text] : [];
  if (ts.isTemplateExpression(expression)) {
    if (mode === "table") return [];
    const parts = [[expression.head.text]];
    for (const span of expression.templateSpans) parts.push(valuesOf(span.expression, module, mode, seen), [span.literal.text]);
    return combine(parts);
  }
  if (ts.isTaggedTemplateExpression(expression))
    return mode === "name" && ts.isNoSubstitutionTemplateLiteral(expression.template) ? [expression.template.text] : [];
  if (ts.isArrayLiteralExpression(expression))
    return expression.elements.flatMap((e) => valuesOf(ts.isSpreadElement(e) ? e.expression : e, module, mode, seen));
  if (ts.isConditionalExpression(expression))
    return [...valuesOf(expression.whenTrue, module, mode, seen), ...valuesOf(expression.whenFalse, module, mode, seen)];
  if (ts.isBinaryExpression(expression)) {
    const [left, right] = [valuesOf(expression.left, module, mode, seen), valuesOf(expression.right, module, mode, seen)];
    return expression.operatorToken.kind === ts.SyntaxKind.PlusToken ? combine([left, right]) : [...left, ...right];
  }
  if (ts.isElementAccessExpression(expression)) return valuesOf(expression.expression, module, mode, seen);
  if (ts.isCallExpression(expression)) return callValues(expression, module, mode, seen);
  if (ts.isIdentifier(expression)) return identifierValues(expression.text, module, mode, seen);
  if (ts.isPropertyAccessExpression(expression)) {
    const owner = unwrap(expression.expression);
    if (!ts.isIdentifier(owner)) return [];
    const property = expression.name.text;
    return (module.bindings.get(owner.text) ?? []).flatMap((binding) => {
      if (binding.kind === "import" && binding.name === "*") return exportValues(binding.from, property, mode, seen);
      const value = binding.kind === "value" ? unwrap(binding.node) : undefined;
      if (!value || !ts.isObjectLiteralExpression(value)) return [];
      return value.properties.flatMap((p) =>
        ts.isPropertyAssignment(p) && p.name.getText() === property ? valuesOf(p.initializer, module, mode, seen) : [],
      );
    });
  }
  return [];
}

function callValues(call: ts.CallExpression, module: Module, mode: Mode, seen: Set<ts.Node>): string[] {
  const [first] = call.arguments;
  const name = calleeName(call);
  if (name === "pgTable") return first && ts.isStringLiteral(first) ? [first.text] : [];
  if (name === "alias") return first ? valuesOf(first, module, "table", seen) : [];
  if (mode === "table" || !first) return [];
  if (name === "raw" || name === "identifier" || name === "getTableName" || name === "String")
    return valuesOf(first, module, "name", seen);
  if (name === "join" && ts.isPropertyAccessExpression(call.expression))
    return valuesOf(call.expression.expression, module, "name", seen);
  // postgres.js quotes an identifier with the client itself: tx(table).
  if (ts.isIdentifier(call.expression) && call.arguments.length === 1) return valuesOf(first, module, "name", seen);
  return [];
}

/** An identifier's values; one bound nowhere in the file and named as a schema export is that table. */
function identifierValues(name: string, module: Module, mode: Mode, seen: Set<ts.Node>): string[] {
  const bindings = module.bindings.get(name);
  if (bindings) return bindingValues(bindings, module, mode, seen);
  const table = tablesByExport.get(name);
  return table ? [table] : [];
}

function bindingValues(bindings: Binding[], module: Module, mode: Mode, seen: Set<ts.Node>): string[] {
  return bindings.flatMap((binding) => {
    if (binding.kind === "value") return valuesOf(binding.node, module, mode, seen);
    if (binding.kind === "import" && binding.name !== "*") return exportValues(binding.from, binding.name, mode, seen);
    if (binding.kind === "parameter" && mode === "name") return parameterValues(binding.node, module, seen);
    return [];
  });
}

/** The values a module exports under `name` (following `export * from`). */
function exportValues(path: string, name: string, mode: Mode, seen: Set<ts.Node>): string[] {
  const module = moduleOf(path);
  if (!module) return [];
  const bindings = module.bindings.get(name);
  if (bindings) return bindingValues(bindings, module, mode, seen);
  return module.reexports.flatMap((from) => exportValues(from, name, mode, seen));
}

/** A parameter's values: from its type, else from the calls of its function in the same file. */
function parameterValues(parameter: ts.ParameterDeclaration, module: Module, seen: Set<ts.Node>): string[] {
  const typed = parameter.type ? typeValues(parameter.type, module, seen) : [];
  if (typed.length > 0) return typed;
  const fn = parameter.parent;
  const index = fn.parameters.indexOf(parameter);
  const holder = fn.parent;
  // A callback of list.map(...) and the like: its first parameter is an element of the list.
  if (ts.isCallExpression(holder) && ts.isPropertyAccessExpression(holder.expression) && index === 0)
    return valuesOf(holder.expression.expression, module, "name", seen);
  const fnName =
    ts.isFunctionDeclaration(fn) && fn.name ? fn.name.text : ts.isVariableDeclaration(holder) ? holder.name.getText() : undefined;
  if (!fnName) return [];
  const values: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === fnName) {
      const argument = node.arguments[index];
      if (argument) values.push(...valuesOf(argument, module, "name", seen));
    }
    ts.forEachChild(node, visit);
  };
  visit(module.source);
  return values;
}

function typeValues(type: ts.TypeNode, module: Module, seen: Set<ts.Node>): string[] {
  if (seen.has(type)) return [];
  seen.add(type);
  if (ts.isLiteralTypeNode(type)) return ts.isStringLiteral(type.literal) ? [type.literal.text] : [];
  if (ts.isUnionTypeNode(type)) return type.types.flatMap((t) => typeValues(t, module, seen));
  if (ts.isParenthesizedTypeNode(type)) return typeValues(type.type, module, seen);
  if (ts.isIndexedAccessTypeNode(type)) return typeValues(type.objectType, module, seen);
  if (ts.isTypeQueryNode(type) && ts.isIdentifier(type.exprName))
    return identifierValues(type.exprName.text, module, "name", seen);
  if (ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName)) {
    const name = type.typeName.text;
    return (module.bindings.get(name) ?? []).flatMap((binding) => {
      if (binding.kind === "type") return typeValues(binding.node, module, seen);
      if (binding.kind !== "import") return [];
      const source = moduleOf(binding.from);
      const alias = source?.bindings.get(binding.name)?.find((b) => b.kind === "type");
      return source && alias?.kind === "type" ? typeValues(alias.node, source, seen) : [];
    });
  }
  return [];
}

/** Stands for the `${...}` number `index` in SQL text: no word character, so `${label}update t` still reads `update t`. */
const placeholder = (index: number) => `§${index}§`;
const target = String.raw`(?:"?public"?\.)?"?(\w+|§\d+§)"?`;
const writePatterns = [
  new RegExp(
    String.raw`\b(?:insert\s+into|merge\s+into(?:\s+only)?|update(?:\s+only)?|delete\s+from(?:\s+only)?)\s+${target}`,
    "gi",
  ),
  new RegExp(String.raw`\bcopy\s+${target}\s*(?:\([^)]*\)\s*)?from\b`, "gi"),
  new RegExp(String.raw`\balter\s+table\s+(?:if\s+exists\s+)?(?:only\s+)?${target}\s+rename\s+to\s+${target}`, "gi"),
];
const truncatePattern = new RegExp(String.raw`\btruncate\s+(?:table\s+)?(?:only\s+)?(${target}(?:\s*,\s*${target})*)`, "gi");

/** The tables one piece of SQL text writes; `parts` are the `${...}` its placeholders stand for. */
function sqlWrites(text: string, parts: readonly ts.Expression[], module: Module): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/--.*$/gm, "");
  const names = (token: string): string[] => {
    const part = /^§(\d+)§$/.exec(token);
    if (!part) return [token];
    const expression = parts[Number(part[1])];
    return expression ? valuesOf(expression, module, "name", new Set()).flatMap((value) => value.split(/\s*,\s*/)) : [];
  };
  const written: string[] = [];
  for (const pattern of writePatterns)
    for (const match of code.matchAll(pattern)) written.push(...names(match[match.length - 1] ?? ""));
  for (const match of code.matchAll(truncatePattern))
    for (const token of (match[1] ?? "").split(",")) written.push(...names(token.trim().replace(/^(?:"?public"?\.)?"?|"$/g, "")));
  return written.map((name) => name.replace(/^"|"$/g, "").toLowerCase());
}

/** The string parts of a `+` chain, with a placeholder for each other operand. */
function flattenPlus(node: ts.Expression, parts: ts.Expression[]): string {
  const expression = unwrap(node);
  if (ts.isBinaryExpression(expression) && expression.operatorToken.kind === ts.SyntaxKind.PlusToken)
    return flattenPlus(expression.left, parts) + flattenPlus(expression.right, parts);
  if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression)) return expression.text;
  parts.push(expression);
  return placeholder(parts.length - 1);
}

const isPlus = (node: ts.Node): node is ts.BinaryExpression =>
  ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken;

/** The tables a file's text writes (`path` places it in the tree, for its imports). */
export function tablesWritten(text: string, path = join(root, "src", "inline.ts")): Set<string> {
  const module = moduleOf(resolvePath(path), text);
  if (!module) return new Set();
  const written: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (isPlus(node) && !isPlus(node.parent)) {
      const parts: ts.Expression[] = [];
      written.push(...sqlWrites(flattenPlus(node, parts), parts, module));
    } else if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && !isPlus(node.parent))
      written.push(...sqlWrites(node.text, [], module));
    else if (ts.isTemplateExpression(node)) {
      const text = node.head.text + node.templateSpans.map((span, i) => placeholder(i) + span.literal.text).join("");
      written.push(
        ...sqlWrites(
          text,
          node.templateSpans.map((span) => span.expression),
          module,
        ),
      );
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.arguments.length === 1) {
      const [argument] = node.arguments;
      if (argument && ["insert", "update", "delete"].includes(node.expression.name.text))
        written.push(...valuesOf(argument, module, "table", new Set()));
    }
    ts.forEachChild(node, visit);
  };
  visit(module.source);
  return new Set(written.filter((table) => knownTables.has(table)));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "migrations" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Per table (sorted), the files of `root/src` that write it (sorted, relative to `root`). */
export function tableWriters(tree: string): Map<string, string[]> {
  const writers = new Map<string, Set<string>>();
  for (const file of sourceFiles(join(tree, "src"))) {
    for (const table of tablesWritten(readFileSync(file, "utf8"), file)) {
      const files = writers.get(table) ?? new Set<string>();
      files.add(relative(tree, file));
      writers.set(table, files);
    }
  }
  return new Map(
    [...writers.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([table, files]) => [table, [...files].sort()]),
  );
}

/** The folder of src/ a file belongs to: `src/orders/statements/accept.ts` → `src/orders` (`src/app.ts` → `src`). */
export function owningFolder(file: string): string {
  const [top, folder, ...rest] = file.split("/");
  return rest.length > 0 ? `${top}/${folder}` : (top ?? file);
}

/** The markdown table ARCHITECTURE.md keeps. */
export function writersTable(writers: Map<string, string[]>): string {
  const rows = [...writers.entries()].map(([table, files]) => `| \`${table}\` | ${files.map((f) => `\`${f}\``).join(", ")} |`);
  return [
    "| table | written by |",
    "| --- | --- |",
    ...rows,
    "",
    "Not scanned: `src/db/migrations/`. The functions and triggers the migrations create write tables too (in plpgsql),",
    'such as the wallets trigger under "Where money moves".',
  ].join("\n");
}

if (import.meta.main) console.log(writersTable(tableWriters(root)));
