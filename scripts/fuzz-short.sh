#!/usr/bin/env bash
# Runs every Go fuzz target in the module for $FUZZTIME each (go test can fuzz
# only one target of one package at a time). A crash fails the run and leaves
# the failing input under the package's testdata/fuzz/ for `go test` to replay.
# FUZZTIME is an execution count (60000x, 2-5 s a target here), not a
# duration: at a duration's end Go 1.26's coordinator can fail a clean run
# with "context deadline exceeded" (golang/go#75804, fixed in Go 1.27).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-60000x}"
found=0
while IFS= read -r file; do
	pkg="./$(dirname "$file")"
	for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
		found=$((found + 1))
		echo "fuzz $pkg $target ($FUZZTIME)"
		go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" "$pkg" >/tmp/rocelab-fuzz.log 2>&1 || {
			cat /tmp/rocelab-fuzz.log
			echo "fuzz target $target in $pkg failed"
			exit 1
		}
	done
done < <(find . -name "*_test.go" -not -path "./vendor/*" -print0 | xargs -0 grep -l "^func Fuzz" 2>/dev/null | sed "s|^\./||" | sort)
echo "fuzzed $found targets, no crash"
