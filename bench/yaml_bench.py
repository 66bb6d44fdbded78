"""Reading a large YAML input (`--from` a `kubectl get -o yaml` dump): PyYAML's C loader vs its
pure-Python loader, and the whole `pools` command on it.

Usage: .venv/bin/python bench/yaml_bench.py [--slices 1500] [--runs 3]

  parse     kubectl_dra.documents.read_documents on the file with the loader it uses (CSafeLoader
            when PyYAML was built with libyaml) and with the pure-Python SafeLoader it falls back to.
  pools     `kubectl-dra --from FILE pools -o name` end to end (C loader).

The file is bench/cli_bench.py's generated cluster (NVIDIA-shaped slices, 8 devices each) written
as one multi-document YAML stream; 1,500 slices is about 28 MB.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from cli_bench import BIN, generated_snapshot, timed  # noqa: E402


def parse_seconds(path: str, runs: int, loader_base) -> float:
    import yaml

    from kubectl_dra import documents

    documents._loader.cache_clear()
    original = getattr(yaml, "CSafeLoader", None)
    try:
        if loader_base is yaml.SafeLoader and original is not None:
            del yaml.CSafeLoader  # documents._loader falls back to the pure-Python loader
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            documents.read_documents(path)
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        if original is not None:
            yaml.CSafeLoader = original
        documents._loader.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slices", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import yaml

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "cluster.yaml")
        with open(path, "w", encoding="utf-8") as stream:
            yaml.safe_dump_all(generated_snapshot(args.slices)["items"], stream, sort_keys=False)
        size_mb = os.path.getsize(path) / 1e6
        c_loader = parse_seconds(path, args.runs, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        python_loader = parse_seconds(path, args.runs, yaml.SafeLoader)
        pools = statistics.median(timed([os.path.join(BIN, "kubectl-dra"), "--from", path, "pools", "-o", "name"],
                                        args.runs))
    print(f"{args.slices} slices, {size_mb:.1f} MB of YAML (libyaml: {yaml.__with_libyaml__})")
    print(f"parse, pure-Python SafeLoader: {python_loader:.2f} s")
    print(f"parse, C loader (CSafeLoader): {c_loader:.2f} s ({python_loader / c_loader:.1f}x faster)")
    print(f"kubectl-dra --from FILE pools -o name: {pools:.2f} s")


if __name__ == "__main__":
    main()
