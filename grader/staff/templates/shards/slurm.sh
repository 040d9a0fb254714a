#!/bin/bash
# Written by `micrograde template slurm`: a class graded in $shards shards, as a Slurm job array.
#
#   job=$$(sbatch --parsable micrograde-batch.sh)
#   sbatch --dependency=afterok:$$job --wrap 'micrograde batch-merge results/shard-* --out results/class'
#
# The first grades: each task of the array grades one shard of the class (`micrograde batch --shard K/$shards`,
# K its SLURM_ARRAY_TASK_ID) into a folder of its own; the second, once every task has ended well, writes
# the class's reports, gradebooks and summary from them, the same files as one batch (run both from the
# folder that holds submissions/ and results/, or set the two variables below and give the merge its paths). MICROGRADE_CLASS is the
# folder of submissions (one file or folder a student) on the cluster's shared file system, and
# MICROGRADE_RESULTS where the results go. The course's configuration is written into this script: a
# micrograde.toml among the submissions is never read.
#SBATCH --job-name=micrograde
#SBATCH --array=1-$shards
#SBATCH --cpus-per-task=2
#SBATCH --time=24:00:00
set -euo pipefail
class="$${MICROGRADE_CLASS:-$$PWD/submissions}"
results="$${MICROGRADE_RESULTS:-$$PWD/results}"
course="$$(mktemp -d)"
trap 'rm -rf "$$course"' EXIT
cat > "$$course/$config_name" <<'MICROGRADE_COURSE'
$config
MICROGRADE_COURSE
micrograde batch "$$class" --out "$$results/shard-$$SLURM_ARRAY_TASK_ID" --shard "$$SLURM_ARRAY_TASK_ID/$shards" \
  --jobs "$${SLURM_CPUS_PER_TASK:-2}" --config "$$course/$config_name"
