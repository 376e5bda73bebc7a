import { describe, expect, it } from 'vitest';
import { packPage, packText, shouldPack } from '../src/content/pack';
import type { PageSnapshot } from '../src/shared/messages';

/** What the daemon does with a packed snapshot (protocol.unpackSnapshot): base64, then gunzip. */
async function unpack(b64: string): Promise<string> {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
}

const page = (snapshot: string, more: Partial<PageSnapshot> = {}): PageSnapshot => ({ url: 'https://example.test/', title: 'T', snapshot, ...more });

describe('packing a large snapshot', () => {
  const large = Array.from({ length: 4000 }, (_, i) => `- row "Row ${i} ✓ — ü" [ref=d1e${i}]`).join('\n');

  it('packs what is over packOver and round-trips it exactly, non-ASCII included, at a fraction of its size', async () => {
    const out = await packPage(page(large), { packOver: 1000, maxChars: 10_000_000 });
    expect(out.snapshot).toBe('');
    expect(out.snapshotGzip).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(out.snapshotGzip!.length).toBeLessThan(large.length / 4);
    expect(await unpack(out.snapshotGzip!)).toBe(large);
  });

  it('leaves alone what the service worker must still change, or what nobody asked to pack', () => {
    expect(shouldPack(page(large), { packOver: 1000, maxChars: 10_000_000 })).toBe(true);
    // Not asked (a daemon that cannot unpack), or short enough.
    expect(shouldPack(page(large), { maxChars: 10_000_000 })).toBe(false);
    expect(shouldPack(page(large), { packOver: large.length, maxChars: 10_000_000 })).toBe(false);
    // Something was left out: the service worker adds the note line.
    expect(shouldPack(page(large, { omitted: 3 }), { packOver: 1000, maxChars: 10_000_000 })).toBe(false);
    // A cross-origin frame is stitched in by the service worker.
    expect(shouldPack(page(large, { frames: [7] }), { packOver: 1000, maxChars: 10_000_000 })).toBe(false);
    // Over the cap (the default, 40 000, when none is given): the service worker cuts it.
    expect(shouldPack(page(large), { packOver: 1000 })).toBe(false);
  });

  it('packs an empty text too (a stream of no bytes)', async () => {
    expect(await unpack(await packText(''))).toBe('');
  });
});
