// Where and as whom to connect: tether.json in the extension folder (written
// by `tether browser`), chrome.storage.local, then defaults.
import type { InstallMarker } from '../protocol.gen';
import { BROKER_PROFILES_KEY, BROKER_SECRETS_KEY, BROKER_URL_KEY, parseBrokerUrl, type BrokerProfile } from '../shared/broker';
import { DEFAULT_LABEL, DEFAULT_PORT, type DaemonConfig } from '../shared/messages';
import { HEX64 } from '../shared/proof';
import { restoredAfterReload } from './update-reload';
import { listTabs } from './shared-tabs';

/** The optional tether.json next to manifest.json. */
export interface FileConfig {
  port?: number;
  label?: string;
  /** The daemon's pairing key (64 lowercase hex digits; launcher.ExtensionConfig.PairingKey). */
  pairingKey?: string;
}

/** Parses tether.json, ignoring fields of the wrong type. */
export function parseFileConfig(raw: unknown): FileConfig {
  if (typeof raw !== 'object' || raw === null) return {};
  const o = raw as Record<string, unknown>;
  const out: FileConfig = {};
  if (typeof o.port === 'number' && Number.isInteger(o.port) && o.port > 0 && o.port < 65536) out.port = o.port;
  if (typeof o.label === 'string' && o.label.trim() !== '') out.label = o.label.trim();
  if (typeof o.pairingKey === 'string' && HEX64.test(o.pairingKey)) out.pairingKey = o.pairingKey;
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
    chrome.storage.local.get(['label', 'assignedSlug', 'slugHint', 'secret', BROKER_URL_KEY, BROKER_SECRETS_KEY, BROKER_PROFILES_KEY]),
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
  if (file.pairingKey) config.pairingKey = file.pairingKey;
  if (marker) config.install = marker;
  return withPairing(config, local);
}

/**
 * Adds the daemon's or broker's slug and secret to config, from storage as
 * read (local): the local daemon's are assignedSlug (else slugHint, the
 * slug it had before that daemon forgot it) and secret; a remote broker's
 * (brokerUrl set) are brokerProfiles[origin].slug (else its slugHint) and
 * brokerSecrets[origin], so that each keeps its own pairing and the local
 * secret never goes to a remote broker. A brokerUrl that no longer parses is
 * passed on as it is: the offscreen document refuses to dial it and says why.
 */
export function withPairing(config: DaemonConfig, local: Record<string, unknown>): DaemonConfig {
  const raw = local[BROKER_URL_KEY];
  if (typeof raw === 'string' && raw) {
    config.brokerUrl = raw;
    const parsed = parseBrokerUrl(raw);
    if (!parsed.ok) return config;
    const origin = parsed.broker.origin;
    const secret = record(local[BROKER_SECRETS_KEY])[origin];
    const profile = record(local[BROKER_PROFILES_KEY])[origin] as BrokerProfile | undefined;
    const slug = profile?.slug || profile?.slugHint;
    if (typeof slug === 'string' && slug) config.slug = slug;
    if (typeof secret === 'string' && secret) config.secret = secret;
    return config;
  }
  const slug = local.assignedSlug || local.slugHint;
  if (typeof slug === 'string' && slug) config.slug = slug;
  if (typeof local.secret === 'string' && local.secret) config.secret = local.secret;
  return config;
}

/** v as a plain object, or an empty one. */
export function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
