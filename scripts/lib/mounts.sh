# Sourced by the scripts that enter Debian roots (in-fresh-debian.sh,
# dev-root.sh): mounts made with mount_at are undone, last first, by
# unmount_all, which each script calls from its EXIT trap.
mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R -l "${mounted[i]}" 2>/dev/null || true; done
  mounted=()
}
mount_at() {  # mount_at DIR MOUNT-ARGS...
  local dir=$1; shift
  mkdir -p "$dir"
  mount "$@" "$dir"
  mounted+=("$dir")
}
