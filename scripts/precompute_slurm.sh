#!/usr/bin/env bash
# Precompute a reduced model as a Slurm job array of N shards and a merge job that runs when
# all succeeded (docs/reduced.md). Usage: scripts/precompute_slurm.sh SCENE N MODEL [ARGS...]
# The scene and PARTS (default ./parts) must be on a file system every node sees.
set -euo pipefail
scene=$1 n=$2 model=$3
shift 3
kestrel=${KESTREL:-kestrel}
parts=${PARTS:-parts}
mkdir -p "$parts"
array=$(sbatch --parsable --array=1-"$n" --cpus-per-task="${CPUS:-4}" \
    --job-name=kestrel-shard --output="$parts/shard-%a.log" \
    --wrap "RAYON_NUM_THREADS=\$SLURM_CPUS_PER_TASK $kestrel precompute $scene \
        --shard \$SLURM_ARRAY_TASK_ID/$n --out $parts/part\$SLURM_ARRAY_TASK_ID.krp --json $*")
sbatch --dependency=afterok:"$array" --job-name=kestrel-merge --output="$parts/merge.log" \
    --wrap "$kestrel precompute merge $parts/part*.krp --out $model --json"
echo "submitted shards $array (1-$n) and their merge"
