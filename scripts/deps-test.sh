#!/usr/bin/env bash
# Installs what the CPU test suite needs beyond the build (scripts/deps.sh): a single-node Slurm
# (slurmctld, slurmd, sbatch/squeue/sacct) and munge for tests/e2e/slurm.sh, and headless
# Chromium for tests/e2e/report.sh, zsh (and man) for tests/e2e/completion.sh, and numpy for
# python3 (tests/e2e/modules.sh runs the reference process over tests/fake_torch, a numpy stand-in
# for torch). Idempotent: does nothing when the programs are already
# there. SKIP_SLURM=1 leaves Slurm out (the Slurm test then says why it did not run).
set -euo pipefail
need_pkgs=()
if [ "${SKIP_SLURM:-0}" != 1 ]; then
    command -v slurmctld >/dev/null || need_pkgs+=(slurmctld)
    command -v slurmd >/dev/null    || need_pkgs+=(slurmd)
    command -v sbatch >/dev/null    || need_pkgs+=(slurm-client)
    command -v munged >/dev/null    || need_pkgs+=(munge)
fi
command -v chromium >/dev/null || need_pkgs+=(chromium)
command -v zsh >/dev/null      || need_pkgs+=(zsh)
command -v man >/dev/null      || need_pkgs+=(man-db)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    echo "deps-test: installing Debian packages: ${need_pkgs[*]}"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    t0=$(date +%s)
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
    # --no-install-recommends keeps it to the daemons, clients and browser (no mail server, no docs)
    $SUDO apt-get install -o DPkg::Lock::Timeout=600 -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
    echo "deps-test: installed in $(( $(date +%s) - t0 ))s"
fi
if ! python3 -c "import numpy" 2>/dev/null; then
    echo "deps-test: installing numpy for $(command -v python3)"
    python3 -m pip install -q numpy 2>/dev/null || python3 -m pip install -q --break-system-packages numpy
fi
echo "deps-test: ok"
