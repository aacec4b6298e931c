#!/usr/bin/env bash
# Builds the container images of every service with podman, from what `./mvnw package` made, on base images made on
# this machine (no public registry is reachable here). docs/deployment.md, "Container images", says what differs
# from the production images.
#
#   scripts/images.sh            JVM images of every service (REPO/<module>:local-jvm), and payments-api's native image
#                                (REPO/payments-api:local) when its executable exists (payments-api/target/*-runner)
#   NATIVE=1 scripts/images.sh   native images of every service whose executable exists; NATIVE=MODULE,... those
#                                (a missing executable is then an error)
#   SKIP_BUILD=1                 use the jars and SBOMs in <module>/target as they are (no ./mvnw package)
#   MODULES="m1 m2"              only these modules' images (e.g. one service changed under a played stack)
#   REBUILD_BASE=1               make the base images again (e.g. for Debian's security updates)
#   BASES_ONLY=1                 only make the two base images (CI makes them while its tests run)
#
# Bases: REPO/base-jvm:<hash> (Debian bookworm minbase + openjdk-17-jre-headless + run-java.sh) and
# REPO/base-native:<hash> (minbase + ca-certificates), made with mmdebstrap once per content hash of
# containers/packages and containers/run-java.sh. Images are built with the modules' own src/main/docker/Dockerfile.*
# (BASE_IMAGE set to the local base); each carries the OCI labels source, revision, version, and the build's CycloneDX
# SBOM at /sbom/bom.cdx.json, also written beside it to .local/images/sbom/<module>-<tag>.cdx.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
STATE=$ROOT/.local/images
REPO=${IMAGE_REPO:-localhost/payments}
TAG=${IMAGE_TAG:-local}
read -ra MODULES <<<"${MODULES:-payments-api outbox-relay refunds-worker webhook-delivery reconciler psp-sandbox}"
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

log() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { printf 'images: %s\n' "$*" >&2; exit 1; }

command -v podman >/dev/null || die "needs podman (apt-get install podman runc; docs/deployment.md, \"Container images\")"
command -v mmdebstrap >/dev/null || die "needs mmdebstrap (apt-get install mmdebstrap)"
mkdir -p "$STATE/sbom"

# base KIND: makes REPO/base-KIND:<content hash> unless it exists; prints its name
base() {
  local kind=$1 packages hash image tar
  packages=$(awk -v kind="$kind" '$1 == kind { $1 = ""; print }' containers/packages | xargs | tr ' ' ',')
  [[ -n $packages ]] || die "no packages for $kind in containers/packages"
  # the content hash: the packages, this function (mmdebstrap's and podman's arguments) and run-java.sh
  hash=$({ echo "$packages"; declare -f base; [[ $kind != jvm ]] || cat containers/run-java.sh; } | sha256sum | cut -c1-12)
  image=$REPO/base-$kind:$hash
  if [[ -n ${REBUILD_BASE:-} ]] || ! podman image exists "$image"; then
    tar=$STATE/base-$kind.tar
    log "making the $kind base with mmdebstrap ($packages)" >&2
    # No documentation in the image (copyright files kept; /usr/share/man stays: openjdk's postinst links into it);
    # apt's lists are removed by mmdebstrap.
    mmdebstrap --quiet --variant=minbase --include="$packages" \
      --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
      bookworm "$tar" \
      "deb $DEBIAN_MIRROR bookworm main" "deb $DEBIAN_MIRROR bookworm-updates main" \
      "deb $DEBIAN_SECURITY_MIRROR bookworm-security main" >&2
    podman import --quiet --change 'ENV LANG=C.UTF-8' --change 'CMD []' \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$tar" "$image" >/dev/null
    rm -f "$tar"
    if [[ $kind == jvm ]]; then
      # The entrypoint of UBI's openjdk runtime image, so that the modules' Dockerfile.jvm run unchanged on it
      printf 'FROM %s\nCOPY --chmod=0755 run-java.sh /opt/jboss/container/java/run/run-java.sh\n%s\n' "$image" \
        'ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64' | podman build --quiet -f - -t "$image" containers >/dev/null
    fi
  fi
  echo "$image"
}

# runtime_base BASE MODULE LIBRARIES: BASE plus the shared libraries (absolute paths, one a line) that an executable of
# the test toolchain loads from outside the system's library directories, in /opt/native-runtime/lib on the loader's
# path (their build-time directory may be under /tmp, which the pods mount an emptyDir over); prints its name
runtime_base() {
  local base=$1 module=$2 libraries=$3 context=$STATE/runtime-$2 hash image
  rm -rf "$context"
  mkdir -p "$context/lib"
  while read -r library; do cp -L "$library" "$context/lib/"; done <<<"$libraries"
  hash=$({ echo "$base"; (cd "$context/lib" && sha256sum -- *); } | sha256sum | cut -c1-12)
  image=$REPO/base-native-runtime:$hash
  if ! podman image exists "$image"; then
    printf 'FROM %s\nCOPY lib/ /opt/native-runtime/lib/\nENV LD_LIBRARY_PATH=/opt/native-runtime/lib\n' "$base" \
      >"$context/Containerfile"
    podman build --quiet -t "$image" "$context" >/dev/null
  fi
  rm -rf "$context"
  echo "$image"
}

if [[ -n ${BASES_ONLY:-} ]]; then
  base native >/dev/null & native_base_pid=$!
  base jvm >/dev/null
  wait "$native_base_pid" || die "making the native base failed"
  exit 0
fi

native() { [[ ${NATIVE:-} == 1 || ",${NATIVE:-}," == *",$1,"* ]]; }
executable() { compgen -G "$ROOT/$1/target/*-runner" | head -n 1; }

if [[ -z ${SKIP_BUILD:-} ]]; then
  log "building the jars and SBOMs (./mvnw package -DskipTests)"
  ./mvnw -B -q -ntp package -DskipTests -pl "$(IFS=,; echo "${MODULES[*]}")" -am
fi

revision=$(git rev-parse HEAD)
[[ -z $(git status --porcelain --untracked-files=no) ]] || revision+="-dirty"
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' pom.xml | head -n 1)
source_url=${IMAGE_SOURCE:-$(git config --get remote.origin.url || echo "file://$ROOT")}
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# build MODULE KIND(jvm|native) BASE TAG
build() {
  local module=$1 kind=$2 base=$3 tag=$4 dockerfile
  dockerfile=src/main/docker/Dockerfile.$([[ $kind == jvm ]] && echo jvm || echo native-micro)
  [[ -f $module/target/bom.json ]] || die "$module/target/bom.json is missing: run without SKIP_BUILD"
  log "$REPO/$module:$tag ($kind, $dockerfile)"
  podman build --quiet --layers -f "$dockerfile" --build-arg BASE_IMAGE="$base" \
    --label org.opencontainers.image.title="$module" \
    --label org.opencontainers.image.source="$source_url" \
    --label org.opencontainers.image.revision="$revision" \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.created="$created" \
    --label org.opencontainers.image.base.name="$base" \
    --label payments.sbom=/sbom/bom.cdx.json \
    -t "$REPO/$module:$tag" "$module" >/dev/null
  cp "$module/target/bom.json" "$STATE/sbom/$module-$tag.cdx.json"
}

natives=()
for module in "${MODULES[@]}"; do
  if native "$module"; then
    [[ -n $(executable "$module") ]] || die "NATIVE: no executable in $module/target (docs/deployment.md, \"Native images\")"
    natives+=("$module")
  elif [[ $module == payments-api && -z ${NATIVE:-} && -n $(executable "$module") ]]; then
    natives+=("$module")
  fi
done
# Both bases side by side when both are to be made (mostly downloads and dpkg)
((${#natives[@]})) && { base native >"$STATE/native-base" & native_base_pid=$!; }

jvm_base=$(base jvm)
for module in "${MODULES[@]}"; do
  [[ -f $module/target/quarkus-app/quarkus-run.jar ]] || die "$module/target/quarkus-app is missing: run without SKIP_BUILD"
  build "$module" jvm "$jvm_base" "$TAG-jvm"
done

if ((${#natives[@]})); then
  wait "$native_base_pid" || die "making the native base failed"
  native_base=$(cat "$STATE/native-base")
  for module in "${natives[@]}"; do
    # An executable of the test toolchain (shared/native-toolchain) links the JDK's shared libraries from its
    # GRAALVM_HOME: a layer with them over the base (runtime_base). Mandrel's link none from outside the system.
    base_for=$native_base
    runtime=$(ldd "$(executable "$module")" | awk '$3 ~ /^\// && $3 !~ /^\/(lib|usr\/lib)\// { print $3 }' | sort -u)
    if [[ -n $runtime ]]; then
      base_for=$(runtime_base "$native_base" "$module" "$runtime")
    fi
    build "$module" native "$base_for" "$TAG"
  done
fi

# the images these tags named before (only ours: the label payments.sbom)
podman image prune -f --filter label=payments.sbom >/dev/null
log "images"
podman images --filter "reference=$REPO/*" --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -v '/base-' | sort
