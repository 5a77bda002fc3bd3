#!/usr/bin/env python3
"""Userspace netem for scripts/lab: delay, jitter, loss and reordering on one simulated host's link.

The kernel here has no sch_netem ("tc qdisc ... netem" fails with "Specified qdisc kind is
unknown"), so `scripts/lab impair hK ...` splices this forwarder into hK's link instead: in the
lab's bridge namespace, hK's port leaves the bridge, a new veth pair takes its place, and this
program copies every Ethernet frame between the two with AF_PACKET sockets.

Frames the host sends (its egress, as netem on the host's eth0 would see them) are impaired:
  --loss P      each frame is dropped with probability P %
  --delay MS    each frame waits MS milliseconds
  --jitter MS   ... plus a uniform random -MS..+MS (never below 0), which reorders frames too
  --reorder P   each frame is sent at once, ahead of the delayed ones, with probability P %
                (netem's "reorder": needs --delay)
Frames towards the host pass unimpaired. With PACKET_VNET_HDR, segmentation offload metadata
crosses with each frame, so large TCP segments are neither dropped nor re-segmented.

Prints "ready" once both sockets are open; runs until killed. Only touches the two interfaces
it is given, which scripts/lab creates inside the lab's own bridge namespace.
"""
import argparse
import heapq
import random
import select
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_VNET_HDR = 15
PACKET_OUTGOING = 4
MAX_FRAME = 65536 + 10 + 64


def open_port(ifname):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    sock.bind((ifname, ETH_P_ALL))
    sock.setblocking(False)
    return sock


def percent(text):
    value = float(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not a percentage (0-100)")
    return value / 100


def millis(text):
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} ms is negative")
    return value / 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host-port", required=True, help="the host's end (frames from the host arrive here)")
    parser.add_argument("--bridge-port", required=True, help="the end towards the bridge")
    parser.add_argument("--delay", type=millis, default=0.0)
    parser.add_argument("--jitter", type=millis, default=0.0)
    parser.add_argument("--loss", type=percent, default=0.0)
    parser.add_argument("--reorder", type=percent, default=0.0)
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one)")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    host = open_port(args.host_port)
    bridge = open_port(args.bridge_port)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", flush=True)

    pending = []  # (due, sequence, frame): the host's delayed frames
    counts = {"forwarded": 0, "dropped": 0, "reordered": 0}
    try:
        forward(rng, args, host, bridge, pending, counts)
    finally:
        print(" ".join(f"{name} {value}" for name, value in counts.items()), flush=True)


def forward(rng, args, host, bridge, pending, counts):
    """Copies frames both ways until the process is stopped; impairs the host's."""
    sequence = 0

    def send(sock, frame):
        try:
            sock.send(frame)
        except (BlockingIOError, OSError):
            pass  # a full queue or a frame the link refuses: lost, as on a real link

    while True:
        now = time.monotonic()
        while pending and pending[0][0] <= now:
            _, _, frame = heapq.heappop(pending)
            send(bridge, frame)
        timeout = max(0.0, pending[0][0] - now) if pending else None
        readable, _, _ = select.select([host, bridge], [], [], timeout)
        for sock in readable:
            while True:
                try:
                    frame, address = sock.recvfrom(MAX_FRAME)
                except BlockingIOError:
                    break
                if address[2] == PACKET_OUTGOING:
                    continue  # our own sends, seen again on the same interface
                if sock is bridge:
                    send(host, frame)
                    continue
                if rng.random() < args.loss:
                    counts["dropped"] += 1
                    continue
                counts["forwarded"] += 1
                if args.reorder and rng.random() < args.reorder:
                    counts["reordered"] += 1
                    send(bridge, frame)
                    continue
                wait = args.delay + (rng.uniform(-args.jitter, args.jitter) if args.jitter else 0.0)
                if wait <= 0:
                    send(bridge, frame)
                    continue
                sequence += 1
                heapq.heappush(pending, (time.monotonic() + wait, sequence, frame))


if __name__ == "__main__":
    main()
