"""The HyperQueue engine of `fairstream sweep` (issue 14).

`fairstream sweep --engine hyperqueue[=SERVER_DIR]` writes a manifest of
the runs still missing from its cache and runs this driver with it. Every
run becomes a task of one HyperQueue job: `fairstream simulate SCENARIO
--origin BASE --quiet`, its standard output (the run's JSON summary) going
to the run's cache file. With a server directory the job goes to that
server (started with `hq server start --server-dir SERVER_DIR` and workers
with `hq worker start --server-dir SERVER_DIR` on each node); without one,
a LocalCluster (a real HyperQueue server and one worker on this machine)
runs it. `fairstream sweep` then reads the summaries as it reads its own.

Usage: python3 hq_sweep.py MANIFEST.json
"""

import json
import os
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: hq_sweep.py MANIFEST.json", file=sys.stderr)
        return 2
    try:
        from hyperqueue import Client, Job, LocalCluster
        from hyperqueue.cluster import WorkerConfig
    except ImportError as error:
        print(
            f"HyperQueue's Python package is missing ({error}): "
            "pip install hyperqueue (version 0.27), in the Python that "
            "FAIRSTREAM_PYTHON names (default: python3)",
            file=sys.stderr,
        )
        return 3
    with open(sys.argv[1], encoding="utf-8") as file:
        manifest = json.load(file)
    job = Job()
    for task in manifest["tasks"]:
        job.program(
            [
                manifest["fairstream"],
                "simulate",
                task["scenario"],
                "--origin",
                manifest["origin"],
                "--quiet",
            ],
            stdout=task["summary"],
            stderr=task["stderr"],
            name=task["name"],
        )
    server_dir = manifest.get("server_dir")
    if server_dir:
        client = Client(server_dir)
        return run(client, job)
    cluster_dir = manifest["cluster_dir"]
    os.makedirs(cluster_dir, exist_ok=True)
    with LocalCluster(cluster_dir) as cluster:
        cluster.start_worker(WorkerConfig(cores=manifest["jobs"]))
        return run(cluster.client(), job)


def run(client, job) -> int:
    submitted = client.submit(job)
    if client.wait_for_jobs([submitted], raise_on_error=False):
        return 0
    print("some HyperQueue tasks failed; their stderr files say why", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
