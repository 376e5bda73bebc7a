// Where and as whom to connect: tether.json in the extension folder (written
// by `tether browser`), chrome.storage.local, then defaults.
import type { InstallMarker } from '../protocol.gen';
import { DEFAULT_LABEL, DEFAULT_PORT, type DaemonConfig } from '../shared/messages';
import { restoredAfterReload } from './update-reload';
import { listTabs } from './shared-tabs';

/** The optional tether.json next to manifest.json. */
export interface FileConfig {
  port?: number;
  label?: string;
}

/** Parses tether.json, ignoring fields of the wrong type. */
export function parseFileConfig(raw: unknown): FileConfig {
  if (typeof raw !== 'object' || raw === null) return {};
  const o = raw as Record<string, unknown>;
  const out: FileConfig = {};
  if (typeof o.port === 'number' && Number.isInteger(o.port) && o.port > 0 && o.port < 65536) out.port = o.port;
  if (typeof o.label === 'string' && o.label.trim() !== '') out.label = o.label.trim();
  return out;
}

async function readFileConfig(): Promise<FileConfig> {
  try {
    const res = await fetch(chrome.runtime.getURL('tether.json'), { cache: 'no-store' });
    if (!res.ok) return {};
    return parseFileConfig(await res.json());
  } catch {
    return {}; // No tether.json: the dev build.
  }
}

/** Parses tether-install.json (protocol InstallMarker): undefined unless it has a string dir and id. */
export function parseInstallMarker(raw: unknown): InstallMarker | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const o = raw as Record<string, unknown>;
  if (typeof o.dir !== 'string' || typeof o.id !== 'string' || !o.dir || !o.id || o.dir.length > 4096 || o.id.length > 64) return undefined;
  return { dir: o.dir, id: o.id };
}

/** The folder's tether-install.json, written by Tether next to manifest.json; undefined when absent. */
async function readInstallMarker(): Promise<InstallMarker | undefined> {
  try {
    const res = await fetch(chrome.runtime.getURL('tether-install.json'), { cache: 'no-store' });
    if (!res.ok) return undefined;
    return parseInstallMarker(await res.json());
  } catch {
    return undefined; // A folder Tether did not write (a checkout's dist, the Web Store).
  }
}

/** How Chrome installed this extension (chrome.management.getSelf needs no permission). */
async function installType(): Promise<string | undefined> {
  try {
    return (await chrome.management.getSelf()).installType;
  } catch {
    return undefined;
  }
}

let profileId: Promise<string> | undefined;

/** The profile's UUID, created once and kept in chrome.storage.local. */
function getProfileId(): Promise<string> {
  profileId ??= (async () => {
    const got = await chrome.storage.local.get('profileId');
    if (typeof got.profileId === 'string' && got.profileId) return got.profileId;
    const id = crypto.randomUUID();
    await chrome.storage.local.set({ profileId: id });
    return id;
  })();
  profileId.catch(() => (profileId = undefined));
  return profileId;
}

export async function loadDaemonConfig(): Promise<DaemonConfig> {
  // Shared tabs saved before an update's reload are back before the hello lists them.
  await restoredAfterReload();
  const [file, local, session, id, tabs, marker, install] = await Promise.all([
    readFileConfig(),
    chrome.storage.local.get(['label', 'assignedSlug', 'secret']),
    chrome.storage.session.get('halted'),
    getProfileId(),
    listTabs(),
    readInstallMarker(),
    installType(),
  ]);
  const stored = typeof local.label === 'string' && local.label.trim() ? local.label.trim() : undefined;
  const config: DaemonConfig = {
    port: file.port ?? DEFAULT_PORT,
    label: stored ?? file.label ?? DEFAULT_LABEL,
    profileId: id,
    extVersion: chrome.runtime.getManifest().version,
    tabs,
    halted: session.halted === true,
  };
  const versionName = chrome.runtime.getManifest().version_name;
  if (versionName) config.versionName = versionName;
  if (install) config.installType = install;
  if (marker) config.install = marker;
  if (typeof local.assignedSlug === 'string' && local.assignedSlug) config.slug = local.assignedSlug;
  if (typeof local.secret === 'string' && local.secret) config.secret = local.secret;
  return config;
}
