#!/bin/sh
# bin/pricing-agent of the offline packages (scripts/package.sh): runs the agent with the Node.js runtime that the
# package carries in node/, never the system's, so an install needs no npm, no network and no system Node.js.
# It finds its package through symlinks (the .deb links /usr/bin/pricing-agent to it). The heap flags are those
# of systemd/pricing-agent.service (docs/performance.md): a bounded heap, young generation kept small; and, as
# there, two glibc malloc arenas, not one per thread (memory the threads freed is reused, not kept per thread).
set -eu
root=$(dirname "$(dirname "$(readlink -f "$0")")")
MALLOC_ARENA_MAX=2 exec "$root/node/bin/node" --max-semi-space-size=8 --max-old-space-size=1536 "$root/dist/cli/main.js" "$@"
