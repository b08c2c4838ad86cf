#!/bin/sh
# Snapshot pkc's outputs for every .pk file of the repository on every target, to
# prove a refactor changes no output:
#   test/tools/snapshot.sh build/bin/pkc /tmp/before main
#   ... change, rebuild ...
#   test/tools/snapshot.sh build/bin/pkc /tmp/after main
#   diff -r /tmp/before /tmp/after && echo identical
# The inputs are the .pk files of git revision REV (default: the work tree),
# so that edited tests do not count as changes. Each file/mode pair writes its
# output, its diagnostics and its exit status, so errors must stay the same
# too. Run from the repository root. (test/fuzz/known holds inputs that time
# out on purpose; they are left out.)
set -u
usage='usage: snapshot.sh PKC OUTDIR [REV]'
pkc=$(realpath "${1:?$usage}")
out=$(realpath -m "${2:?$usage}")
rev=${3:-}
mkdir -p "$out"
list=$(mktemp)
if [ -n "$rev" ]; then
	src=$(mktemp -d)
	trap 'rm -rf "$src" "$list"' EXIT
	git -c core.quotePath=false ls-tree -r --name-only "$rev" >"$list"
	git archive "$rev" | tar -x -C "$src"
	cd "$src" || exit 1
else
	trap 'rm -f "$list"' EXIT
	git -c core.quotePath=false ls-files >"$list"
fi
modes='ir:--emit=ir
llvm:--emit=llvm
asm:--emit=asm
sm90a-ptx:--target=sm_90a --emit=ptx
sm90a-mma-ptx:--target=sm_90a --gpu-mma-sync --emit=ptx
sm90a-nvvm:--target=sm_90a --emit=nvvm
sm80-ptx:--target=sm_80 --emit=ptx
sm80-nvvm:--target=sm_80 --emit=nvvm
emu-nvvm:--target=sm_90a --emit=nvvm PKC_GPU_EMULATE
header:--emit=obj -H'
grep '\.pk$' "$list" | grep -v '^test/fuzz/known/' | while read -r pk; do
	name=$(echo "$pk" | tr / _)
	dir=$(dirname "$pk")
	echo "$modes" | while IFS=: read -r tag flags; do
		f="$out/$name.$tag"
		emu=
		case $flags in *PKC_GPU_EMULATE) emu=1; flags=${flags% PKC_GPU_EMULATE};; esac
		case $tag in
		header)	# the object holds build paths; the header is the stable output
			timeout 60 "$pkc" -I "$dir" --emit=obj "$pk" -o "$out/tmp.o" \
				-H "$f" >/dev/null 2>"$f.err"; echo $? >"$f.rc"; rm -f "$out/tmp.o";;
		*)	if [ -n "$emu" ]; then
				PKC_GPU_EMULATE=1 timeout 60 "$pkc" -I "$dir" $flags "$pk" -o - >"$f" 2>"$f.err"
			else
				timeout 60 "$pkc" -I "$dir" $flags "$pk" -o - >"$f" 2>"$f.err"
			fi
			echo $? >"$f.rc";;
		esac
	done
done
echo "$(ls "$out" | wc -l) files in $out"
