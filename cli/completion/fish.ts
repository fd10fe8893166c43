import type { Option } from "commander";
import { briefOf, type CompletionNode, type CompletionTree, takesValue, type ValueSource, valueSourceOf } from "./tree.ts";

/** A fish single-quoted string: only `\` and `'` need escaping. */
const quote = (text: string): string => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;

/** Prints `word<TAB>description` lines, which fish shows as the word and its description. */
function printPairs(pairs: [string, string][]): string {
  if (pairs.length === 0) return "true";
  return `printf '%s\\t%s\\n' ${pairs.map(([word, text]) => `${quote(word)} ${quote(text)}`).join(" ")}`;
}

const optionPairs = (options: Option[]): [string, string][] =>
  options.flatMap((o): [string, string][] => {
    const name = o.long ?? o.short;
    return name ? [[name, briefOf(o.description)]] : [];
  });

/** Fish code printing an option's values, one a line; `true` (nothing) for free text. */
function valuesCode(source: ValueSource): string {
  if ("choices" in source) return `printf '%s\\n' ${source.choices.map(quote).join(" ")}`;
  if ("free" in source) return "true";
  const { what, service, fromLine } = source.lookup;
  if (!fromLine) return `__vendctl_catalogue ${what} ${quote(service)}`;
  return `__vendctl_catalogue_for ${what} ${quote(service)}`;
}

/** A `switch` on `subject` with one case per entry; `fallback` for everything else. */
function switchOn(subject: string, cases: [pattern: string, code: string][], fallback?: string): string {
  const lines = cases.map(([pattern, code]) => `        case ${quote(pattern)}\n            ${code}`);
  if (fallback) lines.push(`        case '*'\n            ${fallback}`);
  return `    switch ${subject}\n${lines.join("\n")}\n    end`;
}

export function fishScript({ nodes, globals }: CompletionTree): string {
  const root = nodes[0] as CompletionNode;
  const children = nodes.map((n): [string, string] => [n.path, printPairs(n.children.map((c) => [c, n.summaries[c] ?? ""]))]);
  const args = nodes
    .filter((n) => n.args.length > 0)
    .map((n): [string, string] => [n.path, printPairs(n.args.map((a) => [a, ""]))]);
  const options = nodes.map((n): [string, string] => [n.path, printPairs(optionPairs(n.options))]);
  const steps = nodes.flatMap((n) =>
    [...n.children.map((c) => [c, c]), ...Object.entries(n.aliases)].map(([word, name]): [string, string] => [
      `${n.path}|${word}`,
      `echo ${quote(n.path ? `${n.path} ${name}` : (name ?? ""))}`,
    ]),
  );
  const values: [string, string][] = [
    ...nodes.flatMap((n) =>
      n.options
        .filter(takesValue)
        .map((o): [string, string] => [`${n.path}|${o.long ?? o.short}`, valuesCode(valueSourceOf(n, o))]),
    ),
    ...globals.filter(takesValue).map((o): [string, string] => [`*|${o.long ?? o.short}`, valuesCode(valueSourceOf(root, o))]),
  ];
  return `# vendctl completion for fish. Load it with:  vendctl completion fish | source
# or keep it:  vendctl completion fish > ~/.config/fish/completions/vendctl.fish
function __vendctl_children
${switchOn('"$argv[1]"', children)}
end
function __vendctl_args
${switchOn('"$argv[1]"', args)}
end
function __vendctl_options
${switchOn('"$argv[1]"', options)}
end
function __vendctl_global_options
    ${printPairs([...optionPairs(globals), ["--help", "display help for command"]])}
end
function __vendctl_step
${switchOn('"$argv[1]|$argv[2]"', steps)}
end
# Prints the values of option $argv[2] under command $argv[1]; fails when it takes no value.
function __vendctl_values
${switchOn('"$argv[1]|$argv[2]"', values, "return 1")}
end
# Codes from the live catalogue, with the user's configuration; nothing (still a value) when they cannot be read.
function __vendctl_catalogue
    command -q vendctl; and command vendctl __complete $argv 2>/dev/null
    return 0
end
# Networks or products of the line's --service (else the command's own, $argv[2]), products on its --network.
function __vendctl_catalogue_for
    set -l service $__vendctl_service
    test -n "$service"; or set service $argv[2]
    if test "$argv[1]" = products
        __vendctl_catalogue products "$service" "$__vendctl_network"
    else
        __vendctl_catalogue networks "$service"
    end
end
# Reads the words before the cursor: the command path, and the --service and --network given so far.
function __vendctl_read_line
    set -g __vendctl_node ''
    set -g __vendctl_service ''
    set -g __vendctl_network ''
    set -l words (commandline -opc)
    set -e words[1]
    set -l next ''
    for w in $words
        switch $next
            case service
                set __vendctl_service $w
            case network
                set __vendctl_network $w
        end
        set next ''
        switch $w
            case --service
                set next service
            case --network --disco --biller
                set next network
            case '-*'
            case '*'
                set -l step (__vendctl_step "$__vendctl_node" "$w")
                test -n "$step"; and set __vendctl_node $step
        end
    end
end
# The words to offer for the current token after the previous one.
function __vendctl_words
    __vendctl_read_line
    set -l previous (commandline -opc)[-1]
    if __vendctl_values "$__vendctl_node" "$previous"
        return
    end
    if string match -q -- '-*' (commandline -ct)
        __vendctl_options "$__vendctl_node"
        __vendctl_global_options
        return
    end
    set -l offer (__vendctl_children "$__vendctl_node"; __vendctl_args "$__vendctl_node")
    if test (count $offer) -gt 0
        printf '%s\\n' $offer
        return
    end
    __vendctl_options "$__vendctl_node"
    printf '%s\\t%s\\n' --help 'display help for command'
end
complete -c vendctl -e
complete -c vendctl -f -a '(__vendctl_words)'
`;
}
