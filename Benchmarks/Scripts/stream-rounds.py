#!/usr/bin/env python3
"""Prints the rounds of `scripts/bench --stream-rounds N`: each round's stream through both agents
next to its three references (one TLS 1.3 connection app to app, one bare TCP connection, two bare
relays); the stream's ratio to each; the TLS connection's and the relays' ratios to the bare
connection and their product (the two costs of the design together: its ceiling); the medians; and
how many rounds met issue 6's target (stream >= 0.5x bare).

usage: stream-rounds.py RESULTS_DIR N
"""
import json
import statistics
import sys


def throughput(directory, name):
    with open(f"{directory}/{name}") as f:
        return json.loads(f.read().strip().splitlines()[-1])["throughput_mib_s"]


def main():
    directory, rounds = sys.argv[1], int(sys.argv[2])
    names = ("stream-1", "stream-tls-reference", "stream-reference", "stream-relayed-reference")
    rows = []
    print(f"{'round':>5}  {'stream':>7}  {'TLS':>7}  {'bare':>7}  {'relays':>7}   "
          f"{'stream÷bare':>11}  {'stream÷TLS':>10}  {'stream÷relays':>13}  {'TLS÷bare':>8}  {'relays÷bare':>11}  {'together':>8}")
    for r in range(1, rounds + 1):
        try:
            stream, tls, bare, relays = (throughput(directory, f"{n}-round{r}.json") for n in names)
        except (OSError, ValueError, KeyError, IndexError) as error:
            print(f"stream-rounds: round {r} has no result ({error})", file=sys.stderr)
            return 1
        row = (stream / bare, stream / tls, stream / relays, tls / bare, relays / bare, tls / bare * relays / bare)
        rows.append(row)
        print(f"{r:>5}  {stream:>7.0f}  {tls:>7.0f}  {bare:>7.0f}  {relays:>7.0f}   "
              + "  ".join(f"{v:>{w - 1}.2f}×" for v, w in zip(row, (11, 10, 13, 8, 11, 8))))
    medians = [statistics.median(column) for column in zip(*rows)]
    print(f"{'median':>6} {'':>7}  {'':>7}  {'':>7}  {'':>7}   "
          + "  ".join(f"{v:>{w - 1}.2f}×" for v, w in zip(medians, (11, 10, 13, 8, 11, 8))))
    print("(MiB/s; \"together\" = TLS÷bare × relays÷bare: the design's two costs, each measured alone)")
    met = sum(1 for row in rows if row[0] >= 0.5)
    print(f"rounds with the stream at 0.5× the bare connection or more (issue 6's target): {met} of {rounds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
