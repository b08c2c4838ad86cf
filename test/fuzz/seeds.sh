#!/bin/sh
# seeds.sh PKC DIR - the seed corpus of the whole-pipeline fuzzer: every
# .pk file under samples/ and test/ (but the known defects, test/fuzz/known)
# that pkc -fsyntax-only accepts, copied into DIR (made afresh) under its
# path with '/' turned into '_'.
set -eu
pkc=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir"
n=0
total=0
for f in $(find samples test -name '*.pk' -not -path 'test/fuzz/known/*' | sort); do
	total=$((total + 1))
	if "$pkc" -fsyntax-only "$f" >/dev/null 2>&1; then
		cp "$f" "$dir/$(echo "$f" | tr / _)"
		n=$((n + 1))
	fi
done
echo "seeds.sh: $n of $total .pk files pass -fsyntax-only: seeds in $dir"
