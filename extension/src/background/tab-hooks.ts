// Tether in shared tabs only. The page-world hooks and the content script are
// injected into every frame of a tab when it is shared and at each commit
// while it stays shared (MV3 cannot declare a content script for one tab),
// and taken out when it stops being shared: from its current documents at
// once, and from a document restored from the back/forward cache when that
// commits again. Tabs the user has not shared are never touched.
//
// Also here: telling the hooks when the AI acts on a tab (acting.ts), and
// noticing a page blocked by a dialog of the browser's own before a tool call
// waits on it (a blocked page blocks its content script too, and no
// extension API reports an open dialog without the debugger).
import { TetherError } from '../shared/errors';
import type { ContentMessage } from '../shared/messages';
import type { PageControl } from '../shared/page-hooks';
import { ACT_GRACE_MS, actingUntil, setActingUntil, stopActing } from './acting';
import { answeredAgain, busyWithUs, injectScripts, injectTop, isNoReceiver, isRestrictedUrl } from './content-bridge';
import type { NavigationWatcher } from './navigation';
import { readState, updateState, type OpenDialog } from './state';

/**
 * How long a page may leave a message unanswered, twice in a row, before it
 * counts as blocked, in ms (see answerWithin).
 */
export const BLOCKED_AFTER_MS = 1000;
/** Missed answers in a row a loading page may have before it counts as blocked. */
const LOADING_MISSES = 2;
/** How long the frame that reported a dialog open has to answer, twice in a row, in ms, to show the report was stale or forged. */
const CLAIM_CHECK_MS = 250;
/** Longest dialog text quoted in an error, in characters. */
const QUOTE_LIMIT = 300;

/** Puts the scripts into every frame of a tab that was just shared (a tab Chrome protects gets none). */
export async function hookTab(tabId: number): Promise<void> {
  const tab = await chrome.tabs.get(tabId).catch(() => undefined);
  const url = tab?.url || tab?.pendingUrl || '';
  if (!tab || isRestrictedUrl(url)) return;
  await injectScripts({ tabId, allFrames: true });
}

/** Takes the hooks out of every frame of a tab that is no longer shared. */
export function unhookTab(tabId: number): void {
  stopActing(tabId);
  sendPageState(tabId, { unhook: true });
}

/**
 * Passes control to the hooks of the tab's frames (frameId: one frame). Never
 * waits for an answer and never fails: a frame without scripts has no hooks.
 */
export function sendPageState(tabId: number, control: PageControl, frameId?: number): void {
  const msg: ContentMessage = { target: 'content', kind: 'page-state', ...control };
  const sent = frameId === undefined ? chrome.tabs.sendMessage(tabId, msg) : chrome.tabs.sendMessage(tabId, msg, { frameId });
  sent.catch(() => undefined);
}

/**
 * Run once as the worker starts. No call of ours runs in a worker that just
 * started, but the hooks of the shared tabs may still think the AI acts: for
 * a call the previous worker was running when Chrome stopped it (it never
 * told them the call ended, so until that call's deadline they would answer
 * the page's dialogs instead of showing them to the user). Tells them what
 * this worker knows: not acting, unless a call already began here (the
 * value is read as each message goes).
 */
export async function resetActing(): Promise<void> {
  const s = await readState();
  for (const id of Object.keys(s.shared)) {
    const tabId = Number(id);
    sendPageState(tabId, { actingUntil: actingUntil(tabId) });
  }
}

/**
 * webNavigation.onCommitted, for every tab (registered at the worker's top
 * level): a new document of a shared tab gets the scripts at once; one of a
 * tab that was shared before loses any hooks it was restored with. Other
 * tabs cost one look at the session state, in the service worker only.
 */
export async function onNavigationCommitted(d: { tabId: number; frameId: number; url: string }): Promise<void> {
  if (d.tabId < 0 || isRestrictedUrl(d.url)) return;
  const s = await readState();
  // A top document restored from the back/forward cache brings its frames
  // along without a commit of their own: a top commit covers all frames.
  // Their content scripts are still there: injected again, they restart and
  // ask for their documents' numbers back, so their refs work (content.ts).
  const top = d.frameId === 0;
  if (s.shared[d.tabId] !== undefined) {
    // A new top document: the old one's dialog went with it.
    if (top && s.open[d.tabId]) await updateState((st) => void delete st.open[d.tabId]);
    const commit = top ? topCommitted(d.tabId) : 0;
    const ok = await injectScripts(top ? { tabId: d.tabId, allFrames: true } : { tabId: d.tabId, frameIds: [d.frameId] });
    if (top && ok) hookedCommit.set(d.tabId, commit);
  } else if (s.numbers[d.tabId] !== undefined) {
    sendPageState(d.tabId, { unhook: true }, top ? undefined : d.frameId);
  }
}

/** Top-frame commits of each shared tab seen by this worker, and the one whose document the scripts are known to be in. */
const topCommits = new Map<number, number>();
const hookedCommit = new Map<number, number>();

/** Counts a top-frame commit of tabId (its scripts are not in the new document yet); returns its number. */
function topCommitted(tabId: number): number {
  const n = (topCommits.get(tabId) ?? 0) + 1;
  topCommits.set(tabId, n);
  hookedCommit.delete(tabId);
  return n;
}

/**
 * Whether the hooks are known to be in the tab's current top document: this
 * worker saw it commit and its injection there finished. Then a dialog its
 * page opens is one the hooks report (with its text), so a top frame that
 * does not answer while it loads is busy (its own scripts, parsing or
 * layout), not blocked by a dialog it opened. Unknown (a worker that started
 * since, a document that blocked before the injection ran): false.
 */
export function hooksIn(tabId: number): boolean {
  const n = topCommits.get(tabId);
  return n !== undefined && hookedCommit.get(tabId) === n;
}

type Answer = 'answered' | 'no-receiver' | 'timeout';

/** Sends msg to the tab's frame; says whether it answered or has no receiver (other failures throw). */
function ask(tabId: number, msg: ContentMessage, frameId: number): Promise<Answer> {
  return chrome.tabs.sendMessage(tabId, msg, { frameId }).then(
    (): Answer => 'answered',
    (err: unknown): Answer => {
      if (isNoReceiver(err)) return 'no-receiver';
      throw err;
    },
  );
}

/** What p settles to within ms, else 'timeout'. */
async function within(p: Promise<Answer>, ms: number): Promise<Answer> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Answer>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends msg to the tab's frame (default the top one) and says how it went.
 * 'timeout' is a confirmed miss only: msg left unanswered for ms, then a
 * ping sent at that point left unanswered, as msg still is, for ms more. A
 * single late answer is no sign of a dialog: a worker that is itself held
 * up (Chrome just started it again, or the machine is busy) gets its timer
 * first and the page's answer, already on its way, a moment later, and a
 * page that is only slow answers one of the two. A page blocked by a dialog
 * answers neither. Only msg's own failure within the first ms throws.
 */
export async function answerWithin(tabId: number, msg: ContentMessage, ms: number, frameId = 0): Promise<Answer> {
  const first = ask(tabId, msg, frameId);
  const answer = await within(first, ms);
  if (answer === 'answered' && frameId === 0) answeredAgain(tabId);
  if (answer !== 'timeout') return answer;
  const again = ask(tabId, { target: 'content', kind: 'ping' }, frameId);
  // Any other end of either now (the document went away meanwhile) is no dialog either.
  const ended = (p: Promise<Answer>) => p.catch((): Answer => 'answered');
  return within(Promise.race([ended(first), ended(again)]), ms);
}

/**
 * The dialog the hooks reported open in the tab, if its frame really is
 * blocked. The report is page-controlled (any frame can forge it), so the
 * frame that made it is asked to answer: if it does within CLAIM_CHECK_MS,
 * no dialog of its blocks it, and the report is dropped.
 */
async function openDialog(tabId: number): Promise<OpenDialog | undefined> {
  const open = (await readState()).open[tabId];
  if (!open) return undefined;
  const answer = await answerWithin(tabId, { target: 'content', kind: 'ping' }, CLAIM_CHECK_MS, open.frameId).catch((): Answer => 'no-receiver');
  if (answer === 'timeout') return open;
  await updateState((st) => {
    if (st.open[tabId]?.since === open.since) delete st.open[tabId];
  });
  return undefined;
}

/**
 * Checks that the tab's page can be worked on before a tool call relies on
 * it, and passes control to its top frame's hooks. Throws dialog_open when a
 * dialog of the browser's own blocks it: with its text when the hooks saw it
 * open, else after a confirmed miss (answerWithin, BLOCKED_AFTER_MS). inject: put the
 * scripts in when they are missing (else a page without them passes).
 * busyPasses: a page still loading that is busy with the hooks in passes
 * (the call replaces it; else such a page is a timeout, pageBusy).
 */
export async function pageReady(tabId: number, control: PageControl = {}, inject = true, busyPasses = false): Promise<void> {
  const number = (await readState()).shared[tabId] ?? 0;
  const open = await openDialog(tabId);
  if (open) throw dialogOpen(number, open);
  const tab = await chrome.tabs.get(tabId);
  const url = tab.url || tab.pendingUrl || '';
  if (!url || url === 'about:blank' || isRestrictedUrl(url)) return;
  const asked = Date.now();
  const answer = await answerWithin(tabId, { target: 'content', kind: 'page-state', ...control }, BLOCKED_AFTER_MS);
  if (answer === 'no-receiver' && inject) await injectTop(tabId, url);
  // busyWithUs(asked): also a page still busy after a read of ours it answered just before.
  if (answer === 'timeout' && !busyWithUs(tabId, asked)) {
    // Still loading with the hooks in, and no dialog reported: busy, not blocked (see loadOrBlocked).
    if (hooksIn(tabId) && (await chrome.tabs.get(tabId).catch(() => undefined))?.status === 'loading') {
      if (busyPasses) return;
      throw pageBusy(number);
    }
    throw pageBlocked(number);
  }
}

/** What the call that actOn runs does to the tab's page. */
export interface ActOptions {
  /**
   * fn loads a new document into the tab (navigate, back, forward, reload):
   * the current page gets no scripts injected, and one still busy loading
   * does not stop the call (it is being replaced). A page blocked by a
   * dialog still does: leaving it would discard the user's answer.
   */
  loads?: boolean;
  /**
   * The call opened the tab itself for fn, at the URL it loads: no page of
   * the user's is in it, so nothing is checked before fn (whose load wait,
   * loadOrBlocked, reports a dialog from the new page's first scripts).
   */
  opened?: boolean;
}

/**
 * Runs fn as the AI acting on tabId: the hooks of all its frames answer
 * dialogs by the policy from now until fn's result plus ACT_GRACE_MS. Throws
 * dialog_open first when the page is blocked (see ActOptions).
 */
export async function actOn<T>(tabId: number, deadline: number, fn: () => Promise<T>, opts: ActOptions = {}): Promise<T> {
  // Set first: scripts injected meanwhile start with it.
  setActingUntil(tabId, deadline);
  try {
    if (!opts.opened) await pageReady(tabId, { actingUntil: deadline }, !opts.loads, opts.loads);
  } catch (err) {
    // Not acting after all; a blocked top frame gets this after the state it has not read yet.
    stopActing(tabId);
    sendPageState(tabId, { actingUntil: 0 }, 0);
    throw err;
  }
  sendPageState(tabId, { actingUntil: deadline });
  try {
    return await fn();
  } finally {
    const end = Date.now() + ACT_GRACE_MS;
    setActingUntil(tabId, end);
    sendPageState(tabId, { actingUntil: end });
  }
}

/**
 * Waits for the tab's navigation to load (watcher.waitForLoad), but throws
 * dialog_open as soon as the page is seen blocked, since a blocked page never
 * finishes loading: the hooks report a dialog of the browser's own, or the
 * committed page has LOADING_MISSES confirmed misses in a row before the
 * hooks are in it (a dialog raised by its first scripts, before the
 * injection could run; one miss could be a script that runs long). Once the
 * hooks are in (hooksIn), a page that does not answer is busy loading (a
 * large page's parsing and layout, its own scripts): it is waited for until
 * deadline, like any slow load. after: what the call did that started the
 * load, for the error (see dialogOpen).
 */
export function loadOrBlocked(watcher: NavigationWatcher, tabId: number, deadline: number, after: string, startBy?: number): Promise<boolean> {
  const work = (async () => {
    if (!(await watcher.waitForLoad(tabId, deadline, startBy))) return false;
    // Loaded, but a large page may still be busy (layout after its load
    // event): wait for it to answer, else the read that follows would take
    // it for blocked.
    if (hooksIn(tabId) && !(await answersBy(tabId, deadline))) throw pageBusy((await readState()).shared[tabId] ?? 0, after);
    return true;
  })();
  return untilBlocked(tabId, work, { misses: LOADING_MISSES, when: () => watcher.committed(tabId) && !hooksIn(tabId), after });
}

/** Pings the tab's top frame until it answers (true) or deadline passes (false). */
async function answersBy(tabId: number, deadline: number): Promise<boolean> {
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    const answer = await within(
      ask(tabId, { target: 'content', kind: 'ping' }, 0).catch((): Answer => 'answered'),
      Math.min(left, BLOCKED_AFTER_MS),
    );
    if (answer !== 'timeout') return true;
  }
}

/**
 * Waits for an action's reply from the page, but throws dialog_open as soon
 * as the page is seen blocked (the action opened a dialog the hooks never
 * saw, in a frame they did not reach): the error says the action reached
 * the page, so it is not repeated.
 */
export function actionOrBlocked<T>(tabId: number, reply: Promise<T>): Promise<T> {
  return untilBlocked(tabId, reply, { misses: 1, after: 'The action reached the page, which then stopped. ' });
}

/**
 * Races work with a watch over the tab: every BLOCKED_AFTER_MS / 2, a dialog
 * the hooks reported open (and its frame confirms) ends the wait with
 * dialog_open, and so do `misses` confirmed misses of the top frame in a row
 * (answerWithin, BLOCKED_AFTER_MS) while no long read of ours runs there.
 * when: count misses only while it holds (not before the page commits,
 * nor once the hooks are in it: see loadOrBlocked).
 */
async function untilBlocked<T>(tabId: number, work: Promise<T>, opts: { misses: number; when?: () => boolean; after?: string }): Promise<T> {
  let stopped = false;
  const blocked = (async (): Promise<never> => {
    let missed = 0;
    for (;;) {
      await new Promise((r) => setTimeout(r, BLOCKED_AFTER_MS / 2));
      if (stopped) return new Promise<never>(() => undefined);
      const number = (await readState()).shared[tabId] ?? 0;
      const open = await openDialog(tabId);
      if (open && !stopped) throw dialogOpen(number, open, opts.after);
      if (opts.when && !opts.when()) continue;
      const asked = Date.now();
      const answer = await answerWithin(tabId, { target: 'content', kind: 'ping' }, BLOCKED_AFTER_MS).catch((): Answer => 'answered');
      // The hooks may have got in meanwhile: then the miss was a busy page.
      const counts = !opts.when || opts.when();
      missed = answer === 'timeout' && counts && !busyWithUs(tabId, asked) ? missed + 1 : 0;
      if (missed >= opts.misses && !stopped) throw pageBlocked(number, opts.after);
    }
  })();
  blocked.catch(() => undefined); // Once the work won, a late finding goes nowhere.
  try {
    return await Promise.race([work, blocked]);
  } finally {
    stopped = true;
  }
}

/**
 * The error for a tab blocked by a dialog the hooks saw open. after: what the
 * call already did to the page, said first (then the agent is told not to
 * repeat it, but to look); empty when it did nothing yet.
 */
export function dialogOpen(number: number, open: OpenDialog, after = ''): TetherError {
  const text = open.message.length > QUOTE_LIMIT ? open.message.slice(0, QUOTE_LIMIT - 1) + '…' : open.message;
  return new TetherError(
    'dialog_open',
    after +
      `Tab ${number} is blocked by a ${open.kind} dialog that Chrome shows to the user: the page opened it while Tether was not acting on the tab, so it is the user's to answer. ` +
      `Its text (untrusted page text): ${JSON.stringify(text)}. Ask the user to answer it in Chrome${nextStep(after)} ` +
      'Tether cannot answer it (Chrome lets an extension answer only a dialog that opens while its debugger is attached); to have Tether answer a dialog that your next action opens, call browser_handle_dialog before that action.',
  );
}

/** The error for a tab that does not answer, with no dialog seen (after: as in dialogOpen). */
export function pageBlocked(number: number, after = ''): TetherError {
  return new TetherError(
    'dialog_open',
    after +
      `Tab ${number} does not answer: most likely a dialog of the browser's own is open (a "Leave site?" prompt, or a dialog the page opened before Tether was in place), or a script keeps the page busy. ` +
      `Ask the user to answer the dialog in Chrome (or wait for the page)${nextStep(after)}`,
  );
}

/**
 * The error for a tab whose page is still too busy loading to answer, with
 * the hooks in it and no dialog reported (after: as in dialogOpen).
 */
export function pageBusy(number: number, after = ''): TetherError {
  return new TetherError(
    'timeout',
    after +
      `Tab ${number} is still loading and too busy to answer (its own parsing, layout or scripts; no dialog was reported). ` +
      'Call browser_snapshot again in a few seconds; on a very large page, a snapshot with depth, or browser_find, reads less.',
  );
}

function nextStep(after: string): string {
  return after ? '. Do not repeat that call: once the dialog is answered, call browser_snapshot to see what it did.' : ', then call the tool again.';
}
