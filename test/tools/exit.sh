#!/usr/bin/env bash
# exit.sh N COMMAND [ARGS...] - runs COMMAND and succeeds only if it exits
# with status exactly N.  Its stdout and stderr pass through untouched, so
# in a lit pipeline
#     %exit 1 %pkc -fsyntax-only %s 2>&1 | FileCheck %s
# the 2>&1 (which applies to this script) also covers pkc, which inherits
# our file descriptors.  A mismatch is reported on stderr and exits 1.
if [[ $# -lt 2 || ! "$1" =~ ^[0-9]+$ ]]; then
	echo "usage: exit.sh N COMMAND [ARGS...]" >&2
	exit 2
fi
want=$1
shift
"$@"
got=$?
if [[ $got -ne $want ]]; then
	echo "exit.sh: expected exit status $want, got $got from: $*" >&2
	exit 1
fi
exit 0
