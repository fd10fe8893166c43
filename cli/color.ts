import picocolors from "picocolors";
import { io } from "./io.ts";

export type Colors = ReturnType<typeof picocolors.createColors>;

interface Stream {
  isTTY?: boolean;
}

/**
 * Colour on `stream` when it is a terminal, NO_COLOR is unset or empty and --no-color was not given;
 * a non-empty FORCE_COLOR (other than "0") turns it on even for a pipe, still never against --no-color.
 */
export function colorEnabled(stream: Stream, flag = true, env: NodeJS.ProcessEnv = io().env): boolean {
  if (!flag) return false;
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return true;
  return Boolean(stream.isTTY) && env.TERM !== "dumb";
}

export const colorsFor = (enabled: boolean): Colors => picocolors.createColors(enabled);

const statusStyles: Record<string, keyof Colors> = {
  successful: "green",
  failed: "red",
  created: "yellow",
  queued: "yellow",
  processing: "yellow",
  pending: "yellow",
  reversed: "cyan",
  refunded: "cyan",
};

/** An HTTP status's colour by its class: 2xx green, 3xx cyan, 4xx yellow, 5xx red. */
const httpStatusStyles: Record<string, keyof Colors> = { "2": "green", "3": "cyan", "4": "yellow", "5": "red" };

/**
 * How a status is coloured: a transaction's successful green, failed red, still open yellow; an HTTP status by its
 * class; anything else not at all.
 */
export function statusPaint(colors: Colors, status: string): (text: string) => string {
  const style = /^[1-5]\d\d$/.test(status) ? httpStatusStyles[status.charAt(0)] : statusStyles[status];
  const format = style === undefined ? undefined : colors[style];
  return typeof format === "function" ? format : (text) => text;
}

/** A status in its colour (see `statusPaint`). */
export const colorStatus = (colors: Colors, status: string): string => statusPaint(colors, status)(status);
