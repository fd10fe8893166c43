import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { noneMatchHits } from "./conditional.ts";
import type { Outcome } from "./pipeline/result.ts";

export type ContentCoding = "br" | "gzip";

/**
 * Brotli quality for assets compressed once per process. Measured on the 4.35 MB renderer script: quality 9
 * takes about 0.27 s for 1.05 MB, quality 11 about 5.6 s for 0.94 MB; 6 and below save little time.
 */
const brotliQuality = 9;

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

type Bytes = Uint8Array<ArrayBuffer>;

/** Compressed on the zlib thread pool, off the event loop. */
async function compress(bytes: Bytes, coding: ContentCoding): Promise<Bytes> {
  const compressed =
    coding === "gzip"
      ? await gzipAsync(bytes, { level: 9 })
      : await brotliAsync(bytes, {
          params: {
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_QUALITY]: brotliQuality,
            [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
          },
        });
  return new Uint8Array(compressed);
}

/**
 * The coding to answer with for an `Accept-Encoding` header: the acceptable one (`q` above 0, by name or
 * `*`) with the highest weight, `br` before `gzip` on a tie; none when neither is acceptable.
 */
export function preferredCoding(acceptEncoding: string | null): ContentCoding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name = "", ...params] = part.split(";").map((piece) => piece.trim());
    if (name === "") continue;
    const q = params.find((param) => /^q=/i.test(param));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(name.toLowerCase(), Number.isFinite(weight) ? weight : 0);
  }
  const weightOf = (coding: ContentCoding) => weights.get(coding) ?? weights.get("*") ?? 0;
  const [best] = (["br", "gzip"] as const).filter((coding) => weightOf(coding) > 0).sort((a, b) => weightOf(b) - weightOf(a));
  return best;
}

interface Source {
  bytes: Bytes;
  /** The strong tag's opaque part: a hash of the uncompressed bytes. */
  hash: string;
}

/**
 * A document served as it is, Brotli or gzip by the request's `Accept-Encoding`, with a strong ETag per
 * encoding, `Vary: Accept-Encoding`, and `304` for an `If-None-Match` that names the tag it would get. The
 * bytes are loaded (or built), hashed and compressed once, on first use, and kept.
 */
export class CompressedAsset {
  private source: Promise<Source> | undefined;
  private readonly encoded = new Map<ContentCoding, Promise<Bytes>>();

  constructor(
    private readonly load: () => Bytes | string | Promise<Bytes | string>,
    readonly contentType: string,
    readonly cacheControl: string,
  ) {}

  private loaded(): Promise<Source> {
    if (!this.source) {
      const source = (async () => {
        const loaded = await this.load();
        const bytes = typeof loaded === "string" ? new TextEncoder().encode(loaded) : loaded;
        return { bytes, hash: createHash("sha256").update(bytes).digest("base64url") };
      })();
      // A load that failed is tried again by the next request.
      source.catch(() => {
        if (this.source === source) this.source = undefined;
      });
      this.source = source;
    }
    return this.source;
  }

  private encodedAs(bytes: Bytes, coding: ContentCoding): Promise<Bytes> {
    let encoded = this.encoded.get(coding);
    if (!encoded) {
      encoded = compress(bytes, coding);
      this.encoded.set(coding, encoded);
      encoded.catch(() => this.encoded.delete(coding));
    }
    return encoded;
  }

  /** The bytes in `coding` (as they are when none): for tests and measurements. */
  async bytes(coding?: ContentCoding): Promise<Bytes> {
    const { bytes } = await this.loaded();
    return coding ? this.encodedAs(bytes, coding) : bytes;
  }

  /** The answer to a GET for this document. */
  async answer(request: Request): Promise<Outcome<never>> {
    const { bytes, hash } = await this.loaded();
    const coding = preferredCoding(request.headers.get("accept-encoding"));
    const etag = `"${coding ? `${hash}-${coding}` : hash}"`;
    const headers: Record<string, string> = { etag, "cache-control": this.cacheControl, vary: "Accept-Encoding" };
    if (noneMatchHits(request.headers.get("if-none-match"), etag)) return { status: 304, empty: true, headers };
    if (!coding) return { status: 200, raw: bytes, contentType: this.contentType, headers };
    const body = await this.encodedAs(bytes, coding);
    return { status: 200, raw: body, contentType: this.contentType, headers: { ...headers, "content-encoding": coding } };
  }
}
