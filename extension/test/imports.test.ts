// @vitest-environment node
// The source's import graph: no cycles, and each context (background,
// content, offscreen, popup) imports no other context's code, only shared/
// (and protocol.gen.ts). The page-world hooks (shared/page-hooks.ts) run in
// the page and are installed by the service worker: shared/ imports no
// context either.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** Each file's relative imports (type-only ones too), as paths of src. */
function graph(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const spec = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|(?:^|\n)\s*import\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;
  for (const file of sources(src)) {
    const text = readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(spec)) {
      const target = resolve(dirname(file), (m[1] ?? m[2] ?? m[3])!);
      const hit = [`${target}.ts`, join(target, 'index.ts'), target].find((p) => {
        try {
          return statSync(p).isFile();
        } catch {
          return false;
        }
      });
      if (hit) deps.push(relative(src, hit));
    }
    out.set(relative(src, file), deps);
  }
  return out;
}

/** The context a source file belongs to: its top folder, or its entry script's name. */
function context(file: string): string {
  const top = file.split('/')[0]!;
  return top.replace(/\.ts$/, '');
}

describe('the import graph of src/', () => {
  const g = graph();

  it('reads the sources', () => {
    expect(g.get('background/methods/handlers.ts')).toContain('background/methods/params.ts');
  });

  it('has no cycles', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const walk = (f: string, path: string[]): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        cycles.push([...path.slice(path.indexOf(f)), f].join(' → '));
        return;
      }
      state.set(f, 'open');
      for (const d of g.get(f) ?? []) walk(d, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of g.keys()) walk(f, []);
    expect(cycles).toEqual([]);
  });

  it('keeps each context to its own code and shared/', () => {
    const bad: string[] = [];
    const common = new Set(['shared', 'protocol.gen']);
    for (const [f, deps] of g) {
      const from = context(f);
      for (const d of deps) {
        const to = context(d);
        if (to === from || common.has(to)) continue;
        bad.push(`${f} imports ${d}`);
      }
    }
    // shared/ is imported by every context, so it imports none of them.
    expect(bad).toEqual([]);
  });
});
