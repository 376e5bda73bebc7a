// The popup's view: stored connection state → what the top of the popup
// says (its state, the next step, the profile), and the share list → DOM.
// popup.ts feeds it from chrome.storage and the service worker; the tests
// render it into popup.html without Chrome.
import { parseBrokerUrl } from '../shared/broker';
import type { ConnectionStatus, PopupTab } from '../shared/messages';
import { safeFavicon } from '../shared/popup-tabs';

/** The connection states the popup tells apart, each with its next step. */
export type PopupState = 'connected' | 'connecting' | 'pairing' | 'not-running' | 'refused';

export interface PopupView {
  state: PopupState;
  /** The state in a few words ("Connected to Tether"). */
  headline: string;
  /** What the user does next, or what happens next. */
  nextStep: string;
  label: string;
  slug: string;
  /** The daemon's version while connected ("Tether 0.3.0"). */
  version?: string;
  /** Why Tether refused this browser (or why it stopped asking). */
  refusal?: string;
  /** The daemon's pairing message while waiting for approval. */
  pairing?: string;
  /** The pairing code while waiting for approval, shown large: the user approves the entry with this code in Tether. */
  pairingCode?: string;
  /** Show the Reconnect button. */
  halted: boolean;
  /** Show Pair again: the program on Tether's port may be a Tether that forgot this browser. */
  pairAgain?: boolean;
  /** Show "Try again" (Tether was not running): connect now instead of at the next retry. */
  retry: boolean;
  /** Which Tether the extension uses: "this computer", or the remote broker's HOST[:PORT]. */
  broker: string;
}

export interface StoredProfile {
  assignedLabel?: unknown;
  assignedSlug?: unknown;
  label?: unknown;
  daemonVersion?: unknown;
  /** The remote broker's URL (chrome.storage.local brokerUrl), when one is chosen. */
  brokerUrl?: unknown;
  /** What each remote broker's last hello_ack said, by origin (chrome.storage.local brokerProfiles). */
  brokerProfiles?: unknown;
}

/** The remote broker's slug, label and version from stored, when brokerUrl names one. */
function brokerProfile(stored: StoredProfile): { host: string; slug?: unknown; label?: unknown; version?: unknown } | undefined {
  if (typeof stored.brokerUrl !== 'string' || !stored.brokerUrl) return undefined;
  const parsed = parseBrokerUrl(stored.brokerUrl);
  if (!parsed.ok) return { host: stored.brokerUrl };
  const all = typeof stored.brokerProfiles === 'object' && stored.brokerProfiles !== null ? (stored.brokerProfiles as Record<string, unknown>) : {};
  const p = all[parsed.broker.origin];
  return { host: parsed.broker.host, ...(typeof p === 'object' && p !== null ? p : {}) };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

export function popupView(status: ConnectionStatus | undefined, local: StoredProfile): PopupView {
  const remote = brokerProfile(local);
  if (remote) return remoteView(status, local, remote);
  const label = str(local.assignedLabel) ?? str(local.label) ?? '—';
  const slug = str(local.assignedSlug) ?? '—';
  const base = { label, slug, halted: status?.halted === true, retry: false, broker: 'this computer' };
  // A status that names a broker is left from before the switch back to this computer.
  if (!status || status.broker !== undefined || status.state === 'connecting') {
    return { ...base, state: 'connecting', headline: 'Connecting to Tether…', nextStep: status ? `Looking for Tether on this computer (port ${status.port}).` : 'Starting the connection to Tether.' };
  }
  if (status.state === 'connected') {
    const view: PopupView = { ...base, state: 'connected', headline: 'Connected to Tether', nextStep: 'Share a tab below: AI apps connected to Tether can use only the tabs you share.' };
    const version = str(local.daemonVersion);
    if (version) view.version = `Tether ${version}`;
    return view;
  }
  if (status.state === 'pairing') {
    const view: PopupView = { ...base, state: 'pairing', headline: 'Waiting for approval', nextStep: 'Open Tether and approve this browser where it shows the same code.' };
    const message = str(status.pairing);
    if (message) view.pairing = message;
    if (status.pairingCode) view.pairingCode = status.pairingCode;
    return view;
  }
  const refusal = status.lastRefusal;
  if (!refusal) {
    return {
      ...base,
      state: 'not-running',
      headline: 'Tether is not running',
      nextStep: 'Start Tether from your applications menu (or run tether in a terminal); the extension connects by itself once it runs.',
      retry: !base.halted,
    };
  }
  if (refusal.code === 'unverified' && status.otherProgram) {
    // Another program holds the port: starting Tether there fails ("address already in use").
    return { ...base, state: 'refused', headline: `Another program is on Tether's port ${status.port}: nothing was sent`, nextStep: otherProgramSteps(status.port), refusal: refusal.message, retry: !base.halted };
  }
  if (refusal.code === 'unverified') {
    // The program on the port did not prove it is Tether: the extension sent it nothing.
    const view: PopupView = {
      ...base,
      state: 'refused',
      headline: 'Not Tether: nothing was sent',
      nextStep: status.pairAgain ? 'Press Pair again only if you made Tether forget this browser; otherwise start the Tether you paired with. The extension tries again by itself.' : 'Start the Tether you paired with; the extension tries again by itself.',
      refusal: refusal.message,
    };
    if (status.pairAgain) view.pairAgain = true;
    return view;
  }
  if (refusal.code === 'socket_refused') {
    // Something answering like Tether's /health refused the socket before it opened.
    return { ...base, state: 'refused', headline: 'Tether refused the connection', nextStep: 'Read why below; the extension tries again by itself.', refusal: refusal.message, retry: !base.halted };
  }
  if (refusal.code === 'pairing_expired') {
    // An expired pairing is not a refusal: the daemon's message says it asks again.
    return { ...base, state: 'refused', headline: 'Not approved in time', nextStep: 'The extension asks Tether again when it reconnects, in 30 seconds.', refusal: refusal.message };
  }
  const nextStep = base.halted
    ? 'Fix what Tether says below, then press Reconnect.'
    : refusal.code === 'too_many_profiles'
      ? 'The extension retries every 30 seconds.'
      : 'The extension tries again by itself.';
  return { ...base, state: 'refused', headline: 'Tether refused this browser', nextStep, refusal: refusal.message };
}

/**
 * What to do when another program holds the local port (status.otherProgram):
 * free the port, or move Tether and the extension to another one. The
 * extension reads its port from tether.json in its folder at each attempt
 * (background config: tether.json, else 47615), and Tether's window writes
 * that folder with the port Tether runs on (localapi writeExtensionDir).
 */
export function otherProgramSteps(port: number): string {
  const other = port === 65535 ? port - 1 : port + 1;
  return `Quit that program (tether stop, in a terminal, names the program holding the port), then start Tether. Or run Tether on another port: start it with TETHER_PORT=${other} tether, write the extension from its window (Extension → Write the extension; tether.json there gives the extension its port) and, unless this browser already loads that folder, load it at chrome://extensions (Load unpacked). The extension tries again by itself.`;
}

/**
 * The view while the extension uses a remote broker (remote.host) instead of
 * the local daemon: the same states, named after the broker, with the
 * operator's approval command and the link's failures (status.linkError,
 * status.offline). The status is the broker's only once it names it: a
 * status of the local daemon, left from before the switch, reads as
 * connecting.
 */
function remoteView(status: ConnectionStatus | undefined, local: StoredProfile, remote: NonNullable<ReturnType<typeof brokerProfile>>): PopupView {
  const host = remote.host;
  const label = str(remote.label) ?? str(local.label) ?? '—';
  const base = { label, slug: str(remote.slug) ?? '—', halted: status?.halted === true, retry: false, broker: host };
  if (!status || status.broker !== host || status.state === 'connecting') {
    return { ...base, state: 'connecting', headline: `Connecting to ${host}…`, nextStep: `Dialling wss://${host}/extension. To use the Tether app on this computer instead, clear the broker in Settings.` };
  }
  if (status.state === 'connected') {
    const view: PopupView = { ...base, state: 'connected', headline: `Connected to ${host}`, nextStep: `Share a tab below: AI apps connected to the broker ${host} can use only the tabs you share.` };
    const version = str(remote.version);
    if (version) view.version = `Tether ${version}`;
    return view;
  }
  if (status.state === 'pairing') {
    const code = status.pairingCode;
    const view: PopupView = {
      ...base,
      state: 'pairing',
      headline: 'Waiting for approval',
      nextStep: code
        ? `Ask the operator of ${host} to run "tether profiles approve ${code}" on that server (or approve this code in its window).`
        : `Ask the operator of ${host} to approve this browser on that server (tether profiles).`,
    };
    const message = str(status.pairing);
    if (message) view.pairing = message;
    if (code) view.pairingCode = code;
    return view;
  }
  if (status.offline) {
    return { ...base, state: 'not-running', headline: 'Offline', nextStep: `This computer is offline: the extension dials ${host} as soon as it is back online.` };
  }
  const refusal = status.lastRefusal;
  if (!refusal) {
    const view: PopupView = {
      ...base,
      state: 'not-running',
      headline: `Cannot reach ${host}`,
      nextStep: base.halted ? 'Fix the address in Settings (or clear it to use the Tether app on this computer).' : 'The extension tries again by itself, every few seconds.',
      retry: !base.halted,
    };
    const why = str(status.linkError);
    if (why) view.refusal = why;
    return view;
  }
  if (refusal.code === 'pairing_expired') {
    return { ...base, state: 'refused', headline: 'Not approved in time', nextStep: 'The extension asks the broker again when it reconnects, in 30 seconds.', refusal: refusal.message };
  }
  if (refusal.code === 'unverified') {
    // The broker did not prove it holds this browser's key: the extension sent it nothing.
    return { ...base, state: 'refused', headline: 'Not the broker you paired with: nothing was sent', nextStep: `Check the address in Settings with the operator of ${host}; the extension tries again by itself.`, refusal: refusal.message };
  }
  const nextStep = base.halted ? 'Fix what the broker says below, then press Reconnect.' : 'The extension tries again by itself.';
  return { ...base, state: 'refused', headline: `${host} refused this browser`, nextStep, refusal: refusal.message };
}

const byId = <T extends HTMLElement>(doc: Document, id: string): T => {
  const el = doc.getElementById(id);
  if (!el) throw new Error(`popup.html has no #${id}`);
  return el as T;
};

function show(el: HTMLElement, text: string | undefined): void {
  el.hidden = !text;
  el.textContent = text ?? '';
}

/** Fills the connection card of popup.html (doc) from view. */
export function renderStatus(doc: Document, view: PopupView): void {
  const card = byId(doc, 'connection');
  card.dataset.state = view.state;
  byId(doc, 'state').textContent = view.headline;
  byId(doc, 'next-step').textContent = view.nextStep;
  byId(doc, 'label').textContent = view.label;
  byId(doc, 'slug').textContent = view.slug;
  byId(doc, 'broker-name').textContent = view.broker;
  show(byId(doc, 'version'), view.version);
  show(byId(doc, 'pairing'), view.pairing);
  byId(doc, 'pairing-code-row').hidden = !view.pairingCode;
  byId(doc, 'pairing-code').textContent = view.pairingCode ?? '';
  show(byId(doc, 'refusal'), view.refusal);
  byId(doc, 'reconnect').hidden = !view.halted;
  byId(doc, 'retry').hidden = !view.retry;
  byId(doc, 'pair-again').hidden = !view.pairAgain;
}

/** What the popup shows of a tab's URL: its host for web pages, else the URL without its path's noise. */
export function tabHost(url: string): string {
  try {
    const u = new URL(url);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.host;
    if (u.protocol === 'file:') return 'file';
    if (u.host) return `${u.protocol}//${u.host}`;
    return `${u.protocol}${u.pathname}`.slice(0, 60);
  } catch {
    return url.slice(0, 60);
  }
}

export interface TabListHandlers {
  onToggle: (tabId: number, shared: boolean) => void;
  onTakeBack?: (tabId: number) => void;
}

/** One tab's favicon: the image of an http(s) or data: URL (no referrer), else a blank square. */
function favicon(doc: Document, url: string | undefined): HTMLElement {
  const safe = safeFavicon(url);
  if (safe) {
    const img = doc.createElement('img');
    img.className = 'favicon';
    img.alt = '';
    img.width = 16;
    img.height = 16;
    img.referrerPolicy = 'no-referrer';
    img.decoding = 'async';
    img.src = safe;
    img.addEventListener('error', () => img.replaceWith(favicon(doc, undefined)));
    return img;
  }
  const blank = doc.createElement('span');
  blank.className = 'favicon blank';
  blank.setAttribute('aria-hidden', 'true');
  return blank;
}

function el<K extends keyof HTMLElementTagNameMap>(doc: Document, tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const e = doc.createElement(tag);
  e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * One list item per tab: its favicon, title and host, its Tether number when
 * shared, "AI acting" while an app acts on it, the app that owns it with a
 * "Take back" button (the tab becomes the user's again, usable by every app),
 * and a switch named "Share <title>".
 */
function tabItem(doc: Document, t: PopupTab, h: TabListHandlers): HTMLLIElement {
  const li = el(doc, 'li', 'tab');
  li.dataset.tabId = String(t.tabId);
  if (t.active) li.classList.add('active');
  const text = el(doc, 'span', 'tab-text');
  const title = el(doc, 'span', 'tab-title', t.title);
  title.dir = 'auto';
  title.title = t.title;
  const line = el(doc, 'span', 'tab-line');
  const host = el(doc, 'span', 'tab-host', tabHost(t.url));
  host.dir = 'ltr';
  host.title = t.url;
  line.append(host);
  if (t.number !== undefined) {
    const num = el(doc, 'span', 'chip number', `Tab ${t.number}`);
    num.title = `AI apps call this tab ${t.number}`;
    line.append(num);
  }
  if (t.acting) line.append(el(doc, 'span', 'acting-badge', 'AI acting'));
  if (t.owner !== undefined) {
    const owner = el(doc, 'span', 'chip owner', t.owner);
    owner.title = `${t.owner} opened this tab (or you gave it to it); other AI apps cannot use it`;
    const back = el(doc, 'button', 'btn small take-back', 'Take back');
    back.type = 'button';
    back.setAttribute('aria-label', `Take back ${t.title} from ${t.owner}`);
    back.addEventListener('click', () => h.onTakeBack?.(t.tabId));
    line.append(owner, back);
  }
  text.append(title, line);
  const box = el(doc, 'input', 'switch');
  box.type = 'checkbox';
  box.setAttribute('role', 'switch');
  box.checked = t.number !== undefined;
  box.dataset.tabId = String(t.tabId);
  box.setAttribute('aria-label', `Share ${t.title}`);
  box.addEventListener('change', () => h.onToggle(t.tabId, box.checked));
  li.append(favicon(doc, t.favIconUrl), text, box);
  return li;
}

/**
 * Fills container with the tab list: the tabs of this window, then the
 * other windows' under their own heading; or says there is none.
 */
export function renderTabList(container: HTMLElement, tabs: PopupTab[], h: TabListHandlers): void {
  const doc = container.ownerDocument;
  const groups: [string, PopupTab[]][] = [
    ['This window', tabs.filter((t) => !t.otherWindow)],
    ['Other windows', tabs.filter((t) => t.otherWindow)],
  ];
  const parts: HTMLElement[] = [];
  for (const [name, list] of groups) {
    if (list.length === 0) continue;
    const id = `tabs-${name === 'This window' ? 'here' : 'other'}`;
    const heading = el(doc, 'h3', 'group', name);
    heading.id = id;
    const ul = el(doc, 'ul', 'tab-list');
    ul.setAttribute('aria-labelledby', id);
    ul.append(...list.map((t) => tabItem(doc, t, h)));
    parts.push(heading, ul);
  }
  if (parts.length === 0) parts.push(el(doc, 'p', 'muted empty-list', 'No tabs to share in this window.'));
  container.replaceChildren(...parts);
}

/** Fills the "Share this tab" row for the active tab (hidden without one). */
export function renderActiveShare(doc: Document, active: PopupTab | undefined): void {
  const row = byId(doc, 'active-share');
  row.hidden = !active;
  const button = byId<HTMLButtonElement>(doc, 'share-active');
  button.dataset.tabId = active ? String(active.tabId) : '';
  const shared = active?.number !== undefined;
  button.dataset.shared = String(shared);
  button.textContent = shared ? 'Stop sharing' : 'Share this tab';
  button.classList.toggle('primary', !shared);
  byId(doc, 'active-title').textContent = active?.title ?? '';
  byId(doc, 'active-title').title = active?.title ?? '';
  byId(doc, 'active-status').textContent = shared ? `Shared as tab ${active?.number}` : 'Not shared';
  byId(doc, 'active-icon').replaceChildren(favicon(doc, active?.favIconUrl));
}

/** The "Trusted input" checkbox: on only when the user stored true (chrome.storage.local "trustedInput"). */
export function trustedInputChecked(stored: unknown): boolean {
  return stored === true;
}
