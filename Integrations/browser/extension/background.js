// handoff's browser extension: tells `handoff browser-host` (native messaging) the page of the
// focused tab of the focused window whenever it changes, and when the browser loses the focus.
// The host offers the page to the paired devices; private windows are never offered (the host
// refuses them too). Chromium and Firefox (the `browser` namespace where there is one).
const api = globalThis.browser ?? globalThis.chrome;
const HOST = "org.handoff.browser_host";
let port = null;

function connect() {
  if (port) return port;
  port = api.runtime.connectNative(HOST);
  port.onMessage.addListener((status) => {
    // {"type": "status", "ok", "offered"?, "error"?}: shown on the toolbar badge when it failed.
    if (api.action && status && status.type === "status") {
      api.action.setBadgeText({ text: status.ok ? "" : "!" });
      if (!status.ok && status.error) api.action.setTitle({ title: `handoff: ${status.error}` });
    }
  });
  port.onDisconnect.addListener(() => { port = null; });
  return port;
}

// Tells the host the active tab of the focused window, or that no window has the focus. The
// focused window is the browser's last focused one, if it still has the focus: not the first
// window windows.getAll calls focused (headless Chromium calls them all focused), nor the
// window of the last windows.onFocusChanged event (it says WINDOW_ID_NONE for a moment while the
// focus moves between two windows: before the other window's event on some Linux window
// managers, after it in headless Chromium). A tab of a private window is told as such whatever
// its state (it withdraws what was offered); while the browser has no focus, no page is told,
// so the host's blur grace runs.
async function reportFocusedTab() {
  const focused = await api.windows.getLastFocused({ populate: true }).catch(() => null);
  if (!focused || !focused.focused) { connect().postMessage({ type: "blur" }); return; }
  const tab = (focused.tabs || []).find((t) => t.active);
  if (!tab) return;
  const incognito = Boolean(tab.incognito || focused.incognito);
  const url = tab.url || tab.pendingUrl;
  if (!url && !incognito) return;
  connect().postMessage({ type: "page", url: url || "", title: tab.title || "", incognito });
}

api.tabs.onActivated.addListener(() => { reportFocusedTab(); });
api.tabs.onUpdated.addListener((_id, change, tab) => {
  if (tab.active && (change.url || change.title || change.status === "complete")) reportFocusedTab();
});
api.windows.onFocusChanged.addListener(() => { reportFocusedTab(); });
// Each start of the worker: the browser's start, the extension's install, or a restart of a
// worker the browser had stopped.
reportFocusedTab();
