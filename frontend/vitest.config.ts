import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { svelteTesting } from '@testing-library/svelte/vite';
import type { Plugin } from 'vite';
import { defineConfig, mergeConfig } from 'vitest/config';
import viteConfig from './vite.config.ts';

const root = dirname(fileURLToPath(import.meta.url));

// Tests never load the generated Wails modules (they call window.go and
// window.runtime, which only the Wails webview has): every import that
// resolves to one of them gets its in-memory fake instead.
const fakes = new Map([
  [resolve(root, 'wailsjs/go/app/App'), resolve(root, 'src/test/fake-app.ts')],
  [resolve(root, 'wailsjs/runtime/runtime'), resolve(root, 'src/test/fake-runtime.ts')],
]);

function fakeWails(): Plugin {
  return {
    name: 'tether-fake-wails',
    enforce: 'pre',
    resolveId(source, importer) {
      if (!importer || !source.startsWith('.')) return null;
      const path = resolve(dirname(importer), source).replace(/\.(js|ts)$/, '');
      return fakes.get(path) ?? null;
    },
  };
}

export default mergeConfig(
  viteConfig,
  defineConfig({
    plugins: [fakeWails(), svelteTesting()],
    resolve: { conditions: ['browser'] },
    test: {
      environment: 'happy-dom',
      include: ['src/**/*.test.ts'],
      restoreMocks: true,
    },
  }),
);
