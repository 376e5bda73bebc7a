// The daemon's methods, one handler each, from the family files beside this
// one. HANDLERS is the allow-list: a method not in it is refused before
// anything runs. It is typed by the protocol's method list (generated from
// the Go protocol package, see METHODS in protocol.gen.ts), so a method
// missing here or one the protocol does not have is a compile error.
import type { Request } from '../../protocol.gen';
import { TetherError, toWireError } from '../../shared/errors';
import type { Method, Outcome } from '../../shared/messages';
import { handleDialogMethod } from './dialogs';
import { evaluateMethod } from './evaluate';
import { fileUploadMethod, pressKeyMethod, selectOptionMethod, typeMethod } from './input';
import { historyMethod, navigateMethod } from './navigate';
import { downloadDecideMethod, downloadsMethod, networkMethod } from './network';
import type { P } from './params';
import { clickMethod, dragMethod, hoverMethod } from './pointer';
import { consoleMethod, findMethod, readMethod, readUrlMethod, snapshotMethod } from './read';
import { screenshotMethod } from './screenshot';
import { scrollMethod } from './scroll';
import { tabCloseMethod, tabNewMethod, tabOwnerMethod, tabSelectMethod, tabsListMethod } from './tabs';
import { waitForMethod } from './wait';

/** Runs one method: params as the daemon sent them (unchecked), deadline a Date.now() value. */
type Handler = (params: P, deadline: number) => Promise<object>;

export const HANDLERS: Readonly<Record<Method, Handler>> = {
  navigate: navigateMethod,
  snapshot: snapshotMethod,
  click: clickMethod,
  type: typeMethod,
  tabs_list: tabsListMethod,
  tab_new: tabNewMethod,
  tab_close: tabCloseMethod,
  tab_select: tabSelectMethod,
  tab_owner: tabOwnerMethod,
  find: findMethod,
  read: readMethod,
  console: consoleMethod,
  select_option: selectOptionMethod,
  hover: hoverMethod,
  drag: dragMethod,
  press_key: pressKeyMethod,
  file_upload: fileUploadMethod,
  wait_for: waitForMethod,
  handle_dialog: handleDialogMethod,
  history: historyMethod,
  screenshot: screenshotMethod,
  evaluate: evaluateMethod,
  read_url: readUrlMethod,
  scroll: scrollMethod,
  network: networkMethod,
  downloads: downloadsMethod,
  download_decide: downloadDecideMethod,
};

/** Runs one daemon request; never throws. deadline is a Date.now() value. */
export async function handleRequest(req: Request, deadline: number): Promise<Outcome> {
  try {
    const handler = Object.hasOwn(HANDLERS, req.method) ? HANDLERS[req.method] : undefined;
    if (!handler) throw new TetherError('bad_request', `Unknown method ${JSON.stringify(req.method)}.`);
    const params = (typeof req.params === 'object' && req.params !== null ? req.params : {}) as Record<string, unknown>;
    return { ok: true, value: await handler(params, deadline) };
  } catch (err) {
    return { ok: false, error: toWireError(err) };
  }
}
