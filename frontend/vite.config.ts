import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

// The production build: dist/index.html and its assets, which embed.go
// embeds and the Wails window serves. It uses the real generated bindings
// (wailsjs/); only vitest.config.ts swaps them for fakes.
export default defineConfig({
  plugins: [svelte()],
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The window is offline and served from memory: one small bundle.
    assetsInlineLimit: 0,
  },
});
