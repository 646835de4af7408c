#!/usr/bin/env bash
# formal/run.sh -- model-check memauth.pml with SPIN under every gate rule.
#
#   bash formal/run.sh            main table, intent-and-claims table, non-vacuity probes, necessity
#                                 (mutants), channel matrix
#   bash formal/run.sh --quick    main table and intent-and-claims table only
#   bash formal/run.sh --deep     also GATE_MEMAUTH at larger bounds (a few minutes)
#   bash formal/run.sh --no-impl  skip the implementation check (formal/impl, needs `npm run build`)
#   bash formal/run.sh --widened  ONLY the widened implementation check (look-alike values, attached
#                                 text, echo variants, resources, typed claims and intent): no SPIN,
#                                 no base universe
#   bash formal/run.sh --no-widened  everything but the widened implementation check
#
# After SPIN, the implementation check enumerates operation sequences against the real
# Memory API on SQLite (dist/formal/impl/enumerate.js): first each configuration mutant must
# yield a counterexample, then memauth as built must hold (--quick: the deep profile at depth 3),
# then the widened universes must hold (out/impl-widened.txt).
#
# Exit status: 0 iff every observed result equals the expected one and every
# "holds" verdict comes from a complete search (no depth/memory truncation).
# Generated files go to formal/out/ (trails, pan logs); nothing else is written.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

QUICK=0
DEEP=0
IMPL=1
WIDENED=1
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    --deep) DEEP=1 ;;
    --no-impl) IMPL=0 ;;
    --widened) WIDENED=only ;;
    --no-widened) WIDENED=0 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

ENUM="$HERE/../dist/formal/impl/enumerate.js"
# the widened implementation check alone: look-alike identifiers and amounts, free text attached to
# another principal's record, echo variants of a fetched page, the action's resource, and the
# claims universe (typed claims, standing instructions, user turns, application intent)
run_widened() {
  if [[ ! -f "$ENUM" ]]; then
    echo "run.sh: $ENUM not found: build the project first (npm run build; npm run formal does both)" >&2
    return 2
  fi
  mkdir -p "$HERE/out"
  local rc=0
  node "$ENUM" --widened --quiet 2>&1 | tee "$HERE/out/impl-widened.txt" || rc=1
  grep -q '^RESULT: all observed results match the expected ones' "$HERE/out/impl-widened.txt" || rc=1
  echo
  if [[ $rc == 0 ]]; then echo "WIDENED IMPLEMENTATION CHECK: ok"; else echo "WIDENED IMPLEMENTATION CHECK: FAILED"; fi
  return $rc
}
if [[ $WIDENED == only ]]; then
  run_widened
  exit $?
fi

for tool in spin gcc; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run.sh: '$tool' not found (Debian/Ubuntu: apt-get install -y spin gcc)" >&2
    exit 2
  fi
done
if [[ $IMPL == 1 && ! -f "$ENUM" ]]; then
  echo "run.sh: $ENUM not found: build the project first (npm run build; npm run formal does both)" >&2
  exit 2
fi

MODEL=memauth.pml
OUT="$HERE/out"
JOBS="${FORMAL_JOBS:-2}"          # parallel verifier runs
DEPTH=10000                        # pan -m (BFS levels); the model needs ~25
MEMLIM=3072                        # MB; pan reports "out of memory" instead of being killed
CFLAGS_BIG="-O2 -w"
CFLAGS_SMALL="-O0 -w"
PANFLAGS="-DSAFETY -DBFS -DMEMLIM=$MEMLIM"   # safety (assertions + end states), shortest trails

rm -rf "$OUT"
mkdir -p "$OUT/work"
T0=$(date +%s)

# ---------------------------------------------------------------------------
# 0. Static check: the gate never reads ground truth.  The gate is the text
#    between the BEGIN GATE / END GATE markers; ghost variables start with g_
#    and the ghost-reading inlines are check_invariant / ghost_corr_count.
# ---------------------------------------------------------------------------
GATE_TEXT="$(awk '/BEGIN GATE =/{on=1} on{print} /END GATE =/{on=0}' "$MODEL")"
if [[ -z "$GATE_TEXT" ]]; then
  echo "run.sh: could not find the BEGIN GATE / END GATE section in $MODEL" >&2; exit 1
fi
if grep -nE '(^|[^A-Za-z0-9_])g_[A-Za-z_]+|check_invariant|ghost_corr_count|witness' <<<"$GATE_TEXT" \
     | grep -vE '^[0-9]+:\s*(/\*|\*)' >"$OUT/ghost-in-gate.txt"; then
  echo "FAIL: the gate section references ground-truth (ghost) state:" >&2
  cat "$OUT/ghost-in-gate.txt" >&2
  exit 1
fi
rm -f "$OUT/ghost-in-gate.txt"
echo "static check: gate section ($(wc -l <<<"$GATE_TEXT") lines) reads no g_* ghost variable: ok"

# ---------------------------------------------------------------------------
# one verification run: run_one ID "SPIN DEFINES" CFLAGS TRAILNAME
# writes $OUT/work/ID/result: observed|stored|matched|transitions|depth|secs
# ---------------------------------------------------------------------------
run_one() {
  local id="$1" defs="$2" cflags="$3" trailname="$4"
  local d="$OUT/work/$id"
  mkdir -p "$d"
  cp "$MODEL" "$d/"
  (
    cd "$d"
    local s0 s1 observed
    s0=$(date +%s.%N)
    # shellcheck disable=SC2086
    if ! spin $defs -a "$MODEL" >spin-a.log 2>&1; then
      echo "spin-a-failed|-|-|-|-|0" >result; cat spin-a.log >&2; exit 0
    fi
    # shellcheck disable=SC2086
    if ! gcc $PANFLAGS $cflags -o pan pan.c >gcc.log 2>&1; then
      echo "gcc-failed|-|-|-|-|0" >result; cat gcc.log >&2; exit 0
    fi
    ./pan -m"$DEPTH" >pan.out 2>&1 || true
    s1=$(date +%s.%N)
    local errors stored matched trans depth
    errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | tail -1)
    stored=$(awk '/states, stored$/{printf "%.0f", $1}' pan.out)
    matched=$(awk '/states, matched$/{printf "%.0f", $1}' pan.out)
    trans=$(awk '/transitions \(= stored\+matched\)/{printf "%.0f", $1}' pan.out)
    depth=$(sed -n 's/.*depth reached \([0-9][0-9]*\).*/\1/p' pan.out | tail -1)
    # pan stops at the first error and then always says "Search not completed";
    # for errors: 0 any truncation marker means the "holds" verdict is not exhaustive.
    if [[ -z "$errors" ]]; then
      observed=no-result
    elif [[ "$errors" != 0 ]]; then
      if grep -q 'assertion violated' pan.out; then observed=counterexample; else observed=other-error; fi
    elif grep -qiE 'max search depth too small|search not completed|out of memory|too many processes|VECTORSZ|hash-compact|bitstate' pan.out; then
      observed=incomplete
    elif grep -q 'Full statespace search' pan.out; then
      observed=holds
    else
      observed=incomplete
    fi
    if [[ "$observed" == counterexample && -n "$trailname" ]]; then
      # readable trail: the model's own one-line narration of each operation
      # shellcheck disable=SC2086
      spin $defs -T -t "$MODEL" >trail.full.txt 2>&1 || true
      {
        echo "# SPIN counterexample, spin $defs ($(grep -m1 -o 'assertion violated.*' pan.out))"
        echo "# shortest trail (BFS); full replay: cd formal/out/work/$id && spin $defs -t -p $MODEL"
        grep -E '^(OP |INVARIANT|WITNESS)' trail.full.txt
      } >"$OUT/$trailname"
      # shellcheck disable=SC2086
      spin $defs -t -p "$MODEL" >"$OUT/${trailname%.txt}.steps.txt" 2>&1 || true
    fi
    cp pan.out "$OUT/work/$id.pan.txt"
    rm -f pan pan.c pan.h pan.m pan.b pan.t pan.p pan.pre _spin_nvr.tmp   # keep model + trail for replay
    printf '%s|%s|%s|%s|%s|%s\n' "$observed" "${stored:--}" "${matched:--}" "${trans:--}" \
      "${depth:--}" "$(awk -v a="$s0" -v b="$s1" 'BEGIN{printf "%.1f", b - a}')" >result
  ) || echo "error|-|-|-|-|0" >"$d/result"
}

# job list: ID|DEFINES|CFLAGS|TRAILNAME
JOBLIST=()
add_job() { JOBLIST+=("$1|$2|$3|$4"); }

GATES=(1 2 3 4 5)
declare -A GNAME=([1]=memauth [2]=content [3]=lineage [4]=naive_corrob [5]=loose_confirm
                  [6]=no_intent [7]=any_claim [8]=mention)
declare -A GEXP=([1]=holds [2]=counterexample [3]=counterexample [4]=counterexample [5]=counterexample
                 [6]=counterexample [7]=counterexample [8]=counterexample)

for g in "${GATES[@]}"; do
  add_job "main-${GNAME[$g]}" "-DGATE=$g" "$CFLAGS_BIG" "${GNAME[$g]}.trail.txt"
done

# intent and claims (channel 64) with self-summary, tool echo and manufactured corroboration
# (78); memauth also with confirmations (82) and the display channel (96).  The memauth runs
# are exhaustive DFS with state compression (no trail is needed for "holds").
CLAIMS_CH=78
CLAIMS_GATES=(1 6 7 8)
CLAIMS_EXTRA=(82 96)
declare -A CLNAME=([78]="claims+summary+echo+corrob" [82]="claims+summary+confirmations" [96]="claims+display")
for g in "${CLAIMS_GATES[@]}"; do
  if [[ $g == 1 ]]; then
    add_job "claims-$CLAIMS_CH-1" "-DGATE=1 -DCHANNELS=$CLAIMS_CH" "$CFLAGS_BIG -UBFS -DCOLLAPSE" ""
  else
    add_job "claims-$CLAIMS_CH-$g" "-DGATE=$g -DCHANNELS=$CLAIMS_CH" "$CFLAGS_SMALL" "${GNAME[$g]}.trail.txt"
  fi
done
for c in "${CLAIMS_EXTRA[@]}"; do
  add_job "claims-$c-1" "-DGATE=1 -DCHANNELS=$c" "$CFLAGS_BIG -UBFS -DCOLLAPSE" ""
done

WITNESSES=(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
declare -A WDESC=(
  [1]="utility: pay(LEGIT) allowed from trusted root records"
  [2]="utility: pay(LEGIT) allowed from agent summary of trusted data, later session"
  [3]="utility: allowed via K independent corroborations of an untrusted-origin record"
  [4]="utility: pay(LEGIT) allowed from context-tainted note, independently corroborated"
  [5]="utility: allowed via scoped confirmation despite untrusted dependency"
  [6]="attack reached+denied: laundered summary, edge dropped (breaks lineage)"
  [7]="attack reached+denied: 2 trusted tools of one domain corroborate (breaks naive)"
  [8]="attack reached+denied: trusted-tool echo of attacker page (breaks content)"
  [9]="attack reached+denied: generic/other-args/used/expired confirmation (breaks loose)"
  [10]="utility: pay(LEGIT) outright after an untrusted read: turn asks, trusted claim"
  [11]="utility: the same with intent from a trusted standing instruction"
  [12]="attack reached+denied: induced payment, trusted payee claim, nobody asked (no_intent)"
  [13]="attack reached+denied: user asked, payee only from an external claim (any_claim)"
  [14]="attack reached+denied: user asked, trusted text names ATTACKER to forbid it (mention)"
  [15]="attack reached+denied: standing instruction, turn names ATTACKER in a question/ban"
)
# extra defines per probe (10..15 need the claims channel)
declare -A WDEFS=([10]="-DCHANNELS=$CLAIMS_CH" [11]="-DCHANNELS=$CLAIMS_CH" [12]="-DCHANNELS=$CLAIMS_CH"
                  [13]="-DCHANNELS=$CLAIMS_CH" [14]="-DCHANNELS=$CLAIMS_CH" [15]="-DCHANNELS=$CLAIMS_CH")
# channel matrix rows: CHANNELS value and label; expected CE cells per gate
CHROWS=(0 1 2 4 8 16 32)
declare -A CHNAME=([0]="base" [1]="adaptive-text" [2]="self-summary" [4]="tool-echo" [8]="manufactured-corrob" [16]="confirmations" [32]="display")
declare -A CHEXP_CE=(
  [2,0]=1 [2,1]=1 [2,2]=1 [2,4]=1 [2,8]=1 [2,16]=1 [2,32]=1
  [3,2]=1
  [4,8]=1
  [5,16]=1
)

MUTANTS=(1 2 3 4 5 6 7 8 9 10)
declare -A MDESC=(
  [1]="derive() taints only from the declared input, not every session read"
  [2]="confirmations are not consumed (reusable)"
  [3]="corroboration authority ignores web evidence (trusted channel = source)"
  [4]="origin = principal ceiling, source ignored (trusted-tool echo trusted)"
  [5]="a view displays text a lower principal attached (display channel)"
  [6]="echo detection swallows a changed page (display channel)"
  [7]="derived claims not checked against the inputs (a summary restates with another value)"
  [8]="intent the caller asserts accepted from any requester (the agent)"
  [9]="intent detection ignores a negation in the user's turn"
  [10]="the user's turn supplies every value it contains (question, prohibition)"
)
# extra defines per mutant (5 and 6 act on the display channel, 7..10 on claims; off by default)
declare -A MDEFS=([5]="-DCHANNELS=32" [6]="-DCHANNELS=32" [7]="-DCHANNELS=$CLAIMS_CH" [8]="-DCHANNELS=$CLAIMS_CH"
                  [9]="-DCHANNELS=$CLAIMS_CH" [10]="-DCHANNELS=$CLAIMS_CH")

# extended bounds for GATE_MEMAUTH (exhaustive DFS, state compression, no trail needed)
DEEPCFG=("-DMAXCORR=3" "-DMAXSESS=4" "-DK=3 -DMAXCORR=3")
if [[ $DEEP == 1 ]]; then
  i=0
  for c in "${DEEPCFG[@]}"; do
    add_job "deep-$i" "-DGATE=1 $c" "$CFLAGS_BIG -UBFS -DCOLLAPSE" ""
    i=$((i + 1))
  done
fi

if [[ $QUICK == 0 ]]; then
  for m in "${MUTANTS[@]}"; do
    add_job "mutant-$m" "-DGATE=1 -DMUTANT=$m ${MDEFS[$m]:-}" "$CFLAGS_SMALL" "mutant-$m.trail.txt"
  done
  for w in "${WITNESSES[@]}"; do
    add_job "witness-$w" "-DGATE=1 -DWITNESS=$w ${WDEFS[$w]:-}" "$CFLAGS_SMALL" "witness-$w.trail.txt"
  done
  for c in "${CHROWS[@]}"; do
    for g in "${GATES[@]}"; do
      add_job "matrix-$c-$g" "-DGATE=$g -DCHANNELS=$c" "$CFLAGS_SMALL" ""
    done
  done
fi

# run jobs, at most $JOBS at a time
running=0
for j in "${JOBLIST[@]}"; do
  IFS='|' read -r id defs cflags trail <<<"$j"
  run_one "$id" "$defs" "$cflags" "$trail" &
  running=$((running + 1))
  if (( running >= JOBS )); then wait -n || true; running=$((running - 1)); fi
done
wait

FAIL=0
result_of() { cat "$OUT/work/$1/result" 2>/dev/null || echo "error|-|-|-|-|0"; }

# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------
{
echo
echo "== Main table: all laundering channels enabled (CHANNELS=31), K=2 =="
printf '%-14s %-15s %-15s %12s %12s %12s %6s %7s\n' gate expected observed stored matched transitions depth secs
for g in "${GATES[@]}"; do
  IFS='|' read -r obs st ma tr de se <<<"$(result_of "main-${GNAME[$g]}")"
  mark=""
  if [[ "$obs" != "${GEXP[$g]}" ]]; then mark="  <-- MISMATCH"; FAIL=1; fi
  printf '%-14s %-15s %-15s %12s %12s %12s %6s %7s%s\n' "${GNAME[$g]}" "${GEXP[$g]}" "$obs" "$st" "$ma" "$tr" "$de" "$se" "$mark"
done

echo
echo "== Intent and claims: the claims channel (64) with other channels (CHANNELS), K=2 =="
printf '%-14s %-30s %-15s %-15s %12s %12s %12s %6s %7s\n' gate channels expected observed stored matched transitions depth secs
claims_row() {
  local g="$1" c="$2"
  IFS='|' read -r obs st ma tr de se <<<"$(result_of "claims-$c-$g")"
  mark=""
  if [[ "$obs" != "${GEXP[$g]}" ]]; then mark="  <-- MISMATCH"; FAIL=1; fi
  printf '%-14s %-30s %-15s %-15s %12s %12s %12s %6s %7s%s\n' "${GNAME[$g]}" "$c ${CLNAME[$c]}" "${GEXP[$g]}" "$obs" "$st" "$ma" "$tr" "$de" "$se" "$mark"
}
for g in "${CLAIMS_GATES[@]}"; do claims_row "$g" "$CLAIMS_CH"; done
for c in "${CLAIMS_EXTRA[@]}"; do claims_row 1 "$c"; done
echo "(memauth rows: exhaustive DFS with -DCOLLAPSE, depth = DFS depth; the others: BFS, shortest trail)"

if [[ $QUICK == 0 ]]; then
  echo
  echo "== Non-vacuity probes under GATE_MEMAUTH (expected: reachable = SPIN finds the probe state) =="
  printf '%-3s %-84s %-11s %10s %6s\n' "#" probe observed stored depth
  for w in "${WITNESSES[@]}"; do
    IFS='|' read -r obs st ma tr de se <<<"$(result_of "witness-$w")"
    case "$obs" in counterexample) o=reachable ;; holds) o=UNREACHABLE ;; *) o="$obs" ;; esac
    mark=""
    if [[ "$o" != reachable ]]; then mark="  <-- MISMATCH"; FAIL=1; fi
    printf '%-3s %-84s %-11s %10s %6s%s\n' "$w" "${WDESC[$w]}" "$o" "$st" "$de" "$mark"
  done

  echo
  echo "== Necessity: GATE_MEMAUTH with ONE mechanism removed (expected: counterexample) =="
  printf '%-3s %-84s %-15s %10s %6s\n' "#" "mechanism removed" observed stored depth
  for m in "${MUTANTS[@]}"; do
    IFS='|' read -r obs st ma tr de se <<<"$(result_of "mutant-$m")"
    mark=""
    if [[ "$obs" != counterexample ]]; then mark="  <-- MISMATCH"; FAIL=1; fi
    printf '%-3s %-84s %-15s %10s %6s%s\n' "$m" "${MDESC[$m]}" "$obs" "$st" "$de" "$mark"
  done

  echo
  echo "== Channel matrix: one laundering channel enabled at a time (CE = counterexample; * = differs from expected) =="
  printf '%-22s' "channels"
  for g in "${GATES[@]}"; do printf ' %-16s' "${GNAME[$g]}"; done
  echo
  for c in "${CHROWS[@]}"; do
    printf '%-22s' "$c ${CHNAME[$c]}"
    for g in "${GATES[@]}"; do
      IFS='|' read -r obs st ma tr de se <<<"$(result_of "matrix-$c-$g")"
      if [[ -n "${CHEXP_CE[$g,$c]:-}" ]]; then exp=counterexample; else exp=holds; fi
      case "$obs" in counterexample) cell="CE" ;; holds) cell="holds" ;; *) cell="$obs" ;; esac
      cell="$cell($st)"
      if [[ "$obs" != "$exp" ]]; then cell="*$cell"; FAIL=1; fi
      printf ' %-16s' "$cell"
    done
    echo
  done
  echo "(cells: verdict(states stored); expected CE: content everywhere, lineage only self-summary,"
  echo " naive_corrob only manufactured-corrob, loose_confirm only confirmations; memauth never;"
  echo " display = attacker text attached to a record / a changed page fetched, withheld or stored and read)"
fi

 if [[ $DEEP == 1 ]]; then
  echo
  echo "== Extended bounds, GATE_MEMAUTH, all channels (default: N=3 records, MAXSESS=3, MAXCORR=2, MAXCONF=2, K=2) =="
  printf '%-26s %-10s %-12s %12s %12s %12s %6s %7s\n' bounds expected observed stored matched transitions depth secs
  i=0
  for c in "${DEEPCFG[@]}"; do
    IFS='|' read -r obs st ma tr de se <<<"$(result_of "deep-$i")"
    mark=""
    if [[ "$obs" != holds ]]; then mark="  <-- MISMATCH"; FAIL=1; fi
    printf '%-26s %-10s %-12s %12s %12s %12s %6s %7s%s\n' "$c" holds "$obs" "$st" "$ma" "$tr" "$de" "$se" "$mark"
    i=$((i + 1))
  done
fi

echo
echo "trails: formal/out/{$(cd "$OUT" && ls -- *.trail.txt 2>/dev/null | tr '\n' ',' | sed 's/,$//')}"
echo "total wall time: $(( $(date +%s) - T0 ))s"
if [[ $FAIL == 0 ]]; then echo "RESULT: all observed results match the expected ones"; else echo "RESULT: MISMATCH (see marks above)"; fi
} | tee "$OUT/summary.txt"

# the pipeline above runs in a subshell: recompute FAIL from the saved summary
SPIN_FAIL=0
if grep -q 'MISMATCH' "$OUT/summary.txt"; then SPIN_FAIL=1; fi

# ---------------------------------------------------------------------------
# implementation check: exhaustive enumeration against the real Memory API on
# SQLite (formal/impl/enumerate.ts, compiled to dist/). Exit status non-zero on
# any violation, on a mutant without counterexample, or on a vacuous run.
# ---------------------------------------------------------------------------
IMPL_FAIL=0
if [[ $IMPL == 1 ]]; then
  echo
  node "$ENUM" --mutant all --quiet 2>&1 | tee "$OUT/impl-mutants.txt" || IMPL_FAIL=1
  echo
  if [[ $QUICK == 1 ]]; then
    node "$ENUM" --profile deep --depth 3 --quiet 2>&1 | tee "$OUT/impl.txt" || IMPL_FAIL=1
  else
    node "$ENUM" 2>&1 | tee "$OUT/impl.txt" || IMPL_FAIL=1
  fi
  # belt and braces (pipefail already propagates node's status): both verdict lines must be there
  if ! grep -q '^RESULT: all observed results match the expected ones' "$OUT/impl-mutants.txt" \
     || ! grep -q '^RESULT: all observed results match the expected ones' "$OUT/impl.txt"; then IMPL_FAIL=1; fi
  echo
  if [[ $IMPL_FAIL == 0 ]]; then echo "IMPLEMENTATION CHECK: ok"; else echo "IMPLEMENTATION CHECK: FAILED"; fi
  if [[ $WIDENED == 1 ]]; then
    echo
    run_widened || IMPL_FAIL=1
  fi
fi

if [[ $SPIN_FAIL == 1 || $IMPL_FAIL == 1 ]]; then exit 1; fi
exit 0
