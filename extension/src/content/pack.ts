// Packing a large snapshot's text for its trip to the daemon
// (SnapshotOptions.packOver in the protocol): every hop on the way (content
// script → service worker → offscreen document → socket) serializes the
// message, so a page's megabytes of text were copied several times over;
// gzip makes a snapshot about a tenth of its size.
import { DEFAULT_MAX_CHARS } from '../shared/cap';
import type { PageSnapshot, SnapshotShape } from '../shared/messages';

/**
 * Whether page's snapshot text goes packed: shape.packOver asked for it and
 * the text is longer, and the service worker has nothing to do to it: no
 * element was left out (it would add the note line), no cross-origin frame
 * is to be stitched in, and the text is within the cap (it would cut it).
 */
export function shouldPack(page: PageSnapshot, shape: SnapshotShape): boolean {
  const over = shape.packOver ?? 0;
  const cap = shape.maxChars && shape.maxChars > 0 ? shape.maxChars : DEFAULT_MAX_CHARS;
  return over > 0 && page.snapshot.length > over && page.snapshot.length <= cap && !page.omitted && !page.frames?.length && typeof CompressionStream === 'function';
}

/** page with its snapshot text packed into snapshotGzip (snapshot ''), when shouldPack says so. */
export async function packPage(page: PageSnapshot, shape: SnapshotShape): Promise<PageSnapshot> {
  if (!shouldPack(page, shape)) return page;
  page.snapshotGzip = await packText(page.snapshot);
  page.snapshot = '';
  return page;
}

/**
 * text's UTF-8 bytes gzip-compressed (RFC 1952, by CompressionStream), in
 * base64 (RFC 4648, section 4). The bytes go to the compressor in one write
 * (TextEncoder, WHATWG Encoding): a Blob copied them once more and streamed
 * them in chunks, 86–108 ms against 59–71 ms for a 20 000-element page's
 * 1.7 MB in the page (bench/snapprof_test.go, 2026-12-03).
 */
export async function packText(text: string): Promise<string> {
  const gzip = new CompressionStream('gzip');
  const writer = gzip.writable.getWriter();
  // Not awaited before reading: the stream would wait for its reader (backpressure).
  const written = writer.write(new TextEncoder().encode(text)).then(() => writer.close());
  const packed = new Response(gzip.readable).arrayBuffer();
  await written;
  return base64(new Uint8Array(await packed));
}

/** bytes in base64: Uint8Array.prototype.toBase64 where Chrome has it (140+), else btoa in chunks. */
function base64(bytes: Uint8Array): string {
  const native = (bytes as Uint8Array & { toBase64?: () => string }).toBase64;
  if (typeof native === 'function') return native.call(bytes);
  const parts: string[] = [];
  const CHUNK = 0x8000; // String.fromCharCode's arguments stay well under the engine's limit.
  for (let i = 0; i < bytes.length; i += CHUNK) parts.push(String.fromCharCode(...bytes.subarray(i, i + CHUNK)));
  return btoa(parts.join(''));
}
