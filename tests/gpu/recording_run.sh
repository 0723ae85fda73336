# Sourced by the scripts that record on a lent machine for a bounded time
# (cpu_corpus.sh, gpu_heldout.sh): `recording_run OUT ARCHIVE DEFAULT_DEADLINE_S`
# moves into a fresh scratch folder and defines `left` (seconds before the
# deadline) and `pack` (everything so far, JSON gzipped, into OUT/ARCHIVE,
# replaced whole), so a run cut short keeps what it finished. Sets OUT,
# DEADLINE_S, here (the repository), record (the recorder) and start.
recording_run() {
  OUT=$(mkdir -p "${1:?OUT}" && cd "$1" && pwd) ||
    { echo "usage: $0 OUT (an output folder)" >&2; exit 2; }
  ARCHIVE=${2:?ARCHIVE}
  DEADLINE_S=${DEADLINE_S:-${3:?DEFAULT_DEADLINE_S}}
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  record="$here/examples/record_trace.py"
  start=$(date +%s)
  cd "$(mktemp -d "/tmp/${ARCHIVE%%.*}.XXXX")" || exit 1
}
left() { echo $((DEADLINE_S - ($(date +%s) - start))); }
pack() {
  gzip -9 -n -f ./*.json 2>/dev/null
  tar -czf "$OUT/$ARCHIVE.tmp" . && mv "$OUT/$ARCHIVE.tmp" "$OUT/$ARCHIVE"
}
