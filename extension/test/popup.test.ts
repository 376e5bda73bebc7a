import { describe, expect, it, vi } from 'vitest';
import { popupView, renderTabList } from '../src/popup/view';
import { popupTabList } from '../src/shared/popup-tabs';

const OWN = 'chrome-extension://aokghpkcplaclmhkoheinfbdepflapkn/popup.html';

const t = (id: number, title: string, url: string, active = false) => ({ id, title, url, active }) as chrome.tabs.Tab;

describe('popup tab list', () => {
  it('lists the window tabs without the popup page itself, with their numbers', () => {
    const got = popupTabList(
      [t(1, 'Example', 'https://example.com/'), t(2, 'Tether', OWN, true), t(3, 'Settings', 'chrome://settings/')],
      { 3: 4 },
      OWN,
    );
    expect(got).toEqual({
      tabs: [
        { tabId: 1, title: 'Example', url: 'https://example.com/', active: false },
        { tabId: 3, title: 'Settings', url: 'chrome://settings/', active: false, number: 4 },
      ],
    });
  });

  it('names the active tab for the toggle unless it is the popup', () => {
    expect(popupTabList([t(1, 'A', 'https://a.test/', true)], {}, OWN).activeTabId).toBe(1);
    expect(popupTabList([t(1, 'A', `${OWN}?x`, true)], {}, OWN).activeTabId).toBeUndefined();
  });

  it('renders one checkbox per tab whose accessible name is the title', () => {
    const ul = document.createElement('ul');
    document.body.replaceChildren(ul);
    const onToggle = vi.fn();
    renderTabList(
      ul,
      [
        { tabId: 1, title: 'Example', url: 'https://example.com/', active: true },
        { tabId: 3, title: 'Settings', url: 'chrome://settings/', active: false, number: 4 },
      ],
      onToggle,
    );
    const boxes = [...ul.querySelectorAll<HTMLInputElement>('input[type=checkbox]')];
    expect(boxes.map((b) => b.closest('label')!.textContent)).toEqual(['Example', 'Settings']);
    expect(boxes.map((b) => b.checked)).toEqual([false, true]);
    expect(ul.querySelector('.number')!.textContent).toBe('tab 4');
    boxes[0]!.click();
    expect(onToggle).toHaveBeenCalledWith(1, true);
  });
});

describe('tabs owned by AI apps', () => {
  it('names the owner of a shared tab, and only of shared ones', () => {
    const got = popupTabList([t(1, 'Agent', 'https://a.test/'), t(2, 'Gone', 'https://b.test/')], { 1: 5 }, OWN, {
      1: { app: 'claude-code', session: 's1' },
      2: { app: 'cursor' },
    });
    expect(got.tabs.map((x) => x.owner)).toEqual(['claude-code', undefined]);
  });

  it('offers "Take back" for a tab an app owns', () => {
    const ul = document.createElement('ul');
    document.body.replaceChildren(ul);
    const onTakeBack = vi.fn();
    renderTabList(
      ul,
      [
        { tabId: 1, title: 'Mine', url: 'https://m.test/', active: true, number: 1 },
        { tabId: 2, title: 'Agent tab', url: 'https://a.test/', active: false, number: 2, owner: 'claude-code' },
      ],
      vi.fn(),
      onTakeBack,
    );
    const buttons = [...ul.querySelectorAll('button')];
    expect(buttons.map((b) => b.getAttribute('aria-label'))).toEqual(['Take back Agent tab from claude-code']);
    expect(ul.querySelector('.owner')!.textContent).toBe('claude-code');
    buttons[0]!.click();
    expect(onTakeBack).toHaveBeenCalledWith(2);
  });
});

describe('tab group colours', () => {
  it('is one of the nine, the same for a name every time', async () => {
    const { GROUP_COLORS, groupColor, groupTitle } = await import('../src/background/tab-groups');
    const names = ['claude-code', 'cursor', 'claude-ai', 'vscode', 'x', ''];
    for (const n of names) {
      expect(GROUP_COLORS).toContain(groupColor(n));
      expect(groupColor(n)).toBe(groupColor(n));
    }
    expect(new Set(names.map(groupColor)).size).toBeGreaterThan(1);
    expect(groupTitle('')).toBe('AI app');
    expect(groupTitle('cursor')).toBe('cursor');
  });
});

describe('popupView pairing and halts', () => {
  it('shows the pairing message', () => {
    const v = popupView({ state: 'pairing', port: 1, since: 0, pairing: 'Approve it in Tether.' }, {});
    expect(v.pairing).toBe('Waiting for approval… Approve it in Tether.');
    expect(v.halted).toBe(false);
  });
  it('shows the pairing code the user compares with Tether', () => {
    const v = popupView({ state: 'pairing', port: 1, since: 0, pairing: 'Approve it.', pairingCode: 'K7M4PX' }, {});
    expect(v.pairingCode).toBe('K7M4PX');
    expect(popupView({ state: 'connected', port: 1, since: 0, pairingCode: 'K7M4PX' }, {}).pairingCode).toBeUndefined();
  });
  it('says it asks again after a pairing expired', () => {
    const v = popupView({ state: 'disconnected', port: 1, since: 0, lastRefusal: { code: 'pairing_expired', message: 'Nobody approved it.', at: 0 } }, {});
    expect(v.stateText).toContain('asks Tether again when it reconnects');
    expect(v.refusal).toBe('Nobody approved it.');
    expect(v.halted).toBe(false);
    expect(v.pairingCode).toBeUndefined();
  });
  it('offers Reconnect when halted', () => {
    const v = popupView({ state: 'disconnected', port: 1, since: 0, halted: true, lastRefusal: { code: 'pairing_denied', message: 'Denied.', at: 0 } }, {});
    expect(v.halted).toBe(true);
    expect(v.refusal).toBe('Tether refused this browser: Denied.');
  });
});
