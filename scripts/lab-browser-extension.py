#!/usr/bin/env python3
"""Speaks native messaging to `handoff browser-host` as the browser extension would, for
BrowserHostOnHostsTests: a 32-bit little-endian length, then JSON, in each direction.

usage: lab-browser-extension.py DIR HANDOFF
Runs HANDOFF browser-host chrome-extension://test/ and, in turn, for each step file DIR/step-N.json
that appears (N = 1, 2, ...), sends the messages it lists and writes the host's answers to
DIR/answer-N.json. A file DIR/close makes it close the host's standard input and write the host's
exit status to DIR/exit.
"""
import json, os, struct, subprocess, sys, time

directory, handoff = sys.argv[1], sys.argv[2]
host = subprocess.Popen([handoff, "browser-host", "chrome-extension://test/"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def send(message):
    body = json.dumps(message).encode()
    host.stdin.write(struct.pack("<I", len(body)) + body)
    host.stdin.flush()

def receive():
    header = host.stdout.read(4)
    if len(header) < 4:
        return None
    (length,) = struct.unpack("<I", header)
    return json.loads(host.stdout.read(length))

step = 1
while True:
    path = os.path.join(directory, f"step-{step}.json")
    if os.path.exists(path):
        answers = []
        for message in json.load(open(path)):
            send(message)
            if message.get("expectAnswer", True):
                answers.append(receive())
        with open(os.path.join(directory, f"answer-{step}.json.tmp"), "w") as f:
            json.dump(answers, f)
        os.rename(os.path.join(directory, f"answer-{step}.json.tmp"), os.path.join(directory, f"answer-{step}.json"))
        step += 1
    elif os.path.exists(os.path.join(directory, "close")):
        host.stdin.close()
        status = host.wait(timeout=10)
        open(os.path.join(directory, "exit"), "w").write(str(status))
        break
    else:
        time.sleep(0.02)
