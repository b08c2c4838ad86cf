#!/usr/bin/env python3
"""report.py PKC_JSON [PKC_JSON2] [PEERS_JSON] - the GPU benchmark's table.

PKC_JSON is bench_gpu's --json output (PKC_JSON2, optional, a second run of
it in the same command, to show the run-to-run spread); PEERS_JSON is what
peers.py (/work/shared/anchors/peers.py) wrote ($OUT/peers.json).  Prints a
markdown table: per kernel pkc's median time and rate, its ratio to the
device-to-device copy (pkc's own pk_memcpy, and torch's when peers ran), and
one row per peer with the ratio pkc / peer (> 1: pkc is faster).
Files that are missing or unreadable are skipped with a note.
"""
import json
import sys

# pkc kernel name -> peers.py kernel name
PEER_NAME = {
    "copy (d2d)": "copy",
    "add": "add",
    "softmax": "softmax",
    "layernorm": "layernorm",
    "matmul-f16": "matmul-float16",
    "matmul-bf16": "matmul-bfloat16",
}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"report: cannot read {path}: {e}")
        return None


def rate(r):
    if r.get("tflops"):
        return r["tflops"], "TFLOP/s"
    if r.get("gbs"):
        return r["gbs"], "GB/s"
    return None, ""


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    pkc = load(argv[1])
    if not pkc:
        return 1
    second = None
    peers = None
    for p in argv[2:]:
        d = load(p)
        if d is None:
            continue
        if "rows" in d and "info" in d:
            peers = d
        elif "rows" in d:
            second = d
    rerun = {r["kernel"]: r for r in (second or {}).get("rows", [])}
    peer_rows = (peers or {}).get("rows", [])
    copy = next((r for r in pkc["rows"] if r["kernel"] == "copy (d2d)"), None)
    torch_copy = next((r for r in peer_rows if r["kernel"] == "copy"), None)

    print(f"\n## pkc on {pkc.get('device', '?')} (median of {pkc.get('reps', '?')} runs)")
    if peers:
        print(f"peers: {peers.get('info', {}).get('nvidia-smi', '?')}; {peers.get('info', {}).get('versions', '')}")
    print("\n| kernel | shape | pkc ms | pkc rate | rerun rate | vs pkc copy | vs torch copy | check |")
    print("|---|---|---|---|---|---|---|---|")
    for r in pkc["rows"]:
        v, unit = rate(r)
        again = rerun.get(r["kernel"])
        av, _ = rate(again) if again else (None, "")
        vs_copy = f"{r['gbs'] / copy['gbs']:.2f}" if r.get("gbs") and copy and copy.get("gbs") else "-"
        vs_torch = (f"{r['gbs'] / torch_copy['gbs']:.2f}" if r.get("gbs") and torch_copy and torch_copy.get("gbs")
                    else "-")
        print(f"| {r['kernel']} | {r['shape']} | {r['ms']:.4f} | {v:.1f} {unit} | "
              f"{f'{av:.1f}' if av else '-'} | {vs_copy} | {vs_torch} | "
              f"{'OK' if r.get('ok') else 'FAILED'} (rel err {r.get('relerr', -1):.1e}) |")

    if peers:
        print("\n| kernel | peer | peer ms | peer rate | pkc rate | pkc / peer |")
        print("|---|---|---|---|---|---|")
        for r in pkc["rows"]:
            name = PEER_NAME.get(r["kernel"])
            v, unit = rate(r)
            for p in peer_rows:
                if p["kernel"] != name:
                    continue
                pv, punit = rate(p)
                if pv is None or v is None or punit != unit:
                    continue
                print(f"| {r['kernel']} | {p['peer']} | {p['ms']:.4f} | {pv:.1f} {punit} | {v:.1f} {unit} | "
                      f"{v / pv:.2f} |")
    failed = [r["kernel"] for r in pkc["rows"] if not r.get("ok")]
    print(f"\nbench: {len(pkc['rows']) - len(failed)} kernels OK, {len(failed)} failed"
          + (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
