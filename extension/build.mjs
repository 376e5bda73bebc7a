// Bundles the extension into dist/: one script per context, plus the static
// files. dist/ never holds tether.json: `tether browser` adds it when it
// writes the extension out.
import { build } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const dist = here('./dist/');

await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });

await build({
  // popup.css imports the window's theme (frontend/src/theme.css): bundled in, not copied by hand.
  entryPoints: [...['background', 'offscreen', 'content', 'popup'].map((n) => here(`./src/${n}.ts`)), here('./src/popup.css')],
  outdir: dist,
  bundle: true,
  format: 'iife',
  target: 'chrome120',
  charset: 'utf8',
  legalComments: 'none',
  logLevel: 'warning',
});

for (const f of ['manifest.json', 'offscreen.html', 'popup.html']) {
  await copyFile(here(`./src/${f}`), `${dist}${f}`);
}
console.log(`built ${dist}`);
