// handoff's browser extension: tells `handoff browser-host` (native messaging) the page of the
// focused tab of the focused window whenever it changes, and when the browser loses or regains
// the focus. The host offers the page to the paired devices; private windows are never offered
// (the host refuses them too). Chromium and Firefox (the `browser` namespace where there is one).
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

async function reportFocusedTab() {
  const windows = await api.windows.getAll({ populate: false });
  const focused = windows.find((w) => w.focused);
  if (!focused) { connect().postMessage({ type: "blur" }); return; }
  const [tab] = await api.tabs.query({ active: true, windowId: focused.id });
  if (!tab || !tab.url) return;
  connect().postMessage({ type: "page", url: tab.url, title: tab.title || "", incognito: Boolean(tab.incognito || focused.incognito) });
}

api.tabs.onActivated.addListener(() => { reportFocusedTab(); });
api.tabs.onUpdated.addListener((_id, change, tab) => {
  if (tab.active && (change.url || change.title || change.status === "complete")) reportFocusedTab();
});
api.windows.onFocusChanged.addListener((windowId) => {
  if (windowId === api.windows.WINDOW_ID_NONE) connect().postMessage({ type: "blur" });
  else { connect().postMessage({ type: "focus" }); reportFocusedTab(); }
});
api.runtime.onStartup.addListener(() => { reportFocusedTab(); });
api.runtime.onInstalled.addListener(() => { reportFocusedTab(); });
