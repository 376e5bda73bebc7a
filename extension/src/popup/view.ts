// The popup's pure parts: stored connection state → text, and the share list
// → DOM (window tabs → the share list: shared/popup-tabs.ts).
import type { ConnectionStatus, PopupTab } from '../shared/messages';

export interface PopupView {
  stateClass: string;
  stateText: string;
  label: string;
  slug: string;
  refusal?: string;
  /** "Waiting for approval…" and the daemon's pairing message. */
  pairing?: string;
  /** The pairing code while waiting for approval, shown large: the user approves the entry with this code in Tether. */
  pairingCode?: string;
  /** Show the Reconnect button. */
  halted: boolean;
}

export function popupView(status: ConnectionStatus | undefined, local: { assignedLabel?: unknown; assignedSlug?: unknown; label?: unknown }): PopupView {
  const label = typeof local.assignedLabel === 'string' && local.assignedLabel ? local.assignedLabel : typeof local.label === 'string' && local.label ? local.label : '—';
  const slug = typeof local.assignedSlug === 'string' && local.assignedSlug ? local.assignedSlug : '—';
  let stateText: string;
  if (!status) stateText = 'Starting…';
  else if (status.state === 'connected') stateText = `Connected to Tether (port ${status.port})`;
  else if (status.state === 'pairing') stateText = `Waiting for approval… (port ${status.port})`;
  else if (status.state === 'connecting') stateText = `Connecting to Tether on port ${status.port}…`;
  else if (status.halted) stateText = `Not connected (port ${status.port}); press Reconnect to try again`;
  else if (status.lastRefusal?.code === 'pairing_expired') stateText = `Not approved in time (port ${status.port}); the extension asks Tether again when it reconnects, in 30 seconds`;
  else if (status.lastRefusal?.code === 'too_many_profiles') stateText = `Not connected (port ${status.port}); retrying every 30 seconds`;
  else if (status.lastRefusal) stateText = `Not connected (port ${status.port})`;
  else stateText = `Not connected — is Tether running? (port ${status.port})`;
  const view: PopupView = { stateClass: status?.state ?? 'connecting', stateText, label, slug, halted: status?.halted === true };
  if (status?.state === 'pairing') {
    view.pairing = `Waiting for approval… ${status.pairing ?? ''}`.trim();
    if (status.pairingCode) view.pairingCode = status.pairingCode;
  }
  if (status?.lastRefusal && status.state !== 'connected' && status.state !== 'pairing') {
    // An expired pairing is not a refusal: the daemon's message says it asks again.
    view.refusal = status.lastRefusal.code === 'pairing_expired' ? status.lastRefusal.message : `Tether refused this browser: ${status.lastRefusal.message}`;
  }
  return view;
}

/**
 * Fills list with one item per tab: a checkbox whose accessible name is the
 * tab's title (checked when shared), then the tab's Tether number if shared,
 * and for a tab an AI app owns, its name and a "Take back" button (the tab
 * becomes the user's again, usable by every app).
 */
export function renderTabList(list: HTMLElement, tabs: PopupTab[], onToggle: (tabId: number, shared: boolean) => void, onTakeBack: (tabId: number) => void = () => undefined): void {
  const doc = list.ownerDocument;
  list.replaceChildren(
    ...tabs.map((t) => {
      const li = doc.createElement('li');
      const label = doc.createElement('label');
      const box = doc.createElement('input');
      box.type = 'checkbox';
      box.checked = t.number !== undefined;
      box.dataset.tabId = String(t.tabId);
      box.addEventListener('change', () => onToggle(t.tabId, box.checked));
      label.append(box, doc.createTextNode(t.title));
      label.title = t.url;
      li.append(label);
      if (t.number !== undefined) {
        const num = doc.createElement('span');
        num.className = 'number';
        num.textContent = `tab ${t.number}`;
        li.append(' ', num);
      }
      if (t.owner !== undefined) {
        const owner = doc.createElement('span');
        owner.className = 'owner';
        owner.textContent = t.owner;
        owner.title = `${t.owner} opened this tab (or you gave it to it); other AI apps cannot use it`;
        const back = doc.createElement('button');
        back.type = 'button';
        back.className = 'take-back';
        back.textContent = 'Take back';
        back.setAttribute('aria-label', `Take back ${t.title} from ${t.owner}`);
        back.addEventListener('click', () => onTakeBack(t.tabId));
        li.append(' ', owner, ' ', back);
      }
      if (t.active) li.classList.add('active');
      return li;
    }),
  );
}

/** The "Trusted input" checkbox: on only when the user stored true (chrome.storage.local "trustedInput"). */
export function trustedInputChecked(stored: unknown): boolean {
  return stored === true;
}
