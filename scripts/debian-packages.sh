# Sourced by the suite scripts: installs Debian packages a suite needs, only as root or with
# password-less sudo (apt-get update first). Usage: apt_install LABEL PACKAGE…; returns non-zero on failure.
apt_install() {
  local label=$1; shift
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || { echo "[$label] cannot install $*: not root and no password-less sudo"; return 1; }
    sudo=(sudo -n)
  fi
  echo "[$label $(date +%T)] apt-get install $*"
  "${sudo[@]}" apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
