#!/bin/sh
# npm test's first step: the typecheck (npm run typecheck) and the linter (npm run lint) at the same time. Each keeps
# one core busy for most of its run (the linter about 60 CPU-seconds with its type-aware rules, tsc about 20), so
# side by side they end about 20 s sooner on 2 cores than one after the other (about 50 s). Each one's output is
# printed whole when both have ended, so the two never interleave; the step fails when either fails.
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm run --silent typecheck >"$out/typecheck" 2>&1 &
typecheck=$!
npm run --silent lint >"$out/lint" 2>&1 &
lint=$!
wait "$typecheck"
typecheck_rc=$?
wait "$lint"
lint_rc=$?
cat "$out/typecheck" "$out/lint"
[ "$typecheck_rc" -eq 0 ] || echo "static checks: the typecheck failed (npm run typecheck)" >&2
[ "$lint_rc" -eq 0 ] || echo "static checks: the linter failed (npm run lint)" >&2
[ "$typecheck_rc" -eq 0 ] && [ "$lint_rc" -eq 0 ]
