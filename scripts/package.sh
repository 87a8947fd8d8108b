#!/usr/bin/env bash
# npm run package: the offline packages of this checkout's version, in dist-packages/ (or --out DIR):
#   pricing-agent-<version>-linux-<x64|arm64>.tar.gz   Node.js, the compiled agent, production dependencies, the unit,
#                                                    config.example.yaml, bin/pricing-agent and INSTALL.txt
#   pricing-agent_<version>_<amd64|arm64>.deb          the same tree under /usr/lib/pricing-agent (dpkg-deb)
#   SHA256SUMS                                        of the files built by this run
# Options: --arch x64|arm64 (repeatable; default both), --no-deb (tarballs only), --out DIR, --no-check (tsc emits
# without type checking, the same JavaScript in a third of the time: for test/packaging/package.test.ts, inside
# `npm test`, whose `npm run typecheck` has checked the same sources).
#
# Everything comes from the npm registry, through npm's cache when it has it (--prefer-offline): Node.js from the
# node-linux-<arch> package that scripts/use-node.sh names, the dependencies from package-lock.json. Nothing is
# compiled: better-sqlite3 ships its prebuilt binary for each platform inside its npm package, and each package
# keeps only its own platform's. Needs the dev dependencies (npm ci) for tsc, and dpkg-deb for the .debs.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "package: $*" >&2; exit 1; }

archs=()
debs=yes
out=dist-packages
tsc_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ "${2:-}" = x64 ] || [ "${2:-}" = arm64 ] || fail "--arch takes x64 or arm64"; archs+=("$2"); shift 2 ;;
    --no-deb) debs=no; shift ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --no-check) tsc_args=(--noCheck); shift ;;
    *) echo "package: unknown argument $1 (use --arch x64|arm64, --no-deb, --out DIR, --no-check)" >&2; exit 2 ;;
  esac
done
[ ${#archs[@]} -gt 0 ] || archs=(x64 arm64)
if [ "$debs" = yes ] && ! command -v dpkg-deb >/dev/null; then fail "dpkg-deb is missing (apt-get install dpkg-dev), or pass --no-deb"; fi

version=$(node -p 'require("./package.json").version')
# Debian orders "1.0.0~rc.1" before "1.0.0"; npm's "1.0.0-rc.1" would sort after it.
deb_version=${version/-/\~}
# Timestamps of the packed files: the last commit's, so that two builds of one commit give the same files.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/pricing-agent-package-XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "package: compiling pricing-agent $version"
sh scripts/build.sh "$work/app/dist" "${tsc_args[@]}"
cp package.json package-lock.json "$work/app/"
echo "package: installing the production dependencies"
(cd "$work/app" && npm ci --omit=dev --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error)
rm "$work/app/package-lock.json"
# better-sqlite3's C++ sources and SQLite's amalgamation are only for building it from source, which a package never does.
rm -rf "$work/app/node_modules/better-sqlite3/deps" "$work/app/node_modules/better-sqlite3/src" "$work/app/node_modules/better-sqlite3/binding.gyp"
# The dependencies' own development files (.eslintrc, .npmignore, .github/, ...) and npm's .bin links: nothing at run time.
find "$work/app/node_modules" -mindepth 1 -name '.*' ! -name .package-lock.json -prune -exec rm -rf {} +

# The ELF machine of a file (x64 or arm64), so that no package ships another platform's binary by mistake.
elf_arch() {
  node -e 'const b = require("fs").readFileSync(process.argv[1]); const m = b.readUInt16LE(18);
    console.log(b.readUInt32BE(0) === 0x7f454c46 ? ({ 0x3e: "x64", 0xb7: "arm64" })[m] ?? `machine ${m}` : "not ELF")' "$1"
}

# The unit for a tree installed at PREFIX: the launcher (with its own Node.js and the heap flags) instead of
# /usr/bin/node, and no start before the operator wrote the key.
unit_for() {
  sed -e "s|^ExecStart=/usr/bin/node .* /opt/pricing-agent/dist/cli/main.js |ExecStart=$1/bin/pricing-agent |" \
    -e "s|^Documentation=.*|Documentation=file:$1/README.md|" \
    -e '/^After=network-online.target$/a # Packaged: an unconfigured install (no key yet) stays stopped, at boot too, instead of failing in a loop.\nConditionPathExists=/etc/pricing-agent/api-key' \
    systemd/pricing-agent.service
}

# bin/pricing-agent-service for a tree installed at PREFIX: systemd/pricing-agent-cli (a command run as the service
# runs: its user, key credential and state directory) with the package's Node.js and folder as its defaults.
service_cli_for() {
  sed -e "s|^node=\${PRICING_AGENT_NODE:-/usr/bin/node}$|node=\${PRICING_AGENT_NODE:-$1/node/bin/node}|" \
    -e "s|^home=\${PRICING_AGENT_HOME:-/opt/pricing-agent}$|home=\${PRICING_AGENT_HOME:-$1}|" systemd/pricing-agent-cli
}

tree_for() { # ARCH -> builds $work/pricing-agent-$version-linux-ARCH
  local arch=$1 tree=$work/pricing-agent-$version-linux-$1 spec tgz
  mkdir -p "$tree/bin" "$tree/node/bin" "$tree/systemd"
  cp -a "$work/app/." "$tree/"
  find "$tree/node_modules/better-sqlite3/prebuilds" -type f ! -name "linux-$arch.node" -delete
  spec=$(sh scripts/use-node.sh --package Linux "$arch")
  tgz=$(cd "$work" && npm pack --prefer-offline --silent --loglevel=error "$spec")
  tar -xzf "$work/$tgz" -C "$work" package/bin/node package/LICENSE
  mv "$work/package/bin/node" "$tree/node/bin/node"
  mv "$work/package/LICENSE" "$tree/node/LICENSE"
  rm -rf "$work/package" "${work:?}/$tgz"
  for binary in "$tree/node/bin/node" "$tree/node_modules/better-sqlite3/prebuilds/linux-$arch.node"; do
    [ "$(elf_arch "$binary")" = "$arch" ] || fail "$binary is not a Linux $arch binary ($(elf_arch "$binary"))"
  done
  install -m 0755 packaging/pricing-agent.sh "$tree/bin/pricing-agent"
  service_cli_for /opt/pricing-agent >"$tree/bin/pricing-agent-service"
  chmod 0755 "$tree/bin/pricing-agent-service"
  grep -q '^node=${PRICING_AGENT_NODE:-/opt/pricing-agent/node/bin/node}$' "$tree/bin/pricing-agent-service" \
    || fail "systemd/pricing-agent-cli has no node=\${PRICING_AGENT_NODE:-/usr/bin/node} line to rewrite"
  cp config.example.yaml README.md "$tree/"
  cp systemd/pricing-agent.yaml "$tree/systemd/"
  unit_for /opt/pricing-agent >"$tree/systemd/pricing-agent.service"
  grep -q '^ExecStart=/opt/pricing-agent/bin/pricing-agent run ' "$tree/systemd/pricing-agent.service" \
    || fail "systemd/pricing-agent.service has no ExecStart=/usr/bin/node ... line to rewrite"
  sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/g" packaging/INSTALL.txt >"$tree/INSTALL.txt"
  echo "package: $(basename "$tree") carries ${tgz%.tgz}"
}

pack() { # DIR FILE: a tar with root-owned entries in name order and fixed times
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$(dirname "$1")" -cf - "$(basename "$1")" \
    | gzip -n >"$2"
}

deb_for() { # ARCH -> pricing-agent_<version>_<debian arch>.deb from the tree
  local arch=$1 debarch root file
  debarch=$([ "$arch" = x64 ] && echo amd64 || echo arm64)
  root=$work/deb-$arch
  file=$out/pricing-agent_${deb_version}_$debarch.deb
  mkdir -p "$root/DEBIAN" "$root/usr/lib/pricing-agent" "$root/usr/bin" "$root/etc/pricing-agent" \
    "$root/lib/systemd/system" "$root/usr/share/doc/pricing-agent" "$root/usr/share/lintian/overrides"
  local tree=$work/pricing-agent-$version-linux-$arch
  cp -a "$tree/bin" "$tree/node" "$tree/dist" "$tree/node_modules" "$tree/package.json" "$tree/config.example.yaml" \
    "$tree/README.md" "$root/usr/lib/pricing-agent/"
  ln -s ../lib/pricing-agent/bin/pricing-agent "$root/usr/bin/pricing-agent"
  service_cli_for /usr/lib/pricing-agent >"$root/usr/lib/pricing-agent/bin/pricing-agent-service"
  install -m 0644 systemd/pricing-agent.yaml "$root/etc/pricing-agent/pricing-agent.yaml"
  unit_for /usr/lib/pricing-agent >"$root/lib/systemd/system/pricing-agent.service"
  install -m 0644 packaging/deb/copyright "$root/usr/share/doc/pricing-agent/copyright"
  printf 'pricing-agent (%s) stable; urgency=medium\n\n  * Release %s (git %s).\n\n -- %s  %s\n' "$deb_version" "$version" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$maintainer" "$(date -u -R -d "@$epoch")" \
    | gzip -9n >"$root/usr/share/doc/pricing-agent/changelog.gz"
  install -m 0644 packaging/deb/lintian-overrides "$root/usr/share/lintian/overrides/pricing-agent"
  install -m 0755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$root/DEBIAN/"
  echo /etc/pricing-agent/pricing-agent.yaml >"$root/DEBIAN/conffiles"
  cat >"$root/DEBIAN/control" <<CONTROL
Package: pricing-agent
Version: $deb_version
Architecture: $debarch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: libc6 (>= 2.28), libgcc-s1, libstdc++6, passwd
Section: net
Priority: optional
Description: on-premises sync agent for the Pricing Data Public API
 Pushes the CSV and xlsx files dropped in its inbox folders to the pricing
 platform, pulls the approved prices into an outbox that store POS systems
 read, and serves them to tills over HTTP. Carries its own Node.js runtime:
 installs and runs without a network.
CONTROL
  (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
  find "$root" -exec touch -h -d "@$epoch" {} +
  dpkg-deb --root-owner-group -Zgzip --build "$root" "$file" >/dev/null
  echo "package: $file"
}
maintainer='pricing-agent maintainers <pricing-agent@example.com>'

built=()
for arch in "${archs[@]}"; do
  tree_for "$arch"
  pack "$work/pricing-agent-$version-linux-$arch" "$out/pricing-agent-$version-linux-$arch.tar.gz"
  echo "package: $out/pricing-agent-$version-linux-$arch.tar.gz"
  built+=("pricing-agent-$version-linux-$arch.tar.gz")
  if [ "$debs" = yes ]; then
    deb_for "$arch"
    built+=("pricing-agent_${deb_version}_$([ "$arch" = x64 ] && echo amd64 || echo arm64).deb")
  fi
  rm -rf "$work/pricing-agent-$version-linux-$arch" "$work/deb-$arch"
done
(cd "$out" && sha256sum "${built[@]}" >SHA256SUMS)
echo "package: $out/SHA256SUMS"
