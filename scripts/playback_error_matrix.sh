#!/usr/bin/env bash
# Playback against the full simulation of the door scene on the held-out sequences H1–H3
# (docs/reduced.md) for each model and offset rule; one CSV row per run:
#   model,precompute_s,rule,sequence,rank,playback_error,projection_error
# precompute_s is read from MODEL.json (the `kestrel precompute --json` output beside it).
# Usage: scripts/playback_error_matrix.sh OUT.csv MODEL.krd...   (KESTREL: the binary; RULES:
# the offset rules to play, default "exponential linear flow"; SEQS: the sequences, default
# "H1 H2 H3", any of H1–H6, H2a, H2b; K: with the flow, average the steps of the K nearest
# frames, `--flow-neighbours K`, the rule written `flow-kK` when K > 1; HYST: with the flow,
# orbit hysteresis H, `--flow-hysteresis H`, `-hH` added to the rule when H is not 1; TAPER=1:
# with the flow and K > 1, `--flow-taper`, `-t` added to the rule)
set -euo pipefail
out="$1"; shift
kestrel="${KESTREL:-target/release/kestrel}"
scene="$(dirname "$0")/../scenes/reduced_door_cloth.toml"
declare -A seqs=(
  [H1]=open:1.3,stop:0.7,close:0.9,stop:1.1,open:0.5,stop:0.6,open:0.8,stop:1.5,close:1.2,stop:2
  [H2]=open:0.9,stop:1.2,open:0.4,stop:0.8,close:1.0,stop:1.6,open:1.1,stop:1.0
  [H3]=open:0.6,stop:0.5,open:0.6,stop:2.0,close:0.7,stop:0.4,open:1.4,stop:1.3
  [H2a]=open:0.95,stop:1.15,open:0.4,stop:0.8,close:1.0,stop:1.6,open:1.1,stop:1.0
  [H2b]=open:0.85,stop:1.25,open:0.4,stop:0.8,close:1.0,stop:1.6,open:1.1,stop:1.0
  [H4]=open:1.05,stop:0.85,close:0.75,stop:1.35,open:0.65,stop:1.45
  [H5]=open:0.45,stop:1.05,open:0.95,stop:0.55,close:1.25,stop:1.75
  [H6]=open:1.45,stop:0.65,close:0.55,stop:0.95,close:0.85,stop:1.2
)
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
trap 'rm -f "$out.tmp" "$out.run.json"' EXIT
echo "model,precompute_s,rule,sequence,rank,playback_error,projection_error" > "$out.tmp"
for model in "$@"; do
  t=$(field "${model%.krd}.json" "d['precompute_s']")
  for rule in ${RULES:-exponential linear flow}; do
    for h in ${SEQS:-H1 H2 H3}; do
      [[ -n "${seqs[$h]:-}" ]] || { echo "unknown sequence $h (H1–H6, H2a, H2b)" >&2; exit 2; }
      k="${K:-1}" label="$rule" nearest=()
      if [[ "$rule" == flow && "$k" != 1 ]]; then label="flow-k$k" nearest=(--flow-neighbours "$k"); fi
      if [[ "$rule" == flow && "${HYST:-1}" != 1 ]]; then label="$label-h$HYST" nearest+=(--flow-hysteresis "$HYST"); fi
      if [[ "$rule" == flow && "${TAPER:-}" == 1 ]]; then label="$label-t" nearest+=(--flow-taper); fi
      "$kestrel" play "$model" --json --offset "$rule" "${nearest[@]}" --compare "$scene" \
        --impulses "${seqs[$h]}" > "$out.run.json"
      row=$(field "$out.run.json" "f\"{d['rank']},{d['compare']['playback_error']},{d['compare']['projection_error']}\"")
      echo "$(basename "$model" .krd),$t,$label,$h,$row" >> "$out.tmp"
    done
  done
done
rm -f "$out.run.json"
mv "$out.tmp" "$out"
