#!/bin/sh
# npm run build: compiles src/ into dist/ (or the folder given first), then copies the two package.json files that
# make src/cli/ a CommonJS scope and src/cli/commands/ an ES-module scope again (see src/cli/main.ts): tsc emits
# main.js as CommonJS, and without them Node would load it as an ES module. Extra arguments go to tsc.
set -eu
out=${1:-dist}
[ $# -gt 0 ] && shift
tsc=$(dirname "$0")/../node_modules/typescript/bin/tsc
node "$tsc" -p tsconfig.build.json --outDir "$out" "$@"
cp src/cli/package.json "$out/cli/package.json"
cp src/cli/commands/package.json "$out/cli/commands/package.json"
