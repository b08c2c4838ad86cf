#!/usr/bin/env bash
# bench/host_samples.sh PKC_A [PKC_B ...] - run time of sample programs on the
# host target (our compiled interpret mode), for an A/B of two pkc builds:
# each sample is compiled by each pkc (default -O3), linked with
# samples/<name>.c, samples/common/sample_util.c and build/lib/libpkrt.a,
# and run BENCH_RUNS (default 7) times, alternating A and B, on one thread
# (PK_NUM_THREADS=1, so that the other CPU's load disturbs less); per
# sample and build the minimum and the median of the launch time that the
# sample prints with -v (the kernel alone, not the C reference check).
# BENCH_ONLY=REGEX runs only the cases it matches.  A case is "sample
# args", or "label|sample|pkc -D options|cc -D options|args" for a variant
# fixed when compiled (e.g. causal attention).  The load average is
# printed before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${BENCH_RUNS:-7}
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pkcs=("$@")
[ ${#pkcs[@]} -ge 1 ] && [ ${#pkcs[@]} -le 4 ] || { echo "usage: $0 PKC_A [PKC_B [PKC_C [PKC_D]]]" >&2; exit 2; }
# sample and its size options: long enough runs (tens of ms) to time
cases=(
	"softmax --rows 20000"
	"layernorm --rows 20000"
	"rmsnorm --rows 20000"
	"matmul_tiled --m 1024 --n 1024"
	"bmm --batch 16 --m 512 --n 512"
	"causal_softmax --b 64"
	"flash_attention --b 2 --h 4"
	"flash_attention_causal|flash_attention|-DCAUSAL=true|-DCAUSAL=1|--b 2 --h 4"
	"flash_attention_causal_2k|flash_attention|-DCAUSAL=true -DSEQ=2048|-DCAUSAL=1 -DSEQ=2048|--b 1 --h 2"
	"matmul"
)
echo "== host run time: $(date -u +%Y-%m-%dT%H:%M), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
# BENCH_ONLY=REGEX: only the cases it matches
if [ -n "${BENCH_ONLY:-}" ]; then
	mapfile -t cases < <(printf '%s\n' "${cases[@]}" | grep -E -- "$BENCH_ONLY")
fi
for c in "${cases[@]}"; do
	pkdefs='' ccdefs=''
	if [[ $c == *"|"* ]]; then
		IFS='|' read -r label s pkdefs ccdefs args <<<"$c"
	else
		read -r s args <<<"$c"
		label=$s
	fi
	for j in "${!pkcs[@]}"; do
		d=$work/$j/$label
		mkdir -p "$d"
		# shellcheck disable=SC2086 # the -D options are words
		"${pkcs[$j]}" $pkdefs "samples/$s.pk" -o "$d/$s.o" -H "$d/$s.h"
		# shellcheck disable=SC2086
		"$cc" -O2 $ccdefs -I"$d" -Iruntime -Isamples/common "samples/$s.c" samples/common/sample_util.c \
			"$d/$s.o" build/lib/libpkrt.a -lm -pthread -ldl -o "$d/$s"
	done
done
python3 - "$work" "$runs" "${#pkcs[@]}" "${cases[@]}" <<'PY'
import os, re, statistics, subprocess, sys
work, runs, nb, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
env = dict(os.environ, PK_NUM_THREADS="1", PK_DEVICE="host")
print("%-40s" % "sample (ms per launch)" + "".join("%10s %8s" % ("min " + "ABCD"[j], "median") for j in range(nb)))
for c in cases:
    if "|" in c:
        label, s, _, _, args = c.split("|")
        args = args.split()
    else:
        s, *args = c.split()
        label = s
    times = [[] for _ in range(nb)]
    for _ in range(runs):
        for j in range(nb):
            out = subprocess.run([os.path.join(work, str(j), label, s), "-v"] + args, env=env,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit("%s failed: %s" % (s, out.stdout + out.stderr))
            m = re.search(r"launch time: ([0-9.]+) ms", out.stdout + out.stderr)
            if not m:
                sys.exit("%s: no time in its -v output: %s" % (s, out.stdout + out.stderr))
            times[j].append(float(m.group(1)))
    print("%-40s" % (label + " " + " ".join(args)) + "".join("%10.2f %8.2f" % (min(t), statistics.median(t)) for t in times))
PY
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
