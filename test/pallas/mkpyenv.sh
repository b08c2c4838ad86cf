#!/usr/bin/env bash
# mkpyenv.sh DIR REQUIREMENTS - creates the Python virtualenv that the Pallas
# fidelity tests (test/pallas/) run JAX in: `make pyenv` calls it for
# build/pyenv.  pkc itself never needs Python; only these tests do.
#
# jax 0.11.2 needs Python >= 3.12.  The interpreter is, in this order:
#   $PYENV_PYTHON (if set: it must work, nothing else is tried);
#   python3.12, python3.13, python3.14 on PATH;
#   pyenv's own installs ($PYENV_ROOT/versions/3.1[2-9]*: a pyenv shim only
#     answers for the selected versions);
#   /usr/local/bin, /usr/bin python3.1x;
#   python3 if it is >= 3.12;
#   as root with apt-get: Debian/Ubuntu's python3.1x-venv, where the
#     distribution has one (Debian 12 has only 3.11).
# Otherwise it fails and says what is needed.
#
# The env is built in DIR.tmp and renamed to DIR only once every package
# imports, so an interrupted run never leaves a half-made DIR behind; DIR/.stamp
# is what make checks.
set -euo pipefail

dir=${1:?usage: mkpyenv.sh DIR REQUIREMENTS}
req=${2:?usage: mkpyenv.sh DIR REQUIREMENTS}
req=$(cd "$(dirname "$req")" && pwd)/$(basename "$req")

say() { echo "mkpyenv: $*" >&2; }

# Prints the interpreter's path if it runs, is >= 3.12 and can make a venv.
usable() {
	local py=$1
	"$py" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 12) else 1)' \
		>/dev/null 2>&1 || return 1
	"$py" -c 'import sys; print(sys.executable)'
}

find_python() {
	local c
	if [[ -n "${PYENV_PYTHON:-}" ]]; then
		usable "$PYENV_PYTHON" && return 0
		say "PYENV_PYTHON=$PYENV_PYTHON is not a working Python >= 3.12 with venv and ensurepip"
		return 1
	fi
	for c in python3.12 python3.13 python3.14; do
		command -v "$c" >/dev/null 2>&1 && usable "$c" && return 0
	done
	local root=${PYENV_ROOT:-$HOME/.pyenv}
	for c in "$root"/versions/3.1[2-9]*/bin/python3 /usr/local/bin/python3.1[2-9] \
		/usr/bin/python3.1[2-9]; do
		[[ -x "$c" ]] && usable "$c" && return 0
	done
	command -v python3 >/dev/null 2>&1 && usable python3 && return 0
	return 1
}

if ! py=$(find_python); then
	if [[ -z "${PYENV_PYTHON:-}" && $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
		say "no Python >= 3.12 found; asking apt for one"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq || true
		for v in 3.12 3.13 3.14; do
			if apt-cache policy "python$v-venv" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
				apt-get install -y -qq --no-install-recommends "python$v" "python$v-venv" && break
			fi
		done
		py=$(find_python) || py=
	else
		py=
	fi
fi
if [[ -z "$py" ]]; then
	say "error: the Pallas fidelity tests need Python >= 3.12 with the venv module"
	say "       (jax==0.11.2 and jaxlib==0.11.2 from PyPI support no older Python)."
	say "       Install one (e.g. 'pyenv install 3.12', or python3.12-venv from your"
	say "       distribution) and put python3.12 on PATH, or run"
	say "       'make pyenv PYENV_PYTHON=/path/to/python3.12'."
	exit 1
fi
say "using $py ($("$py" -c 'import platform; print(platform.python_version())'))"

tmp=$dir.tmp
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$dir")"
"$py" -m venv "$tmp"

# pip retries each download itself (--retries, --timeout); the whole install
# is tried up to three times more, for failures pip does not retry (a
# truncated wheel, a registry that answered 5xx to the index).
pip=("$tmp/bin/python" -m pip --disable-pip-version-check --no-input --no-cache-dir
     --retries 10 --timeout 60)
ok=0
for attempt in 1 2 3; do
	if "${pip[@]}" install -q -r "$req"; then
		ok=1
		break
	fi
	say "pip install failed (attempt $attempt of 3)"
	sleep $((attempt * 10))
done
if ((!ok)); then
	say "error: could not install $req into $tmp (see pip's messages above)"
	exit 1
fi

# The env works only if the pinned jax imports and interpret mode runs.
JAX_PLATFORMS=cpu "$tmp/bin/python" - <<'EOF'
import jax, jaxlib, numpy as np
import jax.numpy as jnp
from jax.experimental import pallas as pl
assert jax.__version__ == "0.11.2" and jaxlib.__version__ == "0.11.2", (jax.__version__, jaxlib.__version__)
def k(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0
out = pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32), interpret=True)(jnp.arange(8.0, dtype=jnp.float32))
assert np.array_equal(np.asarray(out), np.arange(1.0, 9.0, dtype=np.float32)), out
EOF

# A venv records its own path in bin/ scripts and pyvenv.cfg; python itself
# finds its site-packages relative to the interpreter, so rename and then
# rewrite the scripts' paths.
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
abs_tmp=$(cd "$(dirname "$tmp")" && pwd)/$(basename "$tmp")
abs_dir=$(cd "$dir" && pwd)
grep -rlF "$abs_tmp" "$dir/bin" "$dir/pyvenv.cfg" 2>/dev/null | while read -r f; do
	[[ -f "$f" && ! -L "$f" ]] && sed -i "s|$abs_tmp|$abs_dir|g" "$f"
done
"$dir/bin/python" -c 'import jax' # still imports after the move
"$dir/bin/python" -m pip --disable-pip-version-check freeze >"$dir/.stamp"
say "made $dir: $(grep -E '^(jax|jaxlib|numpy)==' "$dir/.stamp" | tr '\n' ' ')"
