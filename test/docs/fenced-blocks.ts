/** A fenced code block of a Markdown file. */
export interface FencedBlock {
  /** The file it is in, as given. */
  file: string;
  /** The line of its opening fence, from 1. */
  line: number;
  /** The first word of the info string, lower-cased; "" when there is none. */
  language: string;
  /** Its text, without the fences and without the opening fence's indentation. */
  code: string;
}

const opening = /^( *)(`{3,}|~{3,})\s*([^\s`]*)/;

/**
 * Every fenced code block of `markdown`, in order. Fences are CommonMark's: three or more backticks or
 * tildes, closed by a line of at least as many of the same character; a block inside a list item is
 * indented, and that indentation is removed from its lines.
 */
export function fencedBlocks(file: string, markdown: string): FencedBlock[] {
  const lines = markdown.split("\n");
  const blocks: FencedBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const match = (lines[index] ?? "").match(opening);
    if (!match) continue;
    const [, indent = "", fence = "", info = ""] = match;
    const closing = new RegExp(`^ *${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end] ?? "")) {
      const text = lines[end] ?? "";
      body.push(text.startsWith(indent) ? text.slice(indent.length) : text.trimStart());
      end++;
    }
    if (end >= lines.length) throw new Error(`${file}:${index + 1}: a code fence that is never closed`);
    blocks.push({ file, line: index + 1, language: info.toLowerCase(), code: `${body.join("\n")}\n` });
    index = end;
  }
  return blocks;
}

/** What the examples test does with a block of each language. */
export type BlockTreatment = "bash" | "bun" | "output";

const treatments: Readonly<Record<string, BlockTreatment>> = {
  sh: "bash",
  bash: "bash",
  shell: "bash",
  ts: "bun",
  typescript: "bun",
  // Shown, never run: answers, terminal transcripts (`$ npm start` and what it prints), files.
  json: "output",
  text: "output",
  console: "output",
  http: "output",
  csv: "output",
  yaml: "output",
};

/** How a block is treated, or `undefined` for a language the test does not know (an error). */
export function treatmentOf(language: string): BlockTreatment | undefined {
  return Object.hasOwn(treatments, language) ? treatments[language] : undefined;
}
