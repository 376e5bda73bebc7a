// Where and as whom to connect: tether.json in the extension folder (written
// by `tether browser`), chrome.storage.local, then defaults.
import { DEFAULT_LABEL, DEFAULT_PORT, type DaemonConfig } from '../shared/messages';

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
  const [file, local, session, id] = await Promise.all([
    readFileConfig(),
    chrome.storage.local.get('label'),
    chrome.storage.session.get('halted'),
    getProfileId(),
  ]);
  const stored = typeof local.label === 'string' && local.label.trim() ? local.label.trim() : undefined;
  return {
    port: file.port ?? DEFAULT_PORT,
    label: stored ?? file.label ?? DEFAULT_LABEL,
    profileId: id,
    extVersion: chrome.runtime.getManifest().version,
    halted: session.halted === true,
  };
}
