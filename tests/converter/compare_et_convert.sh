#!/bin/bash
# Runs two et-convert binaries on every input under ../shared/traces, tests/data
# and examples/data and compares what they write: every .et byte for byte, and
# every report (stdout, stderr, exit code, --json-summary; wall times masked).
# For changes meant to keep behaviour (issue 17's library split, issue 29's
# per-format folders): a reorganisation must print "different: 0".
#   tests/converter/compare_et_convert.sh OLD_ET_CONVERT NEW_ET_CONVERT [WORK_DIR] [FILTER]
# FILTER (an extended regex on the input path) narrows the single-file runs.
set -u
OLD=$(realpath "$1"); NEW=$(realpath "$2"); W=${3:-/tmp/compare_et_convert}; FILTER=${4:-.}
REPO=$(cd "$(dirname "$0")/../.." && pwd); SHARED=$(realpath -m "$REPO/../shared/traces")
[ -d "$SHARED" ] || SHARED=/work/shared/traces
rm -rf "$W"; mkdir -p "$W"
mask() { sed -E -e 's/ in [0-9.]+ s/ in T s/g' -e 's/"wall_seconds":[0-9.eE+-]+/"wall_seconds":T/g' "$1"; }
n=0; same=0; ets=0; diffs=()
# run NAME ARGS...: both binaries in $W/{old,new}/NAME (outputs named relative to it).
run() {
  local name=$1; shift; n=$((n + 1))
  for v in old new; do
    local bin=$OLD; [ $v = new ] && bin=$NEW
    local d=$W/$v/$name f; mkdir -p "$d"
    (cd "$d" && nice -n 19 "$bin" "$@" >stdout 2>stderr; echo $? >rc)
    for f in $(cd "$d" && find . -type f ! -name '*.et'); do
      mask "$d/$f" >"$d/$f.m" && mv "$d/$f.m" "$d/$f"
    done
  done
  ets=$((ets + $(find "$W/old/$name" -name '*.et' | wc -l)))
  if diff -r "$W/old/$name" "$W/new/$name" >/dev/null; then same=$((same + 1)); else diffs+=("$name"); fi
}
id() { echo "$1" | sed -e "s#^$SHARED#shared#" -e "s#^$REPO/##" -e 's#[/%]#_#g'; }
mapfile -t ALL < <(find "$SHARED" "$REPO/tests/data" "$REPO/examples/data" -type f \
  \( -name '*.json' -o -name '*.json.gz' -o -name '*.sqlite.gz' -o -name '*.txt' \) | grep -E "$FILTER" | sort)
for f in "${ALL[@]}"; do
  b=$(basename "$f")
  case $b in
    *.sqlite.gz)
      run "nsys_$(id "$f")" "$f" 'out.%d.et'
      run "nsys_all_$(id "$f")" "$f" 'out.%d.et' --keep all --json-summary s.json ;;
    *)
      run "alone_$(id "$f")" "$f" out.et
      run "alone_all_$(id "$f")" "$f" out.et --keep all --json-summary - ;;
  esac
  # An ET with its Kineto trace (same folder: _et -> _kineto, _trace, _kineto_light),
  # of the rank its name says.
  if [[ $b == *_et* && $b == *.json* ]]; then
    rank=0; [[ $b =~ _r([0-9]+)\. ]] && rank=${BASH_REMATCH[1]}
    for k in kineto trace kineto_light; do
      kb=$(echo "$b" | sed -E "s/_et([._])/_${k}\1/; s/\.[0-9]+\.[0-9]+\.[0-9]+\.json/.json/")
      kf=$(dirname "$f")/$kb
      [ -f "$kf" ] && [ "$kf" != "$f" ] && run "pair_${k}_$(id "$f")" "$f" out.et --kineto "$kf" --rank "$rank"
    done
  fi
done
if [ "$FILTER" = . ]; then
  # Rank patterns, with and without Kineto, and a folder of traces.
  for p in "$SHARED/pytorch-1.13-cpu/ddp_mlp_%s_r%%d:trace" "$REPO/examples/data/ddp_mlp_%s_r%%d:trace" \
    "$REPO/tests/data/tp8/tp8_%s_r%%d:kineto" "$REPO/tests/data/recorded/ddp_gpt_2r_%s_r%%d:kineto" \
    "$REPO/tests/data/recorded/tp_dp_4r_%s_r%%d:kineto" "$REPO/tests/data/pp/pp2_2r_%s_r%%d:kineto" \
    "$REPO/tests/data/dp-sync/wide_ddp2_%s_r%%d:kineto"; do
    et=$(printf "${p%:*}" et).json.gz; kk=$(printf "${p%:*}" "${p#*:}").json.gz
    r=0; while [ -f "$(printf "${et//%d/%s}" $r)" ]; do r=$((r + 1)); done
    [ $r -gt 0 ] || continue
    run "ranks_$(id "$et")" "$et" 'out.%d.et' --ranks $r
    [ -f "$(printf "${kk//%d/%s}" 0)" ] && run "ranks_k_$(id "$et")" "$et" 'out.%d.et' --ranks $r --kineto "$kk" --json-summary s.json
  done
  mkdir -p "$W/dir_in" "$W/old/dir/o" "$W/new/dir/o"
  cp "$SHARED"/pytorch-1.13-cpu/ddp_mlp_et_r*.json.gz "$W/dir_in/"
  run dir "$W/dir_in" o
  # ASTRA-sim text workloads (written here, as the tests do) and --to-json.
  mkdir -p "$W/astra"
  printf 'DATA\n2\nconv1 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 1048576 10\nfc1 -1 3 ALLGATHER 2048 3 NONE 0 3 ALLREDUCE 4096 1\n' >"$W/astra/data.txt"
  printf 'MODEL\n1\nl0 -1 1 ALLTOALL 100 1 NONE 0 1 NONE 0 1\n' >"$W/astra/model.txt"
  printf 'BOGUS\n1\n' >"$W/astra/bad.txt"
  for t in "$W"/astra/*.txt; do run "astra_$(basename "$t")" --astra-text "$t" 'out.%d.et' --ranks 4 --passes 2; done
  mapfile -t ETS < <(find "$SHARED/chakra" "$REPO/tests/data/chakra" -name '*.et' | sort; find "$SHARED/astra-sim" -name '*.et' | sort | head -20)
  for e in "${ETS[@]}"; do run "tojson_$(id "$e")" --to-json "$e" out.json; done
fi
echo "compared: $n runs ($ets .et files), identical: $same, different: ${#diffs[@]}"
for d in "${diffs[@]}"; do echo "different: $W/{old,new}/$d"; done
[ ${#diffs[@]} -eq 0 ]
