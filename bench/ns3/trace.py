#!/usr/bin/env python3
"""One TCP flow's sender, seen in a packet capture of its access link.

For diagnosing a row of docs/results/ns3-validation.md: prints, per
interval, the segments the first sender sent, the highest segment sent and
the cumulative ACK (in segments of --mss), then every retransmission
timeout: a resend of the segment at snd_una at least --min-rto after both
its previous transmission and the last advance of the cumulative ACK, with
the FlightSize (snd_max − snd_una) at that moment. Needs tshark.

    fairstream simulate SCENARIO.toml --pcap-dir DIR     # DIR/s1-to-left.pcap, DIR/left-to-s1.pcap
    python3 bench/ns3/trace.py --fairstream DIR
    dumbbell ARGS --pcapPrefix=PREFIX                    # PREFIX-access-*.pcap, both directions
    python3 bench/ns3/trace.py --ns3 PREFIX-access-0-1.pcap
"""

from __future__ import annotations

import argparse
import collections
import subprocess
from pathlib import Path


def fields(pcap: Path, display_filter: str, *names: str) -> list[list[str]]:
    # Absolute numbers: fairstream writes each direction to its own file,
    # where tshark's relative numbers would start from different bases.
    command = ["tshark", "-r", str(pcap), "-o", "tcp.relative_sequence_numbers:FALSE",
               "-T", "fields"]
    if display_filter:
        command += ["-Y", display_filter]
    for name in names:
        command += ["-e", name]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--fairstream", type=Path, help="a --pcap-dir of fairstream simulate")
    source.add_argument("--ns3", type=Path, help="dumbbell's pcap of sender 0's access link")
    parser.add_argument("--mss", type=int, default=1460)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds a line")
    parser.add_argument("--until", type=float, default=20.0, help="seconds of capture shown")
    parser.add_argument("--min-rto", type=float, default=0.9,
                        help="a resend of snd_una this long after the last counts as a timeout")
    args = parser.parse_args()

    if args.fairstream:
        data = fields(args.fairstream / "s1-to-left.pcap", "tcp.len > 0",
                      "frame.time_epoch", "tcp.seq")
        acks = fields(args.fairstream / "left-to-s1.pcap", "", "frame.time_epoch", "tcp.ack")
    else:
        data = fields(args.ns3, "ip.src == 10.1.0.1 && tcp.len > 0",
                      "frame.time_epoch", "tcp.seq")
        acks = fields(args.ns3, "ip.dst == 10.1.0.1", "frame.time_epoch", "tcp.ack")
    # Times from the first data segment (each file's own relative times
    # would start at its own first packet); sequence numbers from the first
    # data byte, the lowest sent.
    start = min(float(t) for t, _ in data)
    base = min(int(seq) for _, seq in data)
    events = sorted([(float(t) - start, "data", int(seq)) for t, seq in data]
                    + [(float(t) - start, "ack", int(ack)) for t, ack in acks])

    per_bin: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    una = highest = 0
    una_since = 0.0  # when the cumulative ACK last advanced
    last_sent: dict[int, float] = {}
    timeouts = []
    for time_s, kind, value in events:
        # A data segment's index, or for an ACK the next segment expected.
        segment = (value - base) // args.mss
        line = per_bin[int(time_s / args.interval)]
        if kind == "ack":
            if segment > una:
                una, una_since = segment, time_s
            line[2] = una
            continue
        line[0] += 1
        # A timeout: snd_una sent again after the ACKs stalled for an RTO
        # (go-back-N's later resends follow advancing ACKs).
        if segment == una and segment in last_sent \
                and time_s - last_sent[segment] >= args.min_rto \
                and time_s - una_since >= args.min_rto:
            timeouts.append((time_s, una, highest))
        last_sent[segment] = time_s
        highest = max(highest, segment)
        line[1] = highest

    print(f"{'time s':>7} {'sent':>5} {'highest':>8} {'cum ack':>8}   (segments)")
    top = ack = 0
    for index in range(int(args.until / args.interval)):
        sent, bin_top, bin_ack = per_bin.get(index, [0, 0, 0])
        # An interval without data or ACKs keeps the values before it.
        top, ack = max(top, bin_top), max(ack, bin_ack)
        print(f"{index * args.interval:7.1f} {sent:5d} {top:8d} {ack:8d}")
    for time_s, una_segment, top in timeouts:
        print(f"timeout at {time_s:.3f} s: snd_una segment {una_segment}, highest sent {top}, "
              f"FlightSize {top - una_segment + 1} segments")


if __name__ == "__main__":
    main()
