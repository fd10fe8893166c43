/** A destination as shown in answers: first 4 and last 3 characters when 10 or more, otherwise first 2 and last 2; the middle as `*`. */
export function maskDestination(value: string): string {
  const [head, tail] = value.length >= 10 ? [4, 3] : [2, 2];
  if (value.length <= head + tail) return "*".repeat(value.length);
  return value.slice(0, head) + "*".repeat(value.length - head - tail) + value.slice(-tail);
}
