#!/usr/bin/env python3
"""A hostile device that pairs with an agent waiting in `handoff pair --accept`, for the lab.

Run it on a simulated host (scripts/lab exec hK -- python3 scripts/lab-hostile-pairer.py ...)
against another host's agent. It is a stranger with its own certificate (--cert/--key), sends
`hello` and `pairRequest` with the name --name (any bytes: escape sequences, bidi overrides, line
separators), reveals its nonce, and then:

  --confirm no     answers the code with "refused"
  --confirm yes    answers "accepted", sends no key of its own and hangs up after reading
  --confirm none   answers nothing and hangs up

Output: one JSON object: the frame kinds it received (hex), whether any of them carried an
advertising key (a `keys` frame, or a key inside `pairConfirm`), the code it computed and its own
device ID (the SHA-256 of its certificate) in hex.
Tests/HandoffIntegrationTests/PairingAttackOnHostsTests.swift runs it.
"""
import argparse
import hashlib
import json
import os
import socket
import ssl
import struct
import time

from lab_wire import B, D, M, S, frame, hello, tls_context, u32

PAIR_REQUEST, PAIR_NONCE, PAIR_REVEAL, PAIR_CONFIRM, KEYS = 0x30, 0x31, 0x32, 0x33, 0x34


def read_frame(sock):
    header = b""
    while len(header) < 5:
        chunk = sock.recv(5 - len(header))
        if not chunk:
            return None
        header += chunk
    kind, length = header[0], struct.unpack(">I", header[1:])[0]
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return kind, body


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--name", required=True, help="the name to claim; Python escapes (\\x1b, \\u202e) are decoded")
    p.add_argument("--confirm", choices=["yes", "no", "none"], default="no")
    p.add_argument("--wait", type=float, default=20, help="seconds to wait for the other side's answers")
    args = p.parse_args()
    name = args.name.encode("utf-8").decode("unicode_escape")

    sock = tls_context(args.cert, args.key).wrap_socket(socket.create_connection((args.host, args.port), timeout=args.wait))
    id_i = hashlib.sha256(ssl.PEM_cert_to_DER_cert(open(args.cert).read())).digest()
    id_r = hashlib.sha256(sock.getpeercert(binary_form=True)).digest()
    nonce_i = os.urandom(32)
    commitment = hashlib.sha256(b"handoff-pair-commit-v1" + id_i + id_r + nonce_i).digest()
    sock.sendall(hello(name) + frame(PAIR_REQUEST, M(name=S(name), commitment=D(commitment))))

    received, key_seen, code = [], False, None
    deadline = time.time() + args.wait
    try:
        while time.time() < deadline:
            got = read_frame(sock)
            if got is None:
                break
            kind, body = got
            received.append("%02x" % kind)
            if kind == KEYS or (kind == PAIR_CONFIRM and b"advertisingKey" in body):
                key_seen = True
                if args.confirm == "yes":
                    break  # took the key; hang up without giving one
            if kind == PAIR_NONCE:
                marker = u32(5) + b"nonce" + b"\x06" + u32(32)
                start = body.rindex(marker) + len(marker)
                nonce_r = body[start:start + 32]
                digest = hashlib.sha256(b"handoff-pair-sas-v1" + id_i + id_r + nonce_i + nonce_r).digest()
                code = "%06d" % (struct.unpack(">I", digest[:4])[0] % 1000000)
                code = code[:3] + " " + code[3:]
                sock.sendall(frame(PAIR_REVEAL, M(nonce=D(nonce_i))))
                if args.confirm == "no":
                    sock.sendall(frame(PAIR_CONFIRM, M(accepted=B(False))))
                elif args.confirm == "yes":
                    sock.sendall(frame(PAIR_CONFIRM, M(accepted=B(True))))
                else:
                    break
    except (OSError, ssl.SSLError):
        pass
    sock.close()
    print(json.dumps({"received": received, "keySeen": key_seen, "code": code, "deviceIDHex": id_i.hex()}))


if __name__ == "__main__":
    main()
