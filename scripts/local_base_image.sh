#!/usr/bin/env bash
# Build a local Debian bookworm base image for machines that cannot reach an image registry.
#
# Usage: scripts/local_base_image.sh [TAG]   (default local/bookworm-base)
# The image is a debootstrap minbase root with no Python (the Dockerfile installs python3.11
# from Debian when `python3` is missing), made slim as debian:bookworm-slim (python:3.11-slim's own
# base) is, so that image sizes measured here compare with the published image's. The host's CA
# bundle is copied in, so that apt and pip inside a build trust the TLS proxy this machine's
# package downloads go through.
set -euo pipefail

TAG="${1:-local/bookworm-base}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "$TAG already exists" >&2
  exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

ROOT="$(mktemp -d /tmp/stabilitygate-rootfs.XXXXXX)"
trap 'rm -rf "$ROOT"' EXIT
echo "debootstrap bookworm into $ROOT ..." >&2
debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 || {
  tail -n 20 "$ROOT.log" >&2
  exit 1
}
rm -f "$ROOT.log"
# apt sources as the image's own: the main archive and security updates.
cat >"$ROOT/etc/apt/sources.list" <<SOURCES
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
mkdir -p "$ROOT/etc/ssl/certs" "$ROOT/usr/local/share/ca-certificates"
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
# The local CAs also where update-ca-certificates looks, so that installing ca-certificates in a
# build regenerates a bundle that still trusts them.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi
# Slim as the official -slim images are: no documentation, manual pages or translations, now or
# from packages installed later, and apt keeps neither its package caches nor downloaded .debs.
cat >"$ROOT/etc/dpkg/dpkg.cfg.d/docker-slim" <<'SLIM'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
SLIM
find "$ROOT/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
find "$ROOT/usr/share/doc" -mindepth 1 -type d -empty -delete
find "$ROOT/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
rm -rf "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* "$ROOT"/usr/share/lintian/*
cat >"$ROOT/etc/apt/apt.conf.d/docker-clean" <<'CLEAN'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CLEAN
echo 'Acquire::Languages "none";' >"$ROOT/etc/apt/apt.conf.d/docker-no-languages"
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/lib/apt/lists/*
tar -C "$ROOT" -c . | docker import - "$TAG" >/dev/null
echo "built $TAG" >&2
