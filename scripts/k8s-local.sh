#!/usr/bin/env bash
# A local Kubernetes 1.35 cluster of Docker containers, built here from source: kind with one
# control-plane and three worker nodes (labelled topology.kubernetes.io/zone a, b, c), CoreDNS,
# kube-router as the CNI (pod routes and NetworkPolicy), local-path-provisioner as the default
# StorageClass. Nothing is pulled from an image registry: Kubernetes, etcd, CoreDNS, pause, kind,
# kube-router and local-path-provisioner are built from the Go module proxy; the node image's
# system (systemd, containerd, runc, the CNI plugins, iptables) is a Debian debootstrap; kind's
# own node-image builder assembles the node image. Every build output is cached under
# $K8S_LOCAL_CACHE, keyed by its versions and recipe, so a second `up` builds nothing.
# docs/kubernetes.md tells how it is put together, the build times and the checked runs.
#
# Usage: scripts/k8s-local.sh [options] COMMAND
#   up         build what the cache lacks, create the cluster, install the CNI, wait until every
#              node is Ready, then run `check`; kubectl's default kubeconfig then points at it
#   down       delete the cluster (the cached builds stay)
#   status     the nodes and the pods of kube-system and local-path-storage
#   check      nodes Ready with their zones, CoreDNS answers from a pod, a claim of the default
#              StorageClass bound and written on a worker, a pod reaching a pod on another node,
#              and a NetworkPolicy enforced (prints each check; exit 1 if one failed)
#   load IMAGE...  copy local Docker images into every node (kind load docker-image); each
#              needs an explicit tag other than "latest" (kubelet would try to pull those)
#   build [STEP...]  build (or find cached) everything `up` needs, or only the named steps of
#              `plan` (whose inputs must be built already), create nothing
#   plan       print the versions, each build step with its cache key and state, the kind
#              configuration and the commands `up` runs; builds and starts nothing
# Options:
#   --name NAME   the kind cluster's name (default supermarket; kubectl context kind-NAME)
#   --dry-run     the same as `plan`
#   -h, --help    this help
# Environment: K8S_LOCAL_CACHE (default /var/cache/supermarket-k8s), K8S_LOCAL_GO_JOBS (go build -p,
# default 2), DEBIAN_MIRROR (default http://deb.debian.org/debian).
# Needs root, a running Docker engine (scripts/docker-engine.sh), Go 1.26+, gcc, debootstrap
# (installed when missing). A first build takes about 26 min here on 2 cores, 95 min when others
# share them (docs/kubernetes.md).
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
log() { printf '[k8s-local] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

cd "$(dirname "$0")/.."

# Versions, one place. Kubernetes is the version terraform pins for EKS; etcd, CoreDNS and pause
# are the ones its kubeadm names (checked against `kubeadm config images list` after the build).
readonly KUBERNETES_VERSION=v1.35.4
readonly KIND_VERSION=v0.33.0
readonly ETCD_VERSION=v3.6.6
readonly COREDNS_VERSION=v1.13.1
readonly PAUSE_VERSION=3.10.1
readonly KUBE_ROUTER_VERSION=v2.1.0
readonly LOCAL_PATH_PROVISIONER_VERSION=v0.0.30
readonly CRI_TOOLS_VERSION=v1.34.0
# Debian trixie, not forky: forky's systemd (258 and later) no longer boots on cgroup v1, which
# this machine has; trixie's systemd 257 still does when told to (build_rootfs-node).
readonly DEBIAN_SUITE=trixie
# The image names kind v0.33.0's node-image builder requires (its const_cni.go and
# const_storage.go; build_node_image checks them against kind's source).
readonly KIND_CNI_IMAGE=docker.io/kindest/kindnetd:v20260820-69b56db7
readonly KIND_PROVISIONER_IMAGE=docker.io/kindest/local-path-provisioner:v20260820-69b56db7
readonly KIND_HELPER_IMAGE=docker.io/kindest/local-path-helper:v20260131-7181c60a
readonly KUBE_ROUTER_IMAGE=docker.io/cloudnativelabs/kube-router:$KUBE_ROUTER_VERSION

CACHE="${K8S_LOCAL_CACHE:-/var/cache/supermarket-k8s}"
GO_JOBS="${K8S_LOCAL_GO_JOBS:-2}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cluster=supermarket command="" load_images=() build_steps=()
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --name) cluster="${2:?--name needs a value}"; shift 2 ;;
    --dry-run) command=plan; shift ;;
    up | down | status | check | plan) command="${command:-$1}"; shift ;;
    build) command=build; shift; build_steps=("$@"); break ;;
    load) command=load; shift; load_images=("$@"); break ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
[[ -n "$command" ]] || { usage >&2; die "no command given"; }
readonly CONTEXT="kind-$cluster"

# --- build steps -----------------------------------------------------------------------------
# Each step is a function build_STEP writing into the directory "$1" (created empty for it). Its
# cache key hashes the step's own text, the text of the helpers it calls, the values of the
# upper-case settings these name (versions, image names) and the keys of the steps it uses: a changed
# version or recipe rebuilds that step and what depends on it, nothing else. A step whose output
# directory exists under $CACHE/out is done.
readonly STEPS=(kind kubernetes pause etcd coredns kube-router local-path-provisioner crictl
  rootfs-node rootfs-tools images node-image)
declare -A DEPENDS=(
  [rootfs-node]="crictl"
  [images]="kubernetes pause etcd coredns kube-router local-path-provisioner rootfs-tools"
  [node-image]="kind kubernetes rootfs-node images"
)
readonly HELPERS=(go_build go_compile module_dir debootstrap_rootfs docker_build)

declare -A KEYS=()
key_of() { # STEP: its cache key (16 hex digits)
  local step="$1" dep text helper setting inputs=""
  if [[ -z "${KEYS[$step]:-}" ]]; then
    for dep in ${DEPENDS[$step]:-}; do inputs+="$dep=$(key_of "$dep") "; done
    text="$(declare -f "build_$step")"
    for helper in "${HELPERS[@]}" "${HELPERS[@]}"; do # twice: helpers that helpers name
      [[ "$text" != *"$helper "* || "$text" == *"$helper () "* ]] || text+=$'\n'"$(declare -f "$helper")"
    done
    for setting in $(grep -oE '[$][{]?[A-Z][A-Z0-9_]+' <<<"$text" | tr -d '{$' | sort -u); do
      [[ " CACHE GO_JOBS MIRROR " == *" $setting "* ]] || inputs+="$setting=${!setting} "
    done
    KEYS[$step]="$({ echo "$inputs"; echo "$text"; } | sha256sum | cut -c1-16)"
  fi
  echo "${KEYS[$step]}"
}
out_of() { echo "$CACHE/out/$1-$(key_of "$1")"; }

# present STEP OUT: the cached output of STEP is whole, its images in Docker too (loaded again
# from the cache when they were removed).
present() {
  local image
  [[ -d "$2" ]] || return 1
  case "$1" in
    images)
      while read -r image; do
        docker image inspect "$image" >/dev/null 2>&1 || { docker load -q -i "$2/images.tar" >/dev/null; break; }
      done <"$2/images.txt"
      ;;
    node-image) docker image inspect "$(node_image)" >/dev/null 2>&1 ;;
  esac
}

# run_step STEP: builds STEP unless its output is cached, and says how long it took.
run_step() {
  local step="$1" out tmp status started=$SECONDS
  out="$(out_of "$step")"
  if present "$step" "$out"; then
    log "$step: cached ($out)"
    return 0
  fi
  tmp="$out.partial"
  rm -rf "$tmp" "$out" && mkdir -p "$tmp"
  log "$step: building"
  # In a subshell of its own, not behind ||, so that errexit holds inside the step.
  set +e
  (set -e; "build_$step" "$tmp")
  status=$?
  set -e
  ((status == 0)) || die "$step: build failed (its partial output is in $tmp)"
  mv "$tmp" "$out"
  printf '%s %s %s %d\n' "$(date -u +%FT%TZ)" "$step" "$(key_of "$step")" $((SECONDS - started)) >>"$CACHE/build-times.log"
  log "$step: built in $((SECONDS - started)) s"
}

# module_dir MODULE VERSION: a writable copy of the module's source from the Go module proxy.
module_dir() {
  local module="$1" version="$2" src="$CACHE/src/${1//\//_}@$2" dir
  if [[ ! -d "$src" ]]; then
    dir="$(go mod download -json "$module@$version" | jq -r .Dir)"
    [[ -d "$dir" ]] || die "the Go module proxy has no $module@$version"
    rm -rf "$src.partial" && mkdir -p "$(dirname "$src")"
    cp -r "$dir" "$src.partial" && chmod -R u+w "$src.partial"
    mv "$src.partial" "$src"
  fi
  echo "$src"
}

# go_build DIR OUT PACKAGE... [-- LDFLAGS]: go build of packages of the module in DIR into OUT.
# Replacements of the module by local paths are dropped (the replaced modules are published at
# the versions it requires).
go_build() {
  local dir="$1" out="$2" ldflags="" packages=() replaced
  shift 2
  while (($#)) && [[ "$1" != -- ]]; do packages+=("$1"); shift; done
  [[ "${1:-}" != -- ]] || ldflags="$2"
  for replaced in $(cd "$dir" && go mod edit -json | jq -r '.Replace[]? | select(.New.Path | startswith(".")) | .Old.Path'); do
    (cd "$dir" && go mod edit -dropreplace "$replaced")
  done
  go_compile "$dir" "$out" "$ldflags" "${packages[@]}"
}

# go_compile DIR OUT LDFLAGS PACKAGE...: static binaries, reproducible paths, GO_JOBS compilers
# at low priority; a newer Go toolchain is fetched only when the module asks for one.
go_compile() {
  local dir="$1" out="$2" ldflags="$3" wanted have
  shift 3
  wanted="$(awk '$1 == "go" { print $2; exit }' "$dir/go.mod")"
  have="$(go env GOVERSION)" && have="${have#go}"
  (
    cd "$dir"
    export CGO_ENABLED=0 GOFLAGS="-trimpath -mod=mod" GOWORK=off
    if [[ "$(printf '%s\n%s\n' "$wanted" "$have" | sort -V | tail -n 1)" != "$have" ]]; then
      export GOTOOLCHAIN=go1.27.3
    fi
    nice -n 10 go build -p "$GO_JOBS" -ldflags "-s -w $ldflags" -o "$out/" "$@"
  )
}

# debootstrap_rootfs ROOT SUITE PACKAGES: a Debian SUITE root file system with PACKAGES (comma
# separated) in the directory ROOT. Testing's Release file may be past its validity on a frozen
# mirror; debootstrap still checks its signature.
debootstrap_rootfs() {
  local root="$1" suite="$2" include="$3"
  command -v debootstrap >/dev/null 2>&1 || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  rm -rf "$root"
  nice debootstrap --variant=minbase --include="$include" "$suite" "$root" "$MIRROR" \
    /usr/share/debootstrap/scripts/sid >"$root.log" 2>&1 || { tail -n 20 "$root.log" >&2; return 1; }
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/*
}

# docker_build IMAGE CONTEXT: builds CONTEXT (a Dockerfile beside what it copies) as IMAGE
# without BuildKit, which would look for its own frontend image in a registry.
docker_build() {
  local output
  output="$(DOCKER_BUILDKIT=0 docker build -q -t "$1" "$2" 2>&1)" || { echo "$output" >&2; return 1; }
}

build_kind() {
  go_build "$(module_dir sigs.k8s.io/kind "$KIND_VERSION")" "$1" .
}

# Kubernetes' go.mod replaces its staging modules (k8s.io/api, client-go, ...) by directories the
# module's zip leaves out; they are published as k8s.io/NAME v0.MINOR.PATCH, which fill them in.
# The version variables are those hack/lib/version.sh sets in a release build.
build_kubernetes() {
  local src module staging="v0.${KUBERNETES_VERSION#v1.}" ldflags="" package minor
  src="$(module_dir k8s.io/kubernetes "$KUBERNETES_VERSION")"
  for module in $(cd "$src" && go mod edit -json | jq -r '.Replace[] | select(.New.Path | startswith("./staging/")) | .Old.Path'); do
    if [[ ! -d "$src/staging/src/$module" ]]; then
      mkdir -p "$src/staging/src/$module"
      cp -r "$(go mod download -json "$module@$staging" | jq -r .Dir)/." "$src/staging/src/$module/"
      chmod -R u+w "$src/staging/src/$module"
    fi
  done
  minor="${KUBERNETES_VERSION#v1.}" && minor="${minor%%.*}"
  for package in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldflags+=" -X $package.gitVersion=$KUBERNETES_VERSION -X $package.gitMajor=1 -X $package.gitMinor=$minor"
    ldflags+=" -X $package.gitTreeState=clean -X $package.buildDate=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | jq -r .Time)"
  done
  # Not go_build: that would drop the staging replacements.
  go_compile "$src" "$1" "$ldflags" ./cmd/kubeadm ./cmd/kubelet ./cmd/kubectl \
    ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/kube-proxy
}

# The pause container is Kubernetes' own C program (build/pause), linked statically.
build_pause() {
  local src
  command -v gcc >/dev/null 2>&1 || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null
  }
  src="$(module_dir k8s.io/kubernetes "$KUBERNETES_VERSION")/build/pause/linux/pause.c"
  gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION" -o "$1/pause" "$src"
  strip "$1/pause"
}

build_etcd() {
  go_build "$(module_dir go.etcd.io/etcd/server/v3 "$ETCD_VERSION")" "$1" .
  mv "$1/server" "$1/etcd"
}

build_coredns() {
  go_build "$(module_dir github.com/coredns/coredns "$COREDNS_VERSION")" "$1" . -- \
    "-X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION"
}

build_kube-router() {
  local src
  src="$(module_dir github.com/cloudnativelabs/kube-router/v2 "$KUBE_ROUTER_VERSION")"
  go_build "$src" "$1" ./cmd/kube-router -- \
    "-X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$KUBE_ROUTER_VERSION"
  cp "$src/build/image-assets/cni-install" "$src/build/image-assets/iptables-wrapper-installer.sh" "$1/"
  sed -e "s|image: docker.io/cloudnativelabs/kube-router\$|image: $KUBE_ROUTER_IMAGE|" \
    -e 's|imagePullPolicy: Always|imagePullPolicy: IfNotPresent|' \
    "$src/daemonset/kubeadm-kuberouter.yaml" >"$1/kube-router.yaml"
}

build_local-path-provisioner() {
  go_build "$(module_dir github.com/rancher/local-path-provisioner "$LOCAL_PATH_PROVISIONER_VERSION")" "$1" . -- \
    "-X main.VERSION=$LOCAL_PATH_PROVISIONER_VERSION"
}

# crictl, which kind uses on the nodes (kind load asks it which images a node has); Debian has no
# package of it, and v1.35 is not on the Go module proxy.
build_crictl() {
  go_build "$(module_dir sigs.k8s.io/cri-tools "$CRI_TOOLS_VERSION")" "$1" ./cmd/crictl -- \
    "-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRI_TOOLS_VERSION"
}

# The node's system: kind's base image (images/base/Dockerfile of kind's module) made from
# Debian's packages instead of its own builds of containerd, runc and the CNI plugins. systemd
# 256 and 257 boot on cgroup v1 only with SYSTEMD_CGROUP_ENABLE_LEGACY_FORCE=1 on the kernel
# command line, which in a container is PID 1's own arguments: /sbin/init passes it. kind's
# node-image builder sets the entrypoint to kind's entrypoint script, which ends in /sbin/init.
build_rootfs-node() {
  local root="$1/root" files unit binary
  debootstrap_rootfs "$root" "$DEBIAN_SUITE" systemd,systemd-sysv,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,curl,jq,procps,containerd,runc,containernetworking-plugins
  files="$(module_dir sigs.k8s.io/kind "$KIND_VERSION")/images/base/files"
  install -m 0755 "$files"/usr/local/bin/* "$(out_of crictl)/crictl" "$root/usr/local/bin/"
  mkdir -p "$root/kind/bin" "$root/etc/containerd" "$root/etc/systemd/system/kubelet.service.d" "$root/etc/kubernetes/manifests"
  install -m 0644 "$files"/kind/*.txt "$root/kind/" && install -m 0755 "$files"/kind/bin/* "$root/kind/bin/"
  install -m 0644 "$files/etc/crictl.yaml" "$root/etc/"
  install -m 0644 "$files"/etc/containerd/* "$root/etc/containerd/"
  install -m 0644 "$files"/etc/default/* "$root/etc/default/"
  install -m 0644 "$files"/etc/sysctl.d/* "$root/etc/sysctl.d/"
  for unit in "$files"/etc/systemd/system/*; do [[ -f "$unit" ]] && install -m 0644 "$unit" "$root/etc/systemd/system/"; done
  install -m 0644 "$files"/etc/systemd/system/kubelet.service.d/* "$root/etc/systemd/system/kubelet.service.d/"
  # Debian installs containerd in /usr/bin and the CNI plugins in /usr/lib/cni; kind's units and
  # kubelet look in /usr/local/bin and /opt/cni/bin. The plugins are hard links, not symbolic
  # ones: CNI installers (kube-router's) look at /opt/cni/bin from their own container.
  for binary in containerd ctr containerd-shim-runc-v2; do ln -sf "/usr/bin/$binary" "$root/usr/local/bin/$binary"; done
  mkdir -p "$root/opt/cni/bin" && cp -l "$root"/usr/lib/cni/* "$root/opt/cni/bin/"
  # The sandbox image is the pause kubeadm names, so one pause image serves both.
  sed -i "s|registry.k8s.io/pause:[0-9.]*|registry.k8s.io/pause:$PAUSE_VERSION|" "$root/etc/containerd/config.toml"
  chroot "$root" sh -euc '
    ctr oci spec | jq ".hooks.createContainer[.hooks.createContainer | length] |= . + {\"path\": \"/kind/bin/mount-product-files.sh\"}" \
      | jq "del(.process.rlimits)" >/etc/containerd/cri-base.json
    find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
    rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
      /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
      /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
    echo ReadKMsg=no >>/etc/systemd/journald.conf
    rm -f /sbin/init && printf "#!/bin/sh\nexec /usr/lib/systemd/systemd SYSTEMD_CGROUP_ENABLE_LEGACY_FORCE=1 \"\$@\"\n" >/sbin/init
    chmod 755 /sbin/init
    systemctl enable kubelet.service containerd.service undo-mount-hacks.service
    systemctl mask systemd-binfmt.service
  '
  tar -C "$root" -cf "$1/rootfs.tar" . && rm -rf "$root"
}

# The base of the images that need a shell or iptables: kube-proxy, kube-router, the
# local-path helper, and the pods of `check`. iptables-wrapper (kube-router's copy of
# kubernetes-sigs/iptables-wrappers) picks legacy or nft as the node uses, as upstream images do.
build_rootfs-tools() {
  local root="$1/root" wrapper
  debootstrap_rootfs "$root" "$DEBIAN_SUITE" iptables,nftables,ipset,iproute2,conntrack,busybox,ca-certificates
  wrapper="$(module_dir github.com/cloudnativelabs/kube-router/v2 "$KUBE_ROUTER_VERSION")/build/image-assets/iptables-wrapper-installer.sh"
  install -m 0755 "$wrapper" "$root/iptables-wrapper-installer.sh"
  chroot "$root" /iptables-wrapper-installer.sh --no-sanity-check  # removes itself
  tar -C "$root" -cf "$1/rootfs.tar" . && rm -rf "$root"
}

# Every image the cluster runs, under the name kind and kubeadm give it, saved as one archive.
build_images() {
  local dir="$1" context tools kube
  tools="supermarket-k8s/tools:$(key_of rootfs-tools)" kube="$(out_of kubernetes)"
  docker import --change 'CMD ["sh"]' "$(out_of rootfs-tools)/rootfs.tar" "$tools" >/dev/null
  image() { # NAME BASE ENTRYPOINT FILE...: an image of FILEs in /usr/local/bin on BASE
    local name="$1" base="$2" entrypoint="$3" file
    shift 3
    context="$(mktemp -d)"
    { echo "FROM $base"; echo 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'; } >"$context/Dockerfile"
    for file in "$@"; do
      cp "$file" "$context/" && echo "COPY $(basename "$file") /usr/local/bin/" >>"$context/Dockerfile"
    done
    [[ -z "$entrypoint" ]] || echo "ENTRYPOINT [\"$entrypoint\"]" >>"$context/Dockerfile"
    docker_build "$name" "$context" && rm -rf "$context"
    echo "$name" >>"$dir/images.txt"
  }
  for binary in kube-apiserver kube-controller-manager kube-scheduler; do
    image "registry.k8s.io/$binary:$KUBERNETES_VERSION" scratch "/usr/local/bin/$binary" "$kube/$binary"
  done
  image "registry.k8s.io/kube-proxy:$KUBERNETES_VERSION" "$tools" /usr/local/bin/kube-proxy "$kube/kube-proxy"
  image "registry.k8s.io/etcd:${ETCD_VERSION#v}-0" scratch /usr/local/bin/etcd "$(out_of etcd)/etcd"
  image "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" scratch /usr/local/bin/coredns "$(out_of coredns)/coredns"
  image "registry.k8s.io/pause:$PAUSE_VERSION" scratch /usr/local/bin/pause "$(out_of pause)/pause"
  image "$KUBE_ROUTER_IMAGE" "$tools" /usr/local/bin/kube-router "$(out_of kube-router)"/{kube-router,cni-install}
  image "$KIND_PROVISIONER_IMAGE" scratch /usr/local/bin/local-path-provisioner \
    "$(out_of local-path-provisioner)/local-path-provisioner"
  image "$KIND_HELPER_IMAGE" "$tools" ""
  echo "$tools" >>"$dir/images.txt"
  # kube-router's cni-install copies plugins the node lacks from /usr/libexec/cni; the node has them.
  mapfile -t images <"$dir/images.txt"
  docker save "${images[@]}" -o "$dir/images.tar"
}

# kind build node-image --type file takes a Kubernetes server release tarball: the binaries
# kubeadm, kubelet, kubectl, the version, and kube-{apiserver,controller-manager,scheduler,proxy}.tar
# image archives, which it loads into the node's containerd; every other image it requires (etcd,
# CoreDNS, pause, its CNI and storage images) it pulls unless an archive already holds it. So
# kube-proxy.tar carries every image of `images`, under the exact names kind asks for (docker.io/
# written out: docker save shortens those, and kind compares names as written). kind's own CNI,
# kindnetd, is not on the Go module proxy; the name kind requires for it is given to the
# kube-router image, which the cluster configuration installs instead (kind's default CNI off).
build_node-image() {
  local dir="$1" kube tree kind_src name
  kube="$(out_of kubernetes)" kind_src="$(module_dir sigs.k8s.io/kind "$KIND_VERSION")"
  for name in "$KIND_CNI_IMAGE" "$KIND_PROVISIONER_IMAGE" "$KIND_HELPER_IMAGE"; do
    grep -rqF "\"$name\"" "$kind_src/pkg/build/nodeimage/" || die "kind $KIND_VERSION does not name $name"
  done
  tree="$dir/tree" && mkdir -p "$tree/kubernetes/server/bin" "$dir/archive"
  echo "$KUBERNETES_VERSION" >"$tree/kubernetes/version"
  cp "$kube/kubeadm" "$kube/kubelet" "$kube/kubectl" "$tree/kubernetes/server/bin/"
  for name in kube-apiserver kube-controller-manager kube-scheduler; do
    docker save "registry.k8s.io/$name:$KUBERNETES_VERSION" -o "$tree/kubernetes/server/bin/$name.tar"
  done
  tar -C "$dir/archive" -xf "$(out_of images)/images.tar"
  # kind reads the names from the first index file of an archive: from manifest.json only its
  # first image's, from repositories all of them. So repositories goes first, and both name the
  # images in full (containerd's import reads manifest.json).
  jq --arg cni "$KIND_CNI_IMAGE" --arg router "$KUBE_ROUTER_IMAGE" '
      map(.RepoTags |= (map(if test("^[^/]+\\.[^/]+/") then . else "docker.io/" + . end)
        | if any(.[]; . == $router) then . + [$cni] else . end))' \
    "$dir/archive/manifest.json" >"$dir/manifest.json"
  jq --arg cni "$KIND_CNI_IMAGE" --arg router "$KUBE_ROUTER_IMAGE" '
      with_entries(.key |= (if test("^[^/]+\\.[^/]+/") then . else "docker.io/" + . end))
      | .[$cni | sub(":[^:]*$"; "")] = {($cni | sub("^.*:"; "")): .[$router | sub(":[^:]*$"; "")][$router | sub("^.*:"; "")]}' \
    "$dir/archive/repositories" >"$dir/repositories"
  mv "$dir/manifest.json" "$dir/repositories" "$dir/archive/"
  (cd "$dir/archive" && find . -mindepth 1 -maxdepth 1 ! -name manifest.json ! -name repositories -printf '%P\0' \
    | tar -cf "$tree/kubernetes/server/bin/kube-proxy.tar" repositories manifest.json --null -T -)
  tar -C "$tree" -cf - kubernetes | gzip -1 >"$dir/kubernetes-server-linux-amd64.tar.gz"
  rm -rf "$tree" "$dir/archive"
  # (docker import takes no STOPSIGNAL; kind removes its nodes with docker rm -f anyway)
  docker import --change 'ENV container=docker' \
    --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
    "$(out_of rootfs-node)/rootfs.tar" "supermarket-k8s/kind-base:$(key_of rootfs-node)" >/dev/null
  kind_ build node-image --type file "$dir/kubernetes-server-linux-amd64.tar.gz" \
    --base-image "supermarket-k8s/kind-base:$(key_of rootfs-node)" --image "$(node_image)"
  rm "$dir/kubernetes-server-linux-amd64.tar.gz"
}

node_image() { echo "supermarket-k8s/node:$KUBERNETES_VERSION-$(key_of node-image)"; }

# --- the cluster -----------------------------------------------------------------------------
kind_config() {
  cat <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
name: $cluster
networking:
  # kube-router is the CNI (kind's kindnetd cannot be built here, see build_node-image).
  disableDefaultCNI: true
  kubeProxyMode: iptables
nodes:
  - role: control-plane
  - role: worker
    labels:
      topology.kubernetes.io/zone: a
  - role: worker
    labels:
      topology.kubernetes.io/zone: b
  - role: worker
    labels:
      topology.kubernetes.io/zone: c
containerdConfigPatches:
  # Where the nodes lack CAP_SYS_RESOURCE (engine_runtime), runc cannot lower a pod's
  # oom_score_adj below containerd's own, and every pod sandbox fails ("can't get final
  # child's PID from pipe"); containerd then keeps them at its own, as kind does for rootless.
  - |-
    [plugins."io.containerd.grpc.v1.cri"]
      restrict_oom_score_adj = true
kubeadmConfigPatches:
  # This machine's cgroups are v1, which kubelet 1.35 refuses unless told otherwise.
  - |
    apiVersion: kubelet.config.k8s.io/v1beta1
    kind: KubeletConfiguration
    failCgroupV1: false
YAML
}

kind_bin() { echo "$(out_of kind)/kind"; }
# kind, with its `docker run`s (the nodes, its node-image build container) on the runtime kind-runc
# where the engine needs it (see engine_runtime).
kind_() {
  engine_runtime
  # The engine's docker, looked up before the shim leads PATH: bash expands the assignments of a
  # command in order, so a lookup beside PATH=shim:... finds the shim, which then runs itself.
  local docker
  docker="$(PATH="${PATH//$CACHE\/docker-shim:/}" command -v docker)"
  PATH="$CACHE/docker-shim:$PATH" K8S_LOCAL_DOCKER="$docker" K8S_LOCAL_RUNTIME="$KIND_RUNTIME" "$(kind_bin)" "$@"
}

# engine_runtime: when the Docker engine runs without some capability (this machine's lacks
# CAP_SYS_RESOURCE), it cannot start privileged containers with runc alone: registers
# scripts/lib/kind-runc.sh as the runtime kind-runc (added to /etc/docker/daemon.json, which
# the engine reloads on SIGHUP without stopping anything) and puts a docker shim before kind
# (scripts/lib/kind-docker-shim.sh) that runs kind's containers with it (kind also runs `docker
# exec --privileged` in containers it did not start privileged). Elsewhere the shim passes
# everything through.
KIND_RUNTIME=""
engine_runtime() {
  local pid bounding last config=/etc/docker/daemon.json runtime="$CACHE/kind-runc" shim="$CACHE/docker-shim/docker"
  mkdir -p "$(dirname "$shim")"
  pid="$(pgrep -xo dockerd || true)"
  bounding=$((16#$(awk '$1 == "CapBnd:" { print $2 }' "/proc/${pid:-self}/status")))
  last="$(cat /proc/sys/kernel/cap_last_cap)"
  install -m 0755 scripts/lib/kind-docker-shim.sh "$shim"
  ((bounding != (1 << (last + 1)) - 1)) || return 0
  install -m 0755 scripts/lib/kind-runc.sh "$runtime"
  if ! docker info --format '{{json .Runtimes}}' | jq -e 'has("kind-runc")' >/dev/null; then
    [[ -f "$config" ]] || echo '{}' >"$config"
    jq --arg path "$runtime" '.runtimes["kind-runc"] = {path: $path}' "$config" >"$config.new" && mv "$config.new" "$config"
    log "registering the Docker runtime kind-runc in $config (the engine lacks capabilities privileged containers get)"
    kill -HUP "$pid"
    within 30 sh -c "docker info --format '{{json .Runtimes}}' | jq -e 'has(\"kind-runc\")' >/dev/null" \
      || die "the Docker engine did not load the runtime kind-runc from $config"
  fi
  KIND_RUNTIME=kind-runc
}
kubectl_bin() { echo "$(out_of kubernetes)/kubectl"; }
k() { "$(kubectl_bin)" --context "$CONTEXT" "$@"; }
cluster_exists() { kind_ get clusters 2>/dev/null | grep -qx "$cluster"; }

build_all() {
  local step started=$SECONDS steps=("${STEPS[@]}")
  ((${#build_steps[@]} == 0)) || steps=("${build_steps[@]}")
  mkdir -p "$CACHE/out"
  command -v go >/dev/null 2>&1 || die "Go is needed (go build of every component)"
  command -v jq >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null; }
  docker info >/dev/null 2>&1 || die "no Docker engine answers; start one with scripts/docker-engine.sh"
  for step in "${steps[@]}"; do
    [[ " ${STEPS[*]} " == *" $step "* ]] || die "no build step $step (see plan)"
    run_step "$step"
  done
  ((${#build_steps[@]} == 0)) || return 0
  check_kubeadm_images
  # kubectl 1.35 and kind on the PATH, ahead of Debian's kubectl.
  ln -sf "$(kubectl_bin)" /usr/local/bin/kubectl
  ln -sf "$(kind_bin)" /usr/local/bin/kind
  log "everything built or cached in $((SECONDS - started)) s; node image $(node_image)"
}

check_kubeadm_images() {
  local expected
  expected="$(printf '%s\n' "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" "registry.k8s.io/etcd:${ETCD_VERSION#v}-0" \
    "registry.k8s.io/kube-apiserver:$KUBERNETES_VERSION" "registry.k8s.io/kube-controller-manager:$KUBERNETES_VERSION" \
    "registry.k8s.io/kube-proxy:$KUBERNETES_VERSION" "registry.k8s.io/kube-scheduler:$KUBERNETES_VERSION" \
    "registry.k8s.io/pause:$PAUSE_VERSION" | sort)"
  [[ "$("$(out_of kubernetes)/kubeadm" config images list --kubernetes-version "$KUBERNETES_VERSION" | sort)" == "$expected" ]] \
    || die "kubeadm $KUBERNETES_VERSION names other images than these versions build: $expected"
}

up() {
  local started=$SECONDS config
  build_all
  if cluster_exists; then
    log "cluster $cluster exists; checking it"
  else
    config="$(mktemp)"
    kind_config >"$config"
    log "creating cluster $cluster (1 control plane, 3 workers)"
    kind_ create cluster --name "$cluster" --image "$(node_image)" --config "$config"
    rm -f "$config"
    k apply -f "$(out_of kube-router)/kube-router.yaml"
  fi
  k -n kube-system rollout status daemonset/kube-router --timeout=5m
  k wait --for=condition=Ready node --all --timeout=5m
  k -n kube-system rollout status deployment/coredns --timeout=5m
  k -n local-path-storage rollout status deployment/local-path-provisioner --timeout=5m
  log "cluster $cluster up in $((SECONDS - started)) s (kubectl context $CONTEXT, the default kubeconfig's current one)"
  check
}

down() {
  if cluster_exists; then kind_ delete cluster --name "$cluster"; else log "no cluster $cluster"; fi
}

status() {
  k get nodes -L topology.kubernetes.io/zone -o wide
  k get pods -n kube-system -o wide
  k get pods -n local-path-storage -o wide
  k get storageclass
}

load() {
  local image
  (( ${#load_images[@]} )) || die "load: name at least one image"
  for image in "${load_images[@]}"; do
    [[ "${image##*/}" == *:* && "${image##*:}" != latest ]] \
      || die "load: $image needs a tag other than latest (kubelet would try to pull it)"
    docker image inspect "$image" >/dev/null 2>&1 || die "load: no local image $image"
  done
  kind_ load docker-image --name "$cluster" "${load_images[@]}"
}

# --- check -----------------------------------------------------------------------------------
readonly CHECK_NAMESPACE=k8s-local-check
failures=0
pass() { log "check ok: $*"; }
fail() { log "CHECK FAILED: $*"; failures=$((failures + 1)); }

check_manifest() { # the pods, claim and policy of `check`, in their own namespace
  local tools
  tools="supermarket-k8s/tools:$(key_of rootfs-tools)"
  cat <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: $CHECK_NAMESPACE
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: $CHECK_NAMESPACE
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 16Mi
---
apiVersion: v1
kind: Pod
metadata:
  name: server
  namespace: $CHECK_NAMESPACE
  labels:
    app: server
spec:
  nodeSelector:
    topology.kubernetes.io/zone: a
  containers:
    - name: server
      image: $tools
      imagePullPolicy: Never
      command: [sh, -c, 'echo from-server >/data/index.html && exec busybox httpd -f -p 8000 -h /data']
      ports:
        - containerPort: 8000
      volumeMounts:
        - name: data
          mountPath: /data
  volumes:
    - name: data
      persistentVolumeClaim:
        claimName: data
---
apiVersion: v1
kind: Pod
metadata:
  name: client
  namespace: $CHECK_NAMESPACE
spec:
  nodeSelector:
    topology.kubernetes.io/zone: b
  containers:
    - name: client
      image: $tools
      imagePullPolicy: Never
      command: [sleep, "3600"]
YAML
}

deny_policy() {
  cat <<YAML
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: deny-to-server
  namespace: $CHECK_NAMESPACE
spec:
  podSelector:
    matchLabels:
      app: server
  policyTypes: [Ingress]
YAML
}

refused() { ! fetch_from_server >/dev/null 2>&1; }
# within SECONDS COMMAND...: retries COMMAND until it succeeds, for at most SECONDS
within() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 1
  done
}

fetch_from_server() { # the client's GET of the server's page, by pod IP on another node
  local ip
  ip="$(k -n "$CHECK_NAMESPACE" get pod server -o jsonpath='{.status.podIP}')"
  k -n "$CHECK_NAMESPACE" exec client -- busybox wget -q -T 5 -O - "http://$ip:8000/index.html"
}

check() {
  local nodes zones ready sc pv_node
  k delete namespace "$CHECK_NAMESPACE" --ignore-not-found --wait=true >/dev/null
  nodes="$(k get nodes --no-headers | wc -l)"
  ready="$(k get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True || true)"
  if [[ "$nodes" == 4 && "$ready" == 4 ]]; then pass "4 nodes, all Ready"; else fail "$ready of $nodes nodes Ready (want 4 of 4)"; fi
  zones="$(k get nodes -l '!node-role.kubernetes.io/control-plane' -o jsonpath='{range .items[*]}{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}{end}' | sort | tr '\n' ' ')"
  if [[ "$zones" == "a b c " ]]; then pass "workers in zones a, b, c"; else fail "worker zones are '$zones'"; fi
  sc="$(k get storageclass -o jsonpath='{range .items[?(@.metadata.annotations.storageclass\.kubernetes\.io/is-default-class=="true")]}{.metadata.name} {.provisioner}{end}')"
  if [[ "$sc" == "standard rancher.io/local-path" ]]; then pass "default StorageClass $sc"; else fail "default StorageClass is '$sc'"; fi

  check_manifest | k apply -f - >/dev/null
  if k -n "$CHECK_NAMESPACE" wait --for=condition=Ready pod/server pod/client --timeout=180s >/dev/null; then
    pv_node="$(k get pv "$(k -n "$CHECK_NAMESPACE" get pvc data -o jsonpath='{.spec.volumeName}')" \
      -o jsonpath='{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]}')"
    if [[ "$(k -n "$CHECK_NAMESPACE" get pvc data -o jsonpath='{.status.phase}')" == Bound && "$pv_node" == "$cluster-worker"* ]]; then
      pass "claim bound by the default StorageClass on worker $pv_node, written by the server pod"
    else
      fail "claim data not bound on a worker (node '$pv_node')"
    fi
    if k -n "$CHECK_NAMESPACE" exec client -- getent hosts kubernetes.default.svc.cluster.local >/dev/null; then
      pass "CoreDNS answers a pod (kubernetes.default.svc.cluster.local)"
    else
      fail "no DNS answer for kubernetes.default.svc.cluster.local in a pod"
    fi
    if [[ "$(fetch_from_server 2>&1)" == from-server ]]; then
      pass "pod in zone b reaches pod in zone a (another node) by its pod IP"
    else
      fail "pod in zone b cannot reach the pod in zone a: $(fetch_from_server 2>&1 | tail -n 1)"
    fi
    deny_policy | k apply -f - >/dev/null
    if within 30 refused; then
      deny_policy | k delete -f - >/dev/null
      if within 30 fetch_from_server >/dev/null 2>&1; then
        pass "NetworkPolicy enforced: a policy denying ingress to the server stops the client, its removal lets it through"
      else
        fail "the client stayed cut off from the server after the deny policy was removed"
      fi
    else
      fail "a NetworkPolicy denying ingress to the server did not stop the client within 30 s (not enforced)"
    fi
  else
    fail "the check pods did not become Ready: $(k -n "$CHECK_NAMESPACE" get pods,pvc --no-headers 2>&1 | tr '\n' ';')"
  fi
  k delete namespace "$CHECK_NAMESPACE" --wait=false >/dev/null
  log "check: $failures failed"
  ((failures == 0))
}

# --- plan ------------------------------------------------------------------------------------
plan() {
  local step state
  echo "versions: kubernetes=$KUBERNETES_VERSION kind=$KIND_VERSION etcd=$ETCD_VERSION coredns=$COREDNS_VERSION" \
    "pause=$PAUSE_VERSION kube-router=$KUBE_ROUTER_VERSION local-path-provisioner=$LOCAL_PATH_PROVISIONER_VERSION" \
    "cri-tools=$CRI_TOOLS_VERSION debian=$DEBIAN_SUITE"
  echo "cache: $CACHE"
  for step in "${STEPS[@]}"; do
    if [[ -d "$(out_of "$step")" ]]; then state=cached; else state="to build"; fi
    echo "step $step key $(key_of "$step") $state${DEPENDS[$step]:+ (uses ${DEPENDS[$step]})}"
  done
  echo "image registry.k8s.io/kube-apiserver:$KUBERNETES_VERSION"
  echo "image registry.k8s.io/kube-controller-manager:$KUBERNETES_VERSION"
  echo "image registry.k8s.io/kube-scheduler:$KUBERNETES_VERSION"
  echo "image registry.k8s.io/kube-proxy:$KUBERNETES_VERSION"
  echo "image registry.k8s.io/etcd:${ETCD_VERSION#v}-0"
  echo "image registry.k8s.io/coredns/coredns:$COREDNS_VERSION"
  echo "image registry.k8s.io/pause:$PAUSE_VERSION"
  echo "image $KUBE_ROUTER_IMAGE (also named $KIND_CNI_IMAGE for kind's builder)"
  echo "image $KIND_PROVISIONER_IMAGE"
  echo "image $KIND_HELPER_IMAGE"
  echo "image supermarket-k8s/tools:$(key_of rootfs-tools)"
  echo "node image $(node_image)"
  echo "run kind build node-image --type file kubernetes-server-linux-amd64.tar.gz --base-image supermarket-k8s/kind-base:$(key_of rootfs-node) --image $(node_image)"
  echo "run kind create cluster --name $cluster --image $(node_image) --config CONFIG"
  echo "run kubectl --context $CONTEXT apply -f $(out_of kube-router)/kube-router.yaml"
  echo "run kubectl --context $CONTEXT wait --for=condition=Ready node --all"
  echo "run check"
  echo "--- kind configuration"
  kind_config
  echo "--- check manifest"
  check_manifest
  echo "--- check policy"
  deny_policy
}

case "$command" in
  plan) plan ;;
  build) build_all ;;
  up) up ;;
  down) down ;;
  status) status ;;
  check) check ;;
  load) load ;;
esac
