#!/usr/bin/env python3
"""Runs a real headless Chromium with handoff's browser extension, for BrowserExtensionOnHostsTests
(and by hand: Integrations/browser/README.md). Run it on a simulated host (scripts/lab exec hK).

usage: lab-browser-chromium.py DIR HANDOFF ADDRESS [--load-extension]

- Serves small pages on ADDRESS (an ephemeral port): /NAME is a page titled "handoff test NAME".
- Installs the native-messaging host as scripts/install does, from Integrations/browser/native-host:
  the wrapper runs HANDOFF browser-host (through DIR/handoff, which writes the arguments the
  browser gave to DIR/host-args), and its manifest goes to DIR/profile/NativeMessagingHosts/
  (Chromium reads the user data directory's).
- Starts Chromium (--headless=new --no-sandbox, user data DIR/profile) on /page-a, controlled
  through the DevTools protocol on a pipe, and loads Integrations/browser/extension unpacked:
  allowed in incognito windows (Extensions.loadUnpacked, enableInIncognito), or with
  --load-extension as Chromium's switch of that name does, as "Load unpacked" does (not allowed
  in incognito windows, the default). Its log is DIR/chromium.log.
- Writes DIR/ready.json: {"base": "http://ADDRESS:PORT", "extension": ID, "version": ...}.
- Then, in turn, for each step file DIR/step-N.json that appears (N = 1, 2, ...), does what it says
  and writes DIR/answer-N.json:
    {"do": "navigate", "url": U}   the first tab goes to U
    {"do": "incognito", "url": U}  a new incognito window on U (chrome.windows.create, asked in the
                                   extension's worker: the browser's own incognito profile);
                                   answered once its page has loaded
    {"do": "window", "url": U}     a new normal window on U, the same way
    {"do": "quit"}                 Browser.close; the answer has Chromium's exit status
"""
import base64, hashlib, http.server, json, os, select, shutil, signal, subprocess, sys, threading, time

directory, handoff, address = sys.argv[1], sys.argv[2], sys.argv[3]
by_switch = sys.argv[4:] == ["--load-extension"]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
integration = os.path.join(root, "Integrations", "browser")
HOST_NAME = "org.handoff.browser_host"


class Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        name = self.path.strip("/").split("?")[0] or "index"
        body = f"<!doctype html><title>handoff test {name}</title><p>{name}</p>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve_pages():
    server = http.server.ThreadingHTTPServer((address, 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://{address}:{server.server_address[1]}"


def install_native_host(profile):
    """The shipped wrapper and Chromium manifest, with the paths scripts/install would write."""
    recorder = os.path.join(directory, "handoff")
    with open(recorder, "w") as f:
        f.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{directory}/host-args'\nexec '{handoff}' \"$@\"\n")
    os.chmod(recorder, 0o755)
    wrapper = os.path.join(directory, "handoff-browser-host")
    with open(os.path.join(integration, "native-host", "handoff-browser-host")) as f:
        text = f.read().replace("@HANDOFF@", recorder)
    with open(wrapper, "w") as f:
        f.write(text)
    os.chmod(wrapper, 0o755)
    hosts = os.path.join(profile, "NativeMessagingHosts")
    os.makedirs(hosts, exist_ok=True)
    with open(os.path.join(integration, "native-host", f"{HOST_NAME}.chromium.json")) as f:
        manifest = f.read().replace("@HOST_WRAPPER@", wrapper)
    with open(os.path.join(hosts, f"{HOST_NAME}.json"), "w") as f:
        f.write(manifest)


class DevTools:
    """The DevTools protocol over --remote-debugging-pipe: JSON messages ended by NUL, Chromium
    reading fd 3 and writing fd 4."""

    def __init__(self, argv, environment, log):
        to_browser, self.writer = os.pipe()
        self.reader, from_browser = os.pipe()

        def as_fd_3_and_4():
            # dup first: dup2 onto the same number would keep close-on-exec.
            a, b = os.dup(to_browser), os.dup(from_browser)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen(argv, preexec_fn=as_fd_3_and_4, close_fds=False, env=environment,
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        os.close(to_browser)
        os.close(from_browser)
        self.buffer, self.last = b"", 0

    def call(self, method, params=None, session=None, timeout=10):
        self.last += 1
        message = {"id": self.last, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.writer, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self.buffer:
                ready, _, _ = select.select([self.reader], [], [], max(0, deadline - time.monotonic()))
                data = os.read(self.reader, 1 << 16) if ready else b""
                if not data:
                    raise RuntimeError(f"no answer from Chromium to {method}")
                self.buffer += data
            text, self.buffer = self.buffer.split(b"\0", 1)
            answer = json.loads(text)
            if answer.get("id") == self.last:  # events are not needed
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})


def in_extension(browser, extension, expression):
    """Evaluates a promise in the extension's service worker; returns its value."""
    worker = next(t for t in browser.call("Target.getTargets")["targetInfos"]
                  if t["type"] == "service_worker" and t["url"].startswith(f"chrome-extension://{extension}/"))
    session = browser.call("Target.attachToTarget", {"targetId": worker["targetId"], "flatten": True})["sessionId"]
    result = browser.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session)
    if "exceptionDetails" in result:
        raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
    return result["result"].get("value")


def chromium_binary():
    # The binary itself, not Debian's /usr/bin/chromium wrapper (which adds flags of its own).
    for candidate in ("/usr/lib/chromium/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("lab-browser-chromium: no chromium (apt-get install chromium)")


def main():
    os.makedirs(directory, exist_ok=True)
    profile = os.path.join(directory, "profile")
    install_native_host(profile)
    base = serve_pages()
    argv = [chromium_binary(), "--headless=new", "--no-sandbox", f"--user-data-dir={profile}",
            "--remote-debugging-pipe", "--enable-unsafe-extension-debugging", "--no-first-run",
            "--no-default-browser-check", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"]
    source = os.path.join(integration, "extension")
    if by_switch:
        argv += [f"--load-extension={source}", f"--disable-extensions-except={source}"]
    argv.append(f"{base}/page-a")
    # Its own home (Chromium keeps an NSS database there) and no desktop session bus.
    home = os.path.join(directory, "home")
    os.makedirs(home, exist_ok=True)
    environment = dict(os.environ, HOME=home, DBUS_SESSION_BUS_ADDRESS="disabled:")
    browser = DevTools(argv, environment, open(os.path.join(directory, "chromium.log"), "w"))
    signal.signal(signal.SIGTERM, lambda *_: (browser.process.terminate(), sys.exit(143)))
    version = browser.call("Browser.getVersion")["product"]
    if by_switch:
        # Its ID comes from the manifest's key; the answer is when its worker runs.
        key = base64.b64decode(json.load(open(os.path.join(source, "manifest.json")))["key"])
        extension = "".join(chr(ord("a") + int(c, 16)) for c in hashlib.sha256(key).hexdigest()[:32])
        wait_for(lambda: any(t["type"] == "service_worker" and t["url"].startswith(f"chrome-extension://{extension}/")
                             for t in browser.call("Target.getTargets")["targetInfos"]))
    else:
        extension = browser.call("Extensions.loadUnpacked", {"path": source, "enableInIncognito": True})["id"]
    tab = next(t for t in browser.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
    session = browser.call("Target.attachToTarget", {"targetId": tab["targetId"], "flatten": True})["sessionId"]
    write(os.path.join(directory, "ready.json"), {"base": base, "extension": extension, "version": version})

    step = 1
    while True:
        if browser.process.poll() is not None:
            sys.exit(f"lab-browser-chromium: Chromium exited ({browser.process.returncode}); see {directory}/chromium.log")
        try:
            order = json.load(open(os.path.join(directory, f"step-{step}.json")))
        except (OSError, ValueError):  # not there yet, or still being written (by hand)
            time.sleep(0.02)
            continue
        answer = {"ok": True}
        if order["do"] == "navigate":
            browser.call("Page.navigate", {"url": order["url"]}, session)
        elif order["do"] in ("incognito", "window"):
            # As a person opens one (Ctrl+Shift+N, Ctrl+N): the browser's own incognito profile,
            # not a DevTools browser context. The extension's worker asks for it.
            options = {"url": order["url"], "incognito": order["do"] == "incognito", "focused": True}
            answer["window"] = in_extension(browser, extension, f"chrome.windows.create({json.dumps(options)}).then((w) => w && w.id)")
            if order["do"] == "incognito":
                wait_for(lambda: any(t["type"] == "page" and t["url"] == order["url"] and t["title"].startswith("handoff test")
                                     for t in browser.call("Target.getTargets")["targetInfos"]))
        elif order["do"] == "quit":
            browser.call("Browser.close")
            answer["status"] = browser.process.wait(timeout=10)
        write(os.path.join(directory, f"answer-{step}.json"), answer)
        if order["do"] == "quit":
            return
        step += 1


def wait_for(value, timeout=10):
    """Polls `value` until it gives something true; returns that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = value()
        if found:
            return found
        time.sleep(0.05)
    raise RuntimeError("timed out")


def write(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f)
    os.rename(path + ".tmp", path)


if __name__ == "__main__":
    main()
