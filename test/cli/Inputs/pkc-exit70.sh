#!/bin/sh
# A stand-in for pkc that always fails as an internal error does (exit 70):
# fuzz-regressions.test checks that replay.py reports it.
echo "pkc: internal error: stand-in" >&2
exit 70
