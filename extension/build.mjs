// Bundles the extension into dist/: one script per context, plus the static
// files. dist/ never holds tether.json: `tether browser` adds it when it
// writes the extension out.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
// The build id, in version_name ("0.4.0 build 1a2b3c4d5e6f"): the first 12
// hex digits of a SHA-256 over every built file (sorted by name, each as
// name, NUL, length, NUL, bytes) and the manifest without version_name. The
// same sources give the same id; any change to a shipped byte gives another,
// so the daemon rewrites a folder Tether wrote from another build of the
// same version (daemon/extupdate).
delete manifest.version_name;
const hash = createHash('sha256');
for (const name of (await readdir(dist, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => `${e.parentPath.slice(dist.length)}${e.parentPath.length > dist.length ? '/' : ''}${e.name}`).sort()) {
  const bytes = await readFile(`${dist}${name}`);
  hash.update(`${name}\0${bytes.length}\0`).update(bytes);
}
const bare = Buffer.from(JSON.stringify(manifest));
hash.update(`manifest.json\0${bare.length}\0`).update(bare);
manifest.version_name = `${manifest.version} build ${hash.digest('hex').slice(0, 12)}`;
await writeFile(`${dist}manifest.json`, JSON.stringify(manifest, null, 2) + '\n');
console.log(`built ${dist}`);
