#!/usr/bin/env bash
# install-deps-stubs.sh DIR - makes DIR/bin, PATH stubs for exercising
# .ci/install-deps on a machine where everything is already installed:
#   dpkg-query  reports every package as not installed
#   apt-get     records its arguments in DIR/apt-get.log
#   curl gpg wget  record their arguments in DIR/download.log and fail
#   id          says root (uid 0), so the install path runs
# The real apt-cache stays: installed packages always have a candidate.
# With NO_CANDIDATE=PKG, an apt-cache stub answers "Candidate: (none)" for
# PKG and passes every other query to the real one.
set -euo pipefail
dir=${1:?usage: install-deps-stubs.sh DIR}
rm -rf "$dir"
mkdir -p "$dir/bin"
: >"$dir/apt-get.log"
: >"$dir/download.log"
cat >"$dir/bin/dpkg-query" <<'STUB'
#!/bin/sh
exit 1
STUB
cat >"$dir/bin/apt-get" <<STUB
#!/bin/sh
echo "apt-get \$*" >>"$dir/apt-get.log"
STUB
for t in curl gpg wget; do
	cat >"$dir/bin/$t" <<STUB
#!/bin/sh
echo "$t \$*" >>"$dir/download.log"
exit 1
STUB
done
cat >"$dir/bin/id" <<'STUB'
#!/bin/sh
echo 0
STUB
if [ -n "${NO_CANDIDATE:-}" ]; then
	real=$(command -v apt-cache)
	cat >"$dir/bin/apt-cache" <<STUB
#!/bin/sh
if [ "\$1" = policy ] && [ "\$2" = "$NO_CANDIDATE" ]; then
	printf '%s:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n' "\$2"
	exit 0
fi
exec "$real" "\$@"
STUB
fi
chmod +x "$dir"/bin/*
