#!/usr/bin/env bash
# bench/gpu/attention_waves.sh SEQ BQ DIR... - where an attention program's time
# goes besides its loop: each bench_attention of DIR/*-d*/ (built by
# bench/gpu/attention.sh) run at batch 1 with as many heads as make about
# one, two and four waves of CTAs on the GPU's SMs (at one CTA an SM; SEQ
# and BQ as the programs were built with), so
# that time(n waves) = fixed + n x (per CTA + iterations x per iteration)
# can be read off: a program's fixed cost (prologue, epilogue, start) is
# what the difference between waves leaves beside its iterations.
# On the GPU machine; rows into $OUT/waves.jsonl.
set -u
cd "$(dirname "$0")/../.." || exit 1
seq=$1 bq=$2
shift 2
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
sms=${SMS:-132} # the H100's and H200's SMs
for dir in "$@"; do
	for d in "$dir"/*-d*; do
		[ -x "$d/bench_attention" ] || continue
		qblocks=$(( (seq + bq - 1) / bq ))
		for waves in 1 2 4; do
			# heads for about `waves` waves of CTAs (batch 1)
			h=$(( waves * sms / qblocks ))
			[ "$h" -ge 1 ] || h=1
			"$d/bench_attention" --b 1 --h "$h" --name "$(basename "$dir")/$(basename "$d") waves$waves h$h" | tee -a "$OUT/waves.jsonl"
		done
	done
done
