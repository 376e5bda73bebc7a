// Bundles the extension into dist/: one script per context, plus the static
// files. dist/ never holds tether.json: `tether browser` adds it when it
// writes the extension out.
import { build } from 'esbuild';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
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

for (const f of ['offscreen.html', 'popup.html']) {
  await copyFile(here(`./src/${f}`), `${dist}${f}`);
}
// The release version, stamped by the Makefile (TETHER_VERSION, the same
// string as `tether version`'s); src/manifest.json's when unset.
const manifest = JSON.parse(await readFile(here('./src/manifest.json'), 'utf8'));
const version = process.env.TETHER_VERSION;
if (version) {
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`TETHER_VERSION ${version} is not x.y.z`);
  manifest.version = version;
}
await writeFile(`${dist}manifest.json`, JSON.stringify(manifest, null, 2) + '\n');
console.log(`built ${dist}`);
