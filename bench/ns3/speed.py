#!/usr/bin/env python3
"""fairstream's speed against ns-3 on the scale dumbbell (issue 18).

The network of `cargo bench -p fairstream-sim --bench scale` (N NewReno
flows without SACK, each sender and receiver on an access link of its own,
1 Gbit/s and 1 ms; a 100 Mbit/s, 20 ms bottleneck with a 100-packet
drop-tail queue; flow i starting at (7919 i mod 1000) ms; 60 s), run in
both simulators, interleaved: ns-3 (bench/ns3/dumbbell.cc, compiled against
the `ns3` wheel as bench/ns3/run.py does) and `fairstream simulate` of the
scenario the bench prints with `--toml`. Prints each run's wall time and
the ratio ns-3 ÷ fairstream, best of the rounds and of the means.

    python3 bench/ns3/speed.py --flows 100 --rounds 3

The two are the same dumbbell, not a byte-matched validation (the bench's
links add 28 bytes of IPv4 and UDP overhead a packet, ns-3's 2 of PPP;
bench/ns3/run.py matches the bytes and validates the TCP). Standard
library only; not run in CI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as ns3run  # noqa: E402  (bench/ns3/run.py, beside this file)


def timed(cmd: list[str], out: Path) -> float:
    began = time.perf_counter()
    with out.open("w") as sink:
        subprocess.run(cmd, check=True, stdout=sink, stderr=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flows", type=int, default=100, choices=[100, 1000, 10000],
                        help="the bench case newreno-FLOWS (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--fairstream", type=Path,
                        help="the fairstream binary (default: cargo build --release)")
    args = parser.parse_args()
    if args.rounds < 1:
        sys.exit("--rounds: at least 1")

    target = Path(os.environ.get("CARGO_TARGET_DIR", ns3run.REPO / "target"))
    venv = Path(os.environ.get("NS3_VENV", target / "ns3-venv"))
    work = target / "ns3-bench"
    work.mkdir(parents=True, exist_ok=True)
    package = ns3run.install_ns3(venv, ns3run.NS3_SPEC)
    ns3_binary, _ = ns3run.build_ns3_scenario(package, work)
    fairstream = args.fairstream or ns3run.build_fairstream(target)

    case = f"newreno-{args.flows}"
    scenario = work / f"scale-{case}.toml"
    toml = subprocess.run(
        ["cargo", "bench", "-q", "-p", "fairstream-sim", "--bench", "scale", "--", "--toml", case],
        cwd=ns3run.REPO, env=dict(os.environ, CARGO_TARGET_DIR=str(target)),
        check=True, capture_output=True, text=True).stdout
    scenario.write_text(toml)
    starts = ",".join(f"{(7919 * i % 1000) / 1000:.3f}" for i in range(args.flows))
    ns3_cmd = [
        str(ns3_binary), f"--flows={args.flows}", "--tcp=newreno", "--sack=0", "--hystart=0",
        "--queue=droptail", "--bottleneckRate=100Mbps", "--bottleneckDelay=20ms",
        "--accessRate=1000Mbps", "--accessDelay=1ms", "--accessQueuePackets=100",
        "--queuePackets=100", "--segmentSize=1460", "--initialCwnd=3", "--delAckCount=1",
        "--minRto=1", "--duration=60", f"--starts={starts}", "--seed=1",
    ]
    fair_cmd = [str(fairstream), "simulate", str(scenario), "--quiet"]
    ns3_times, fair_times = [], []
    for r in range(args.rounds):
        ns3_times.append(timed(ns3_cmd, work / f"speed-ns3-{r}.json"))
        fair_times.append(timed(fair_cmd, work / f"speed-fairstream-{r}.json"))
        print(f"round {r + 1}: ns-3 {ns3_times[-1]:.2f} s, fairstream {fair_times[-1]:.3f} s, "
              f"ratio {ns3_times[-1] / fair_times[-1]:.1f}", file=sys.stderr, flush=True)
    ns3_mean, fair_mean = statistics.mean(ns3_times), statistics.mean(fair_times)
    print(f"{case}, {args.rounds} rounds, wall time of the whole process:")
    print(f"  ns-3:       mean {ns3_mean:.2f} s ({min(ns3_times):.2f}-{max(ns3_times):.2f})")
    print(f"  fairstream: mean {fair_mean:.3f} s ({min(fair_times):.3f}-{max(fair_times):.3f})")
    print(f"  ns-3 / fairstream: {ns3_mean / fair_mean:.1f} (means), "
          f"{min(ns3_times) / min(fair_times):.1f} (best of each), "
          f"{min(n / f for n, f in zip(ns3_times, fair_times)):.1f}-"
          f"{max(n / f for n, f in zip(ns3_times, fair_times)):.1f} (round by round)")


if __name__ == "__main__":
    main()
