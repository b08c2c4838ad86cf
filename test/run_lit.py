#!/usr/bin/env python3
"""Runs lit over the test suite and ends with exactly one summary line,
"N passed, N failed" (XFAIL and UNSUPPORTED count as neither).  Exits 1 if
any test failed, or if lit could not run at all (reported as one failure)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

PASSED = {"PASS", "FLAKYPASS"}
FAILED = {"FAIL", "XPASS", "UNRESOLVED", "TIMEOUT"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lit", default="/usr/lib/llvm-22/bin/lit")
    ap.add_argument("--pkc", required=True, help="the compiler under test")
    ap.add_argument("--build-dir", required=True, help="where lit puts its outputs")
    ap.add_argument("-j", default="2", help="parallel tests")
    ap.add_argument("tests", nargs="*", default=["test"])
    args = ap.parse_args()

    os.makedirs(args.build_dir, exist_ok=True)
    fd, results = tempfile.mkstemp(prefix="lit-results.", suffix=".json", dir=args.build_dir)
    os.close(fd)
    cmd = [args.lit, "-sv", "-j", args.j, "-o", results,
           "--param", "pkc=" + args.pkc, "--param", "build_dir=" + args.build_dir] + args.tests
    sys.stdout.flush()
    subprocess.call(cmd)
    sys.stdout.flush()
    sys.stderr.flush()

    passed = failed = 0
    try:
        with open(results) as f:
            data = json.load(f)
        for t in data.get("tests", []):
            code = t.get("code")
            if code in PASSED:
                passed += 1
            elif code in FAILED:
                failed += 1
    except (OSError, ValueError) as e:
        print("run_lit: lit produced no results (%s)" % e)
        failed += 1
    finally:
        try:
            os.unlink(results)
        except OSError:
            pass
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
