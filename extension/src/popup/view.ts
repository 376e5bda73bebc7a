// Turns stored connection state into the popup's text.
import type { ConnectionStatus } from '../shared/messages';

export interface PopupView {
  stateClass: string;
  stateText: string;
  label: string;
  slug: string;
  refusal?: string;
}

export function popupView(status: ConnectionStatus | undefined, local: { assignedLabel?: unknown; assignedSlug?: unknown; label?: unknown }): PopupView {
  const label = typeof local.assignedLabel === 'string' && local.assignedLabel ? local.assignedLabel : typeof local.label === 'string' ? local.label : '—';
  const slug = typeof local.assignedSlug === 'string' && local.assignedSlug ? local.assignedSlug : '—';
  let stateText: string;
  if (!status) stateText = 'Starting…';
  else if (status.state === 'connected') stateText = `Connected to Tether (port ${status.port})`;
  else if (status.state === 'connecting') stateText = `Connecting to Tether on port ${status.port}…`;
  else if (status.lastRefusal) stateText = `Not connected (port ${status.port})`;
  else stateText = `Not connected — is Tether running? (port ${status.port})`;
  const view: PopupView = { stateClass: status?.state ?? 'connecting', stateText, label, slug };
  if (status?.lastRefusal) view.refusal = `Tether refused this browser: ${status.lastRefusal.message}`;
  return view;
}
