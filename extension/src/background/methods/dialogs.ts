// handle_dialog: arms the answer to the tab's next dialog(s).
import type { DialogArmResult } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import type { ArmedAnswer } from '../../shared/page-hooks';
import { pushArmed } from '../page-records';
import { requireTab } from '../shared-tabs';
import { updateState } from '../state';
import { pageReady } from '../tab-hooks';
import { withDialogs } from './page-result';
import { count, optString, tabParams, type P } from './params';

const TIMES_MAX = 100;

export async function handleDialogMethod(p: P): Promise<DialogArmResult> {
  if (typeof p.accept !== 'boolean') throw new TetherError('bad_request', 'accept must be true (OK) or false (Cancel).');
  const accept = p.accept;
  const promptText = optString(p, 'promptText');
  const times = count(p, 'times', TIMES_MAX) ?? 1;
  const t = await requireTab(tabParams(p).tab);
  // A dialog already open is the user's: it cannot be answered from here (the error says so).
  await pageReady(t.tabId, {}, false);
  const answer: ArmedAnswer = promptText !== undefined ? { accept, promptText } : { accept };
  const armed = await updateState((s) => {
    const q = (s.armed[t.tabId] ??= []);
    for (let i = 0; i < times; i++) q.push({ ...answer });
    return q.length;
  });
  await pushArmed(t.tabId);
  return withDialogs<DialogArmResult>({ tab: t.number, armed }, t.tabId);
}
