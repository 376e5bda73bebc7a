import axe from 'axe-core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { otherProgramSteps, popupView, renderActiveShare, renderStatus, renderTabList, tabHost, type StoredProfile } from '../src/popup/view';
import type { ConnectionStatus, PopupTab } from '../src/shared/messages';
import { popupTabList, safeFavicon } from '../src/shared/popup-tabs';

const OWN = 'chrome-extension://aokghpkcplaclmhkoheinfbdepflapkn/popup.html';

const t = (id: number, title: string, url: string, active = false, extra: Partial<chrome.tabs.Tab> = {}) => ({ id, title, url, active, windowId: 1, ...extra }) as chrome.tabs.Tab;

describe('popup tab list', () => {
  it('lists the tabs without the popup page itself, with their numbers', () => {
    const got = popupTabList([t(1, 'Example', 'https://example.com/'), t(2, 'Tether', OWN, true), t(3, 'Settings', 'chrome://settings/')], OWN, { shared: { 3: 4 } });
    expect(got).toEqual({
      tabs: [
        { tabId: 1, title: 'Example', url: 'https://example.com/', active: false },
        { tabId: 3, title: 'Settings', url: 'chrome://settings/', active: false, number: 4 },
      ],
    });
  });

  it('names the active tab for "Share this tab" unless it is the popup', () => {
    expect(popupTabList([t(1, 'A', 'https://a.test/', true)], OWN, { shared: {} }).activeTabId).toBe(1);
    expect(popupTabList([t(1, 'A', `${OWN}?x`, true)], OWN, { shared: {} }).activeTabId).toBeUndefined();
  });

  it("puts this window's tabs first and marks the others, whose active tab is not this one", () => {
    const got = popupTabList([t(1, 'Other', 'https://o.test/', true, { windowId: 2 }), t(2, 'Here', 'https://h.test/', true, { windowId: 1 })], OWN, { shared: {}, windowId: 1 });
    expect(got.tabs.map((x) => [x.title, x.otherWindow])).toEqual([
      ['Here', undefined],
      ['Other', true],
    ]);
    expect(got.activeTabId).toBe(2);
    // The popup page opened as a tab in a window of its own: this window is the next one.
    const alone = popupTabList([t(1, 'Tether', OWN, true, { windowId: 3 }), t(2, 'A', 'https://a.test/', true, { windowId: 1 })], OWN, { shared: {}, windowId: 3 });
    expect([alone.tabs[0]!.otherWindow, alone.activeTabId]).toEqual([undefined, 2]);
  });

  it('keeps only http(s) and data: image favicons', () => {
    expect(safeFavicon('https://a.test/favicon.ico')).toBe('https://a.test/favicon.ico');
    expect(safeFavicon('data:image/png;base64,AAAA')).toBe('data:image/png;base64,AAAA');
    for (const bad of ['chrome://favicon/x', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,<b>', '', undefined]) expect(safeFavicon(bad)).toBeUndefined();
    const got = popupTabList([t(1, 'A', 'https://a.test/', false, { favIconUrl: 'chrome://theme/x' }), t(2, 'B', 'https://b.test/', false, { favIconUrl: 'https://b.test/f.png' })], OWN, { shared: {} });
    expect(got.tabs.map((x) => x.favIconUrl)).toEqual([undefined, 'https://b.test/f.png']);
  });

  it('says which shared tab an AI acts on now', () => {
    const got = popupTabList([t(1, 'A', 'https://a.test/'), t(2, 'B', 'https://b.test/')], OWN, { shared: { 1: 1, 2: 2 }, acting: new Set([2]) });
    expect(got.tabs.map((x) => x.acting)).toEqual([undefined, true]);
  });
});

describe('tabs owned by AI apps', () => {
  it('names the owner of a shared tab, and only of shared ones', () => {
    const got = popupTabList([t(1, 'Agent', 'https://a.test/'), t(2, 'Gone', 'https://b.test/')], OWN, {
      shared: { 1: 5 },
      owners: { 1: { app: 'claude-code', session: 's1' }, 2: { app: 'cursor' } },
    });
    expect(got.tabs.map((x) => x.owner)).toEqual(['claude-code', undefined]);
  });

  it('offers "Take back" for a tab an app owns', () => {
    const div = document.createElement('div');
    document.body.replaceChildren(div);
    const onTakeBack = vi.fn();
    renderTabList(
      div,
      [
        { tabId: 1, title: 'Mine', url: 'https://m.test/', active: true, number: 1 },
        { tabId: 2, title: 'Agent tab', url: 'https://a.test/', active: false, number: 2, owner: 'claude-code' },
      ],
      { onToggle: vi.fn(), onTakeBack },
    );
    const buttons = [...div.querySelectorAll('button')];
    expect(buttons.map((b) => b.getAttribute('aria-label'))).toEqual(['Take back Agent tab from claude-code']);
    expect(div.querySelector('.owner')!.textContent).toBe('claude-code');
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

describe('popupView: each state with its next step', () => {
  it('connecting, before and after the first status', () => {
    expect(popupView(undefined, {})).toMatchObject({ state: 'connecting', headline: 'Connecting to Tether…' });
    expect(popupView({ state: 'connecting', port: 7, since: 0 }, {}).nextStep).toContain('port 7');
  });
  it('shows the pairing message and code the user compares with Tether', () => {
    const v = popupView({ state: 'pairing', port: 1, since: 0, pairing: 'Approve it in Tether.', pairingCode: 'K7M4PX' }, {});
    expect(v).toMatchObject({ state: 'pairing', headline: 'Waiting for approval', pairing: 'Approve it in Tether.', pairingCode: 'K7M4PX', halted: false });
    expect(popupView({ state: 'connected', port: 1, since: 0, pairingCode: 'K7M4PX' }, {}).pairingCode).toBeUndefined();
  });
  it('says Tether is not running and how to start it', () => {
    const v = popupView({ state: 'disconnected', port: 1, since: 0 }, {});
    expect(v).toMatchObject({ state: 'not-running', headline: 'Tether is not running', retry: true });
    expect(v.nextStep).toContain('Start Tether from your applications menu');
  });
  it('says it asks again after a pairing expired', () => {
    const v = popupView({ state: 'disconnected', port: 1, since: 0, lastRefusal: { code: 'pairing_expired', message: 'Nobody approved it.', at: 0 } }, {});
    expect(v.nextStep).toContain('asks Tether again when it reconnects');
    expect(v.refusal).toBe('Nobody approved it.');
    expect(v.halted).toBe(false);
    expect(v.pairingCode).toBeUndefined();
  });
  it('offers Reconnect when halted, with the reason', () => {
    const v = popupView({ state: 'disconnected', port: 1, since: 0, halted: true, lastRefusal: { code: 'pairing_denied', message: 'Denied.', at: 0 } }, {});
    expect(v).toMatchObject({ state: 'refused', halted: true, retry: false, refusal: 'Denied.' });
    expect(v.nextStep).toContain('Reconnect');
  });
});

describe('tabHost', () => {
  it('is the host of a web page, else a short form of the URL', () => {
    expect(tabHost('https://news.example.com:8443/a?b#c')).toBe('news.example.com:8443');
    expect(tabHost('chrome://settings/privacy')).toBe('chrome://settings');
    expect(tabHost('about:blank')).toBe('about:blank');
    expect(tabHost('file:///home/a/b.html')).toBe('file');
    expect(tabHost('')).toBe('');
  });
});

// The whole popup page, rendered as popup.ts renders it, without Chrome.
const html = readFileSync(join(import.meta.dirname, '../src/popup.html'), 'utf8');

function loadPopup(): Document {
  const head = /<head>([\s\S]*)<\/head>/.exec(html)![1]!.replace(/<link[^>]*>/g, '');
  const body = /<body>([\s\S]*)<\/body>/.exec(html)![1]!.replace(/<script[^>]*><\/script>/g, '');
  document.documentElement.lang = 'en';
  document.head.innerHTML = head;
  document.body.innerHTML = body;
  return document;
}

const profile: StoredProfile = { assignedLabel: 'Work', assignedSlug: 'work', daemonVersion: '0.3.0' };

const STATES: Record<string, ConnectionStatus | undefined> = {
  starting: undefined,
  connecting: { state: 'connecting', port: 47615, since: 0 },
  connected: { state: 'connected', port: 47615, since: 0 },
  pairing: { state: 'pairing', port: 47615, since: 0, pairing: 'Approve this browser in Tether.', pairingCode: 'K7M4PX' },
  'not running': { state: 'disconnected', port: 47615, since: 0 },
  refused: { state: 'disconnected', port: 47615, since: 0, halted: true, lastRefusal: { code: 'unauthorized', message: 'This profile is not approved.', at: 0 } },
  expired: { state: 'disconnected', port: 47615, since: 0, lastRefusal: { code: 'pairing_expired', message: 'Nobody approved it in time.', at: 0 } },
  unverified: { state: 'disconnected', port: 47615, since: 0, lastRefusal: { code: 'unverified', message: 'The program answering on port 47615 is not the Tether this browser paired with.', at: 0 } },
  'other program': {
    state: 'disconnected',
    port: 47615,
    since: 0,
    otherProgram: true,
    lastRefusal: { code: 'unverified', message: "Another program, not Tether, answers on 127.0.0.1:47615: it refused the extension's WebSocket and answered HTTP 404, which Tether never does. The extension sent it nothing (no hello, no secret) and obeys none of its requests.", at: 0 },
  },
  'pair again': { state: 'disconnected', port: 47615, since: 0, pairAgain: true, lastRefusal: { code: 'unverified', message: 'The program answering on port 47615 does not know this browser. If you made Tether forget this browser, press Pair again.', at: 0 } },
};

const sample: PopupTab[] = [
  { tabId: 1, title: 'Example Domain', url: 'https://example.com/', active: true, number: 1, favIconUrl: 'https://example.com/favicon.ico', acting: true },
  { tabId: 2, title: 'Agent tab', url: 'https://docs.test/a', active: false, number: 2, owner: 'claude-code' },
  { tabId: 3, title: 'Settings', url: 'chrome://settings/', active: false },
  { tabId: 4, title: 'Elsewhere', url: 'https://other.test/', active: true, otherWindow: true },
];

function renderAll(status: ConnectionStatus | undefined, tabs: PopupTab[], onToggle = vi.fn()): Document {
  const doc = loadPopup();
  renderStatus(doc, popupView(status, profile));
  renderTabList(doc.getElementById('tabs')!, tabs, { onToggle, onTakeBack: vi.fn() });
  renderActiveShare(doc, tabs.find((x) => x.active && !x.otherWindow));
  return doc;
}

async function violations(doc: Document, open = true): Promise<string[]> {
  (doc.getElementById('settings') as HTMLDetailsElement).open = open;
  const r = await axe.run(doc.documentElement);
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('the popup page', () => {
  for (const [name, status] of Object.entries(STATES)) {
    it(`has no axe violations: ${name}`, async () => {
      const doc = renderAll(status, sample);
      expect(await violations(doc)).toEqual([]);
      expect(await violations(doc, false)).toEqual([]);
    });
  }

  it('would see a violation: a switch without a name', async () => {
    const doc = renderAll(STATES.connected, sample);
    doc.querySelector('#tabs input')!.removeAttribute('aria-label');
    expect((await violations(doc)).join()).toMatch(/label/);
  });

  it('shows each state with its next step and only its own parts', () => {
    let doc = renderAll(STATES.connected, sample);
    expect(doc.getElementById('connection')!.dataset.state).toBe('connected');
    expect(doc.getElementById('state')!.textContent).toBe('Connected to Tether');
    expect(doc.getElementById('version')!.textContent).toBe('Tether 0.3.0');
    expect(doc.getElementById('label')!.textContent).toBe('Work');
    expect(doc.getElementById('slug')!.textContent).toBe('work');
    for (const id of ['pairing-code-row', 'refusal', 'reconnect', 'retry', 'pair-again']) expect(doc.getElementById(id)!.hidden, id).toBe(true);

    doc = renderAll(STATES.pairing, []);
    expect(doc.getElementById('pairing-code-row')!.hidden).toBe(false);
    expect(doc.getElementById('pairing-code')!.textContent).toBe('K7M4PX');
    expect(doc.getElementById('version')!.hidden).toBe(true);

    doc = renderAll(STATES['not running'], []);
    expect(doc.getElementById('next-step')!.textContent).toContain('Start Tether from your applications menu');
    expect(doc.getElementById('retry')!.hidden).toBe(false);

    doc = renderAll(STATES.refused, []);
    expect(doc.getElementById('refusal')!.textContent).toBe('This profile is not approved.');
    expect(doc.getElementById('reconnect')!.hidden).toBe(false);
  });

  it('says a program that did not prove it is Tether got nothing, and offers Pair again only when it may be a Tether that forgot this browser', () => {
    const plain = popupView(STATES.unverified, profile);
    expect(plain).toMatchObject({ state: 'refused', headline: 'Not Tether: nothing was sent', refusal: STATES.unverified!.lastRefusal!.message });
    expect(plain.pairAgain).toBeFalsy();
    expect(plain.nextStep).toBe('Start the Tether you paired with; the extension tries again by itself.');
    expect(popupView(STATES['pair again'], profile).nextStep).toContain('Press Pair again only if you made Tether forget this browser');
    let doc = renderAll(STATES.unverified, []);
    expect(doc.getElementById('state')!.textContent).toBe('Not Tether: nothing was sent');
    expect(doc.getElementById('refusal')!.textContent).toContain('is not the Tether this browser paired with');
    expect(doc.getElementById('pair-again')!.hidden).toBe(true);
    expect(doc.getElementById('reconnect')!.hidden).toBe(true); // it retries by itself

    expect(popupView(STATES['pair again'], profile)).toMatchObject({ headline: 'Not Tether: nothing was sent', pairAgain: true });
    doc = renderAll(STATES['pair again'], []);
    const button = doc.getElementById('pair-again') as HTMLButtonElement;
    expect([button.hidden, button.textContent]).toEqual([false, 'Pair again']);

    // pairAgain belongs to the unverified refusal only.
    doc = renderAll({ ...STATES.refused!, pairAgain: true }, []);
    expect(doc.getElementById('pair-again')!.hidden).toBe(true);

    // A remote broker that did not prove this browser's key: the extension refused it, not the other way round.
    const remote = popupView({ ...STATES.unverified!, broker: 'tether.test:8443', pairAgain: true }, { ...profile, brokerUrl: 'wss://tether.test:8443/extension' });
    expect(remote).toMatchObject({ state: 'refused', headline: 'Not the broker you paired with: nothing was sent', broker: 'tether.test:8443' });
    expect(remote.pairAgain).toBeFalsy();
  });

  it('says another program holds the port, that nothing was sent, and how to free it or move Tether; never "start Tether" alone', () => {
    const v = popupView(STATES['other program'], profile);
    expect(v).toMatchObject({ state: 'refused', headline: "Another program is on Tether's port 47615: nothing was sent", retry: true, refusal: STATES['other program']!.lastRefusal!.message });
    expect(v.pairAgain).toBeFalsy();
    // The real steps: quit the program (tether stop names it), or Tether on another port with the extension pointed at it.
    expect(v.nextStep).toContain('Quit that program (tether stop, in a terminal, names the program holding the port)');
    expect(v.nextStep).toContain('TETHER_PORT=47616 tether');
    expect(v.nextStep).toContain('Write the extension');
    expect(v.nextStep).toContain('tether.json');
    expect(v.nextStep).toContain('chrome://extensions');
    expect(v.nextStep).not.toMatch(/^Start Tether/);
    expect(otherProgramSteps(65535)).toContain('TETHER_PORT=65534 tether');
    const doc = renderAll(STATES['other program'], []);
    expect(doc.getElementById('connection')!.dataset.state).toBe('refused');
    expect(doc.getElementById('state')!.textContent).toBe("Another program is on Tether's port 47615: nothing was sent");
    expect(doc.getElementById('refusal')!.textContent).toContain('Another program, not Tether, answers on 127.0.0.1:47615');
    expect(doc.getElementById('retry')!.hidden).toBe(false);
    expect(doc.getElementById('pair-again')!.hidden).toBe(true);
    // Nothing on the port (connection refused) is the one case for "Tether is not running".
    expect(popupView(STATES['not running'], profile).headline).toBe('Tether is not running');
    // A program answering like Tether's /health that refused the socket: no port steps.
    const refusedSocket = popupView({ state: 'disconnected', port: 47615, since: 0, lastRefusal: { code: 'socket_refused', message: 'It refused.', at: 0 } }, profile);
    expect(refusedSocket).toMatchObject({ state: 'refused', headline: 'Tether refused the connection', refusal: 'It refused.' });
  });

  it("lists this window's tabs, then the other windows', each with favicon, host, number, acting and owner", () => {
    const doc = renderAll(STATES.connected, sample);
    const groups = [...doc.querySelectorAll('#tabs h3')].map((h) => h.textContent);
    expect(groups).toEqual(['This window', 'Other windows']);
    const rows = [...doc.querySelectorAll<HTMLElement>('#tabs li.tab')];
    expect(rows.map((r) => r.querySelector('.tab-title')!.textContent)).toEqual(['Example Domain', 'Agent tab', 'Settings', 'Elsewhere']);
    expect(rows.map((r) => r.querySelector('.tab-host')!.textContent)).toEqual(['example.com', 'docs.test', 'chrome://settings', 'other.test']);
    const img = rows[0]!.querySelector('img')!;
    expect([img.getAttribute('src'), img.alt, img.referrerPolicy]).toEqual(['https://example.com/favicon.ico', '', 'no-referrer']);
    expect(rows[2]!.querySelector('img')).toBeNull();
    expect(rows[0]!.querySelector('.number')!.textContent).toBe('Tab 1');
    expect(rows[0]!.querySelector('.acting-badge')!.textContent).toBe('AI acting');
    expect(rows[1]!.querySelector('.acting-badge')).toBeNull();
    const switches = [...doc.querySelectorAll<HTMLInputElement>('#tabs input[role=switch]')];
    expect(switches.map((s) => [s.getAttribute('aria-label'), s.checked])).toEqual([
      ['Share Example Domain', true],
      ['Share Agent tab', true],
      ['Share Settings', false],
      ['Share Elsewhere', false],
    ]);
  });

  it('shares with one click: a switch, or "Share this tab" for the current tab', () => {
    const onToggle = vi.fn();
    const doc = renderAll(STATES.connected, sample, onToggle);
    doc.querySelectorAll<HTMLInputElement>('#tabs input[role=switch]')[2]!.click();
    expect(onToggle).toHaveBeenCalledWith(3, true);
    const button = doc.getElementById('share-active') as HTMLButtonElement;
    expect([button.textContent, button.dataset.tabId, button.dataset.shared]).toEqual(['Stop sharing', '1', 'true']);
    expect(doc.getElementById('active-status')!.textContent).toBe('Shared as tab 1');
    renderActiveShare(doc, sample[2]);
    expect([button.textContent, button.dataset.tabId, button.dataset.shared]).toEqual(['Share this tab', '3', 'false']);
    renderActiveShare(doc, undefined);
    expect(doc.getElementById('active-share')!.hidden).toBe(true);
  });

  it('keeps a long title whole for its tooltip and accessible name', async () => {
    const long = 'A very long page title that goes on and on '.repeat(8).trim();
    const doc = renderAll(STATES.connected, [{ tabId: 9, title: long, url: `https://example.com/${'x'.repeat(500)}`, active: true, number: 3 }]);
    const title = doc.querySelector<HTMLElement>('#tabs .tab-title')!;
    expect([title.textContent, title.title]).toEqual([long, long]);
    expect(doc.querySelector('#tabs input')!.getAttribute('aria-label')).toBe(`Share ${long}`);
    expect(doc.querySelector('#tabs .tab-host')!.textContent).toBe('example.com');
    expect(await violations(doc)).toEqual([]);
  });

  it('lays out right-to-left titles by their own direction, hosts left to right', async () => {
    const doc = renderAll(STATES.connected, [
      { tabId: 1, title: 'مرحبا بالعالم — الصفحة الرئيسية', url: 'https://ar.example/', active: true, number: 1 },
      { tabId: 2, title: 'שלום עולם', url: 'https://he.example/', active: false },
    ]);
    const titles = [...doc.querySelectorAll<HTMLElement>('#tabs .tab-title')];
    expect(titles.map((x) => x.dir)).toEqual(['auto', 'auto']);
    expect([...doc.querySelectorAll<HTMLElement>('#tabs .tab-host')].map((x) => x.dir)).toEqual(['ltr', 'ltr']);
    expect(doc.getElementById('active-title')!.dir).toBe('auto');
    expect(await violations(doc)).toEqual([]);
  });

  it('renders 50 tabs in the scrolling list, each switch with its own name', async () => {
    const many: PopupTab[] = Array.from({ length: 50 }, (_, i) => ({ tabId: i + 1, title: `Tab title ${i + 1}`, url: `https://site${i}.test/`, active: i === 0, ...(i % 3 === 0 ? { number: i + 1 } : {}) }));
    const doc = renderAll(STATES.connected, many);
    const rows = doc.querySelectorAll('#tabs li.tab');
    expect(rows.length).toBe(50);
    expect(rows[0]!.closest('.tab-scroll')).toBe(doc.getElementById('tabs'));
    const names = new Set([...doc.querySelectorAll('#tabs input[role=switch]')].map((s) => s.getAttribute('aria-label')));
    expect(names.size).toBe(50);
    expect(await violations(doc)).toEqual([]);
  });

  it('says so when there is no tab to list', () => {
    const doc = renderAll(STATES.connected, []);
    expect(doc.getElementById('tabs')!.textContent).toBe('No tabs to share in this window.');
  });
});

// The popup's look is the window's theme, imported, never a copy.
describe('the popup stylesheet', () => {
  const css = readFileSync(join(import.meta.dirname, '../src/popup.css'), 'utf8');
  const theme = readFileSync(join(import.meta.dirname, '../../frontend/src/theme.css'), 'utf8');
  const app = readFileSync(join(import.meta.dirname, '../../frontend/src/app.css'), 'utf8');

  it("imports the window's theme, as the window does", () => {
    expect(css).toContain("@import '../../frontend/src/theme.css';");
    expect(app).toContain("@import './theme.css';");
  });

  it('defines no variable or colour of its own', () => {
    expect(css).not.toMatch(/--[\w-]+\s*:/);
    expect(css.replace(/\/\*[\s\S]*?\*\//g, '')).not.toMatch(/#[0-9a-f]{3,8}\b|rgb\(|hsl\(/i);
    expect(theme).toMatch(/prefers-color-scheme: dark/);
    expect(html).toContain('class="follows-system-scheme"');
  });

  it('keeps the popup within 800×600 and the list to about 8 tabs', () => {
    const width = Number(/body \{[^}]*width: (\d+)px/.exec(css)![1]);
    const list = Number(/\.tab-scroll \{[^}]*max-height: (\d+)px/.exec(css)![1]);
    const row = Number(/\.tab \{[^}]*min-height: (\d+)px/.exec(css)![1]);
    expect(width).toBeLessThanOrEqual(800);
    expect(Math.round(list / row)).toBeGreaterThanOrEqual(7);
    expect(Math.round(list / row)).toBeLessThanOrEqual(9);
  });
});
