/** Runs the operation's handler on its checked input. */
export function run<Input, Result>(handler: (input: Input) => Promise<Result>, input: Input): Promise<Result> {
  return handler(input);
}
