// Tab groups of AI apps (chrome.tabGroups, permission "tabGroups"): a tab an
// app owns joins that app's group in its window, titled with the app's name,
// in one of Chrome's nine colours chosen by a hash of the name. Groups exist
// only in normal windows and never span windows, so there is one group per
// app per normal window; tabs in popup windows stay ungrouped. Groups are
// found by their title each time (never by a stored id), so they are reused
// across the app's sessions and survive service-worker restarts; one chain
// runs every grouping in turn, so two tabs opened at once never make two
// groups. The user's own tabs are never regrouped.

/** Chrome's tab group colours (chrome.tabGroups.Color). */
export const GROUP_COLORS = ['grey', 'blue', 'red', 'yellow', 'green', 'pink', 'purple', 'cyan', 'orange'] as const;
export type GroupColor = (typeof GROUP_COLORS)[number];

/** The colour of app's group: FNV-1a of its name, modulo the nine colours. */
export function groupColor(app: string): GroupColor {
  let h = 0x811c9dc5;
  for (let i = 0; i < app.length; i++) {
    h ^= app.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return GROUP_COLORS[h % GROUP_COLORS.length]!;
}

/** The title of app's group (an app without a name still gets one). */
export function groupTitle(app: string): string {
  return app.trim() === '' ? 'AI app' : app;
}

let chain: Promise<unknown> = Promise.resolve();

function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  const run = chain.catch(() => undefined).then(fn);
  chain = run;
  return run;
}

/**
 * Puts tabId into app's group of its window, making the group if the window
 * has none; a tab in a popup or app window stays as it is. Never throws: a
 * tab that closed meanwhile, or a Chrome without tab groups, is left alone.
 */
export function joinAppGroup(tabId: number, app: string): Promise<void> {
  return inTurn(async () => {
    try {
      const tab = await chrome.tabs.get(tabId);
      const win = await chrome.windows.get(tab.windowId);
      if (win.type !== 'normal') return;
      const title = groupTitle(app);
      const groups = await chrome.tabGroups.query({ windowId: tab.windowId });
      const group = groups.find((g) => g.title === title);
      if (group) {
        if (tab.groupId !== group.id) await chrome.tabs.group({ groupId: group.id, tabIds: [tabId] });
        return;
      }
      const groupId = await chrome.tabs.group({ tabIds: [tabId], createProperties: { windowId: tab.windowId } });
      await chrome.tabGroups.update(groupId, { title, color: groupColor(app), collapsed: false });
    } catch {
      // The tab or window closed meanwhile: nothing to group.
    }
  });
}

/**
 * Takes tabId out of app's group (a tab given back to the user); a tab in
 * another group (the user's own) stays there.
 */
export function leaveAppGroup(tabId: number, app: string): Promise<void> {
  return inTurn(async () => {
    try {
      const tab = await chrome.tabs.get(tabId);
      if (tab.groupId === undefined || tab.groupId < 0) return;
      const group = await chrome.tabGroups.get(tab.groupId);
      if (group.title === groupTitle(app)) await chrome.tabs.ungroup([tabId]);
    } catch {
      // The tab closed meanwhile.
    }
  });
}
