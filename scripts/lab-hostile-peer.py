#!/usr/bin/env python3
"""A hostile peer for the lab: attacks one agent's peer listener, then prints what it saw as JSON.

Run it on a simulated host (scripts/lab exec hK -- python3 scripts/lab-hostile-peer.py ...) against
another host's agent. With --cert/--key of a paired device (its stateDirectory's identity-cert.pem
and identity-key.pem) it is that device gone bad; without them it is a stranger.

  declare    N connections, each sending a frame header that declares --size bytes (1 GiB by
             default), then pushing up to --push bytes of body as fast as the agent takes them.
             The agent must close each at the header, before buffering the body.
  slowloris  N connections held open for --seconds, each sending a frame header that declares a
             full 64 KiB frame, then --fill bytes of its body, then one more byte every half second
             (plain TCP without --cert: a TLS ClientHello, one byte at a time). --per-second paces
             the opening under the agent's per-address rate.

Output: one JSON object with counts and timings. docs/RELIABILITY.md ("Bounded resources") has the
figures; Tests/HandoffIntegrationTests/ResourceBoundsOnHostsTests.swift runs it.
"""
import argparse
import json
import select
import socket
import ssl
import struct
import sys
import time

STREAM_DATA = 0x09
HELLO = 0x01
FULL_FRAME = 64 * 1024


def connect(args):
    """A connected socket, TLS 1.3 with the given identity when --cert is set; None if refused."""
    try:
        raw = socket.create_connection((args.host, args.port), timeout=5)
    except OSError:
        return None
    if not args.cert:
        return raw
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the agent's certificate is self-signed; this peer trusts it
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(args.cert, args.key)
    try:
        return context.wrap_socket(raw)
    except (OSError, ssl.SSLError):
        raw.close()
        return None


def closed_by_peer(sock, wait=0.0):
    """Whether the agent has closed the connection (EOF, reset or TLS alert)."""
    try:
        readable, _, _ = select.select([sock], [], [], wait)
        if not readable and not (isinstance(sock, ssl.SSLSocket) and sock.pending()):
            return False
        sock.setblocking(False)
        try:
            data = sock.recv(65536)
        finally:
            sock.setblocking(True)
        return data == b""
    except (ssl.SSLWantReadError, BlockingIOError):
        return False
    except (OSError, ssl.SSLError):
        return True


def declare(args):
    closed, refused, sent_max, seconds_max = 0, 0, 0, 0.0
    chunk = bytes(64 * 1024)
    for _ in range(args.connections):
        sock = connect(args)
        if sock is None:
            refused += 1
            continue
        start = time.monotonic()
        sent = 0
        sock.settimeout(2)
        try:
            sock.sendall(bytes([STREAM_DATA]) + struct.pack(">I", args.size))
            while sent < args.push:
                sock.sendall(chunk)
                sent += len(chunk)
                if closed_by_peer(sock):
                    break
        except (OSError, ssl.SSLError):
            pass
        # Sending fails or the read sees EOF once the agent has closed; a connection it kept
        # open shows no EOF within 2 s.
        is_closed = closed_by_peer(sock, wait=2.0)
        closed += 1 if is_closed else 0
        seconds_max = max(seconds_max, time.monotonic() - start)
        sent_max = max(sent_max, sent)
        sock.close()
    return {"mode": "declare", "declared_bytes": args.size, "connections": args.connections, "refused": refused,
            "closed_by_agent": closed, "max_body_bytes_pushed": sent_max, "max_seconds_to_close": round(seconds_max, 3)}


def slowloris(args):
    held, refused = [], 0
    start = time.monotonic()
    for i in range(args.connections):
        if args.per_second:
            time.sleep(max(0.0, start + i / args.per_second - time.monotonic()))
        sock = connect(args)
        if sock is None:
            refused += 1
            continue
        try:
            if args.cert:
                sock.sendall(bytes([HELLO]) + struct.pack(">I", FULL_FRAME) + bytes(args.fill))
            else:
                sock.sendall(b"\x16")  # the first byte of a TLS record
        except (OSError, ssl.SSLError):
            sock.close()
            continue
        held.append(sock)
    opened = len(held)
    open_after = {}
    while time.monotonic() - start < args.seconds:
        time.sleep(0.5)
        alive = []
        for sock in held:
            try:
                if closed_by_peer(sock):
                    raise OSError("closed")
                sock.sendall(b"\x00" if args.cert else b"\x03")
                alive.append(sock)
            except (OSError, ssl.SSLError):
                sock.close()
        held = alive
        open_after[round(time.monotonic() - start, 1)] = len(held)
    for sock in held:
        sock.close()
    marks = sorted(open_after.items())
    return {"mode": "slowloris", "tls": bool(args.cert), "connections": args.connections, "refused_at_connect": refused,
            "opened": opened, "open_at_end": marks[-1][1] if marks else opened,
            "open_after_1s": next((n for t, n in marks if t >= 1.0), opened),
            "open_after_2s": next((n for t, n in marks if t >= 2.0), opened), "seconds": args.seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["declare", "slowloris"])
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", help="a paired device's identity-cert.pem (without: a stranger)")
    parser.add_argument("--key", help="its identity-key.pem")
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--size", type=int, default=1 << 30, help="declare: the declared payload size")
    parser.add_argument("--push", type=int, default=8 << 20, help="declare: body bytes to push at most")
    parser.add_argument("--seconds", type=float, default=10, help="slowloris: how long to hold")
    parser.add_argument("--per-second", type=float, default=0,
                        help="slowloris: open at most this many connections a second (default: at once)")
    parser.add_argument("--fill", type=int, default=FULL_FRAME - 100,
                        help="slowloris with --cert: body bytes sent at once (the rest trickles)")
    args = parser.parse_args()
    if bool(args.cert) != bool(args.key):
        parser.error("--cert and --key go together")
    if not 0 <= args.size < 1 << 32:
        parser.error("--size must fit the 4-byte length field")
    result = declare(args) if args.mode == "declare" else slowloris(args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
