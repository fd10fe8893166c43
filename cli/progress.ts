import yoctoSpinner, { type Spinner } from "yocto-spinner";
import { io, type OutputStream } from "./io.ts";

/** Progress shown while a command waits: a spinner with text on stderr, only when stderr is a terminal. */
export interface Progress {
  update(text: string): void;
  /** Removes the spinner line (nothing is left behind on the terminal). */
  stop(): void;
}

const silent: Progress = { update: () => {}, stop: () => {} };

/** A spinner on stderr, never on stdout; silent when stderr is not a terminal, so pipes and logs stay clean. */
export function progress(text: string, stream: OutputStream = io().stderr): Progress {
  if (!stream.isTTY || io().env.TERM === "dumb") return silent;
  const spinner: Spinner = yoctoSpinner({ text, stream, handleSignals: false }).start();
  return {
    update: (next) => {
      spinner.text = next;
    },
    stop: () => {
      spinner.stop();
      spinner.clear();
    },
  };
}
