#!/usr/bin/env bash
# Same-run A/B of `mlaspec bench` between the working tree and other revisions (PERF.md: a change
# is judged against the other variant measured in the same run, never against an older table).
#
# Here, in the git checkout: write each revision's sources to ab/NAME (ignored by git; give the
# lent GPU machine `ab` and `.deps` to carry):
#   scripts/gpu-ab.sh prepare NAME=REV [NAME=REV ...]      e.g. prepare main=main
# On the GPU machine: build mlaspec in the working tree (build-gpu, as scripts/gpu-check.sh does)
# and in every ab/NAME, run one bench per tree with the outputs checked against the CPU reference,
# then ROUNDS rounds of unchecked benches, the trees taking turns inside each round, and print per
# row and KV dtype each tree's median fold and rowwise time over the rounds and its ratio to the
# working tree's, then the same for each round's fastest fold rep (the calls before the power cap
# lowers the clock: the steadier measure on the rows bound by tensor work):
#   scripts/gpu-ab.sh run [--rows 0,1,2] [--kv bf16|fp8|both] [--rounds 3] [--reps 30]
#                         [--set standard] [--deterministic] [NAME ...]
# Without NAMEs, every ab/* tree. Logs and JSON: $OUT/gpu-ab.tgz (default ./out).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }
[[ $# -ge 1 ]] || usage
cmd=$1
shift

if [[ $cmd == prepare ]]; then
  [[ $# -ge 1 ]] || usage
  for spec in "$@"; do
    name=${spec%%=*} rev=${spec#*=}
    if [[ $name == "$spec" || -z $name || -z $rev || ! $name =~ ^[A-Za-z0-9_.-]+$ ]]; then
      echo "gpu-ab: '$spec' is not NAME=REV (NAME of letters, digits, . _ -)" >&2
      exit 2
    fi
    if ! git rev-parse --verify --quiet "$rev^{commit}" > /dev/null; then
      echo "gpu-ab: $rev is not a revision of this repository" >&2
      exit 2
    fi
    rm -rf "ab/$name"
    mkdir -p "ab/$name"
    git archive "$rev" | tar -x -C "ab/$name" || exit 1
    echo "ab/$name: $(git rev-parse --short "$rev") ($(git log -1 --format=%s "$rev" | cut -c1-60))"
  done
  echo "carry: ab .deps"
  exit 0
fi
[[ $cmd == run ]] || usage

rows=0,1,2,3,4,5,6,7,8,9,10,11 kv=both rounds=3 reps=30 set=standard det=()
names=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --rows) rows=$2; shift 2 ;;
    --kv) kv=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --set) set=$2; shift 2 ;;
    --deterministic) det=(--deterministic); shift ;;
    -*) echo "gpu-ab: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
if [[ ${#names[@]} -eq 0 ]]; then
  for d in ab/*/; do [[ -d $d ]] && names+=("$(basename "$d")"); done
fi
for n in "${names[@]}"; do
  [[ -f ab/$n/CMakeLists.txt ]] || { echo "gpu-ab: no tree ab/$n (scripts/gpu-ab.sh prepare)" >&2; exit 2; }
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "gpu-ab: --rounds $rounds is not a positive count" >&2; exit 2; }

OUT=${OUT:-$PWD/out}
RES=$OUT/ab-results
mkdir -p "$RES"
t0=$(date +%s)
log() { echo "[gpu-ab $(( $(date +%s) - t0 )) s] $*"; }
pack() { tar czf "$OUT/gpu-ab.tgz" -C "$RES" . 2>/dev/null || true; }

cfg=(-DMLASPEC_CUDA=ON -DCMAKE_BUILD_TYPE=Release)
command -v ninja > /dev/null && cfg+=(-G Ninja)
if [[ -d .deps ]]; then
  cfg+=(-DMLASPEC_EXTRA_INCLUDE="$PWD/.deps/include" -DMLASPEC_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
fi
# Trees: "work" (this checkout) and every ab/NAME, each built to <tree>/build-gpu.
trees=(work "${names[@]}")
dir_of() { [[ $1 == work ]] && echo . || echo "ab/$1"; }
jobs=$(( $(nproc) / ${#trees[@]} ))
(( jobs < 1 )) && jobs=1
for t in "${trees[@]}"; do
  d=$(dir_of "$t")
  ( { cmake -S "$d" -B "$d/build-gpu" "${cfg[@]}" && cmake --build "$d/build-gpu" --target mlaspec -j"$jobs"; } \
      > "$RES/build-$t.log" 2>&1
    echo "build $t rc=$?" ) &
done
wait
built=()
for t in "${trees[@]}"; do
  if [[ -x $(dir_of "$t")/build-gpu/mlaspec ]]; then
    built+=("$t")
  else
    log "$t did not build:"; tail -20 "$RES/build-$t.log"
  fi
done
log "built: ${built[*]}"
[[ " ${built[*]} " == *" work "* ]] || { pack; exit 1; }

bench() {  # tree, file, extra options
  local t=$1 f=$2
  shift 2
  timeout 300 "$(dir_of "$t")/build-gpu/mlaspec" bench --device cuda --set "$set" --kv "$kv" \
    --rows "$rows" --reps "$reps" "${det[@]}" --json "$RES/$f.json" "$@" > "$RES/$f.txt" 2>&1
}
status=0
for t in "${built[@]}"; do
  if ! bench "$t" "checked-$t"; then
    log "$t: checked bench failed"; tail -5 "$RES/checked-$t.txt"; status=1
  fi
done
pack
for r in $(seq 1 "$rounds"); do
  for t in "${built[@]}"; do bench "$t" "round$r-$t" --no-check || status=1; done
  log "round $r done"
  pack
done

python3 - "$RES" "$rounds" "${built[@]}" <<'PY'
import json, os, statistics, sys
res, rounds, trees = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
backends = ("cuda_fold", "cuda_rowwise")
# times[(index, config)][tree][backend] = [median_us per round]
times = {}
mins = {}  # mins[(index, config)][tree] = [fold min_us per round]
for tree in trees:
    for r in range(1, rounds + 1):
        path = os.path.join(res, "round%d-%s.json" % (r, tree))
        if not os.path.exists(path):
            continue
        for row in json.load(open(path))["results"]:
            key = (row["index"], row["config"])
            for b in backends:
                us = row.get(b, {}).get("median_us")
                if us is not None:
                    times.setdefault(key, {}).setdefault(tree, {}).setdefault(b, []).append(us)
                lo = row.get(b, {}).get("min_us")
                if lo is not None and b == "cuda_fold":
                    mins.setdefault(key, {}).setdefault(tree, []).append(lo)
med = lambda xs: statistics.median(xs) if xs else None
head = "| # | config |" + "".join(" %s fold | rowwise |" % t for t in trees)
head += "".join(" %s/work fold | rowwise |" % t for t in trees[1:])
print(head)
print("|" + "---|" * (2 + 2 * len(trees) + 2 * (len(trees) - 1)))
for key in sorted(times, key=lambda k: (k[1].split("kv=")[1], k[0])):
    cells = []
    for t in trees:
        for b in backends:
            m = med(times[key].get(t, {}).get(b, []))
            cells.append("%.1f" % m if m else "-")
    for t in trees[1:]:
        for b in backends:
            a, w = med(times[key].get(t, {}).get(b, [])), med(times[key].get("work", {}).get(b, []))
            cells.append("%.3f" % (a / w) if a and w else "-")
    print("| %s | %s | %s |" % (key[0], key[1], " | ".join(cells)))
# The fastest rep of each round (its median over the rounds): the calls before the driver's power
# cap lowers the clock (docs/perf/knowledge.md, the power cap), where the compute rows' medians
# mix both.
print()
print("fold, fastest rep (median over rounds):")
print("| # | config |" + "".join(" %s |" % t for t in trees) + "".join(" %s/work |" % t for t in trees[1:]))
print("|" + "---|" * (2 + 2 * len(trees) - 1))
for key in sorted(mins, key=lambda k: (k[1].split("kv=")[1], k[0])):
    m = {t: med(mins[key].get(t, [])) for t in trees}
    cells = ["%.1f" % m[t] if m[t] else "-" for t in trees]
    cells += ["%.3f" % (m[t] / m["work"]) if m[t] and m["work"] else "-" for t in trees[1:]]
    print("| %s | %s | %s |" % (key[0], key[1], " | ".join(cells)))
PY
pack
log "done (status $status); logs in $OUT/gpu-ab.tgz"
exit $status
