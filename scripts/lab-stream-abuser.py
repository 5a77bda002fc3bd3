#!/usr/bin/env python3
"""A paired device gone bad against continuation streams, for the lab (review finding 2).

Two modes, each printing one JSON object:

  app    --socket PATH --type T      on the source host: an app that registers on the agent's
         control socket, publishes an activity of type T that supports continuation streams,
         prints {"activityID": ...} and then never answers an event (it holds the connection
         for --seconds).
  open   --host H --port P --cert C --key K --activity ID
         on a paired host, with that host's identity: opens two connections, sends `hello` and
         `streamOpen` with the same stream ID on both, reads what comes back until one is refused
         or --seconds pass, then closes both. Prints the frame kinds each connection received, and the error messages.

  pipeline --host H --port P --cert C --key K --activity ID --connections N --frames F
         the review's memory suspicion: N connections, each sending `hello`, a `streamOpen`
         (its own stream ID) that the silent app never accepts, then F full 64 KiB `streamData`
         frames pipelined behind it while the session waits; holds them --seconds, then closes.
         Prints how many connections were accepted and how many bytes each pushed.

Tests/HandoffIntegrationTests/StreamAbuseOnHostsTests.swift runs it.
"""
import argparse
import json
import select
import socket
import ssl
import struct
import threading
import time
import uuid

from lab_wire import M, U, frame, hello, tls_context


def read_frames(sock, seconds, pending_bytes=None):
    """Frames (kind, payload) until the peer closes or `seconds` pass. With `pending_bytes` (a
    bytearray), a frame not yet whole is kept there for the next call instead of dropped."""
    frames, deadline = [], time.time() + seconds
    buffer = bytes(pending_bytes) if pending_bytes is not None else b""
    sock.setblocking(False)
    while time.time() < deadline:
        pending = isinstance(sock, ssl.SSLSocket) and sock.pending()
        if not pending and not select.select([sock], [], [], 0.05)[0]:
            continue
        try:
            chunk = sock.recv(65536)
        except (ssl.SSLWantReadError, BlockingIOError):
            continue
        except (OSError, ssl.SSLError):
            break
        if not chunk:
            break
        buffer += chunk
        while len(buffer) >= 5:
            length = struct.unpack(">I", buffer[1:5])[0]
            if len(buffer) < 5 + length:
                break
            frames.append((buffer[0], buffer[5:5 + length]))
            buffer = buffer[5 + length:]
    if pending_bytes is not None:
        pending_bytes[:] = buffer
    return frames


def app(args):
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(args.socket)
    def request(body):
        payload = json.dumps(body).encode()
        sock.sendall(frame(0x20, payload))
    answered, buffer = {}, b""

    def wait_for(request_id):
        nonlocal buffer
        deadline = time.time() + 5
        while request_id not in answered and time.time() < deadline:
            buffer += sock.recv(65536)
            while len(buffer) >= 5:
                length = struct.unpack(">I", buffer[1:5])[0]
                if len(buffer) < 5 + length:
                    break
                body = json.loads(buffer[5:5 + length])
                buffer = buffer[5 + length:]
                if "requestID" in body:
                    answered[body["requestID"]] = body

    # Requests on one connection run concurrently: register first, then publish as this app.
    request({"command": "registerApp", "requestID": "1",
             "app": {"bundleID": "com.example.silent", "teamID": "TEAM1", "activityTypes": [args.type]}})
    wait_for("1")
    request({"command": "publish", "requestID": "2",
             "activity": {"activityType": args.type, "title": "silent", "supportsContinuationStreams": True}})
    wait_for("2")
    result = answered.get("2", {})
    print(json.dumps({"activityID": (result.get("ok") or {}).get("id") if isinstance(result.get("ok"), dict) else result.get("ok"),
                      "answer": result}), flush=True)
    time.sleep(args.seconds)  # never answers streamsRequested


def open_twice(args):
    context = tls_context(args.cert, args.key)
    greeting = hello("abuser")
    stream_id = uuid.uuid4()
    request = frame(0x07, M(activityID=U(uuid.UUID(args.activity)), streamID=U(stream_id)))
    connections = [context.wrap_socket(socket.create_connection((args.host, args.port), timeout=5)) for _ in range(2)]
    for c in connections:
        c.sendall(greeting + request)
    # Both connections are read at once, until one of them has the refusal (an error frame) or
    # --seconds pass: which request the agent takes first is up to it.
    received, partial = [[] for _ in connections], [bytearray() for _ in connections]
    deadline = time.time() + args.seconds
    while time.time() < deadline and not any(kind == 0x05 for frames in received for kind, _ in frames):
        for index, c in enumerate(connections):
            received[index] += read_frames(c, 0.05, partial[index])
    for c in connections:
        c.close()
    errors = []
    for frames in received:
        for kind, payload in frames:
            if kind == 0x05:
                errors.append(payload.decode("utf-8", "replace"))
    print(json.dumps({"kinds": [["%02x" % k for k, _ in frames] for frames in received], "errors": errors}))


def pipeline(args):
    context = tls_context(args.cert, args.key)
    greeting = hello("abuser")
    data = frame(0x09, bytes(65536 - 5))
    connections, pushed = [], []

    def push(index, c):
        # Blocking writes: a write blocks while the agent does not read (its buffers are full).
        try:
            for _ in range(args.frames):
                c.sendall(data)
                pushed[index] += len(data)
        except (OSError, ssl.SSLError, ValueError):
            pass

    for _ in range(args.connections):
        try:
            c = context.wrap_socket(socket.create_connection((args.host, args.port), timeout=5))
            c.settimeout(None)
            c.sendall(greeting + frame(0x07, M(activityID=U(uuid.UUID(args.activity)), streamID=U(uuid.uuid4()))))
        except (OSError, ssl.SSLError):
            continue
        connections.append(c)
        pushed.append(0)
    threads = [threading.Thread(target=push, args=(i, c), daemon=True) for i, c in enumerate(connections)]
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    print(json.dumps({"connections": len(connections), "pushedKiB": [p // 1024 for p in pushed]}), flush=True)
    for c in connections:
        try:
            c.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["app", "open", "pipeline"])
    p.add_argument("--connections", type=int, default=60)
    p.add_argument("--frames", type=int, default=20)
    p.add_argument("--socket")
    p.add_argument("--type", default="com.example.silent.edit")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--activity")
    p.add_argument("--seconds", type=float, default=2)
    args = p.parse_args()
    {"app": app, "open": open_twice, "pipeline": pipeline}[args.mode](args)


if __name__ == "__main__":
    main()
