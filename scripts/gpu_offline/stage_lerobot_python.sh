#!/usr/bin/env bash
# Stages Python LeRobot's source and the pure-Python packages its ACT, Diffusion and π modelling
# code imports into ./.dev/lerobot_python.tgz (a python/ tree, 8 MB packed, 43 MB unpacked before
# transformers; ~17 MB packed with it (estimate, not re-run): the device carries 64 MiB at most;
# git-ignored), for bench/train_step/lerobot_step.py and lerobot_pi_step.py on a GPU machine
# that has pip PyTorch (torch, torchvision, numpy, pillow and torch's own requirements) but no
# package registry. Called by prepare.sh; run alone in the project root as well.
#   tar xzf .dev/lerobot_python.tgz -C /tmp && PYTHONPATH=/tmp/python \
#     python3 bench/train_step/lerobot_step.py --policy=act --device=cuda     (gpu_check.sh does this)
# Sources: the bare git mirrors in $MIRRORS (git archive of a recorded revision) and Debian's
# pure-Python packages (apt-get download + dpkg-deb -x, their site-packages directory only).
# Writes python/REVISIONS.txt into it. Nothing here is committed (.dev is in .git/info/exclude).
set -euo pipefail
MIRRORS=${MIRRORS:-/work/.mirror}
mkdir -p .dev
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
D=$W/python
mkdir -p "$D"
rev_file=$D/REVISIONS.txt
# name  mirror  revision  path inside the repository (copied as $D/<name>)
# LeRobot 7427f3180: main after 0.6.2, whose policies/ equal 0.6.2's (docs/PYTHON_RUNS.md);
# diffusers v0.39.0 (LeRobot asks for >=0.38,<0.40); draccus and huggingface_hub as the reference
# chroot has them (docs/PYTHON_RUNS.md); Gymnasium (lerobot.envs, imported by its configs) likewise.
while read -r name mirror rev path; do
  g="git --git-dir=$MIRRORS/$mirror/repo"
  commit=$($g rev-parse "$rev^{commit}")
  # (a partial mirror may lack blobs outside $path: git archive then complains but writes $path)
  t=$W/archive; rm -rf "$t"; mkdir -p "$t"
  { $g archive --format=tar "$commit" "$path" 2>/dev/null || true; } | tar -x -C "$t"
  [ -f "$t/$path/__init__.py" ] || { echo "stage_lerobot_python: $mirror $rev has no $path" >&2; exit 1; }
  mv "$t/$path" "$D/$name"
  echo "$name $mirror $rev $commit $path" >>"$rev_file"
done <<'LIST'
lerobot huggingface+lerobot 7427f31801f944f5ec9ce53cda02862ce7d1638b src/lerobot
draccus dlwh+draccus 13dd58f0c67002add8a188d85ba0e74661039078 draccus
huggingface_hub huggingface+huggingface_hub ee0a4510f4bc15e26cb722be2efc2bdb01383ca0 src/huggingface_hub
diffusers huggingface+diffusers v0.39.0 src/diffusers
gymnasium Farama-Foundation+Gymnasium 3f0476a8cc224dcce2167cc4b6971ae0f04d5cfc gymnasium
farama_notifications Farama-Foundation+Farama-Notifications 501c65764d2f412a65669516edef6c1a11dd64c9 farama_notifications
LIST
# LeRobot checks diffusers' version through importlib.metadata: a bare dist-info answers it.
mkdir -p "$D/diffusers-0.39.0.dist-info"
printf 'Metadata-Version: 2.1\nName: diffusers\nVersion: 0.39.0\n' >"$D/diffusers-0.39.0.dist-info/METADATA"
# transformers (π's modelling code, bench/train_step/lerobot_pi_step.py) checks huggingface_hub's
# version at import ("huggingface-hub>=1.5.0,<2.0"): likewise, with the version the source declares.
hv=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$D/huggingface_hub/__init__.py")
mkdir -p "$D/huggingface_hub-$hv.dist-info"
printf 'Metadata-Version: 2.1\nName: huggingface_hub\nVersion: %s\n' "$hv" >"$D/huggingface_hub-$hv.dist-info/METADATA"
# Debian 13's pure-Python packages that a pip-PyTorch machine lacks, found by running
# lerobot_step.py for ACT and Diffusion with only the standard library, torch's and torchvision's
# pip requirements and .dev/python importable (python3 -S; docs/BENCHMARKS.md). Debian 13's (not
# this machine's release): bookworm has no einops and older httpx/packaging than huggingface_hub's
# main wants. Fetched with a private apt state (nothing installed, the system's lists untouched).
DEBS=${DEBS:-"python3-mergedeep python3-typing-inspect python3-mypy-extensions python3-httpx python3-httpcore
  python3-h11 python3-idna python3-certifi python3-tqdm python3-yaml python3-packaging python3-requests
  python3-urllib3 python3-chardet python3-einops"}
# π (lerobot_pi_step.py) adds transformers: Debian unstable's python3-transformers (5.12.1 there,
# pure Python, 8.6 MB packed; the reference chroot's, docs/PYTHON_RUNS.md: LeRobot pins <5.6, which
# no archive here has). Its import-time needs beyond this list were found by running
# lerobot_pi_step.py under python3 -S with only torch's requirements and this tree importable:
# huggingface_hub's dist-info (above) and the compiled safetensors, regex and tokenizers, for which
# lerobot_pi_step.py installs import-only stand-ins (regex: the standard library's re).
# Not its other Debian dependencies (tokenizers, safetensors: compiled; typer, hf-xet: unused).
UNSTABLE_DEBS=${UNSTABLE_DEBS:-"python3-transformers"}
SUITE=${SUITE:-trixie}
uri=$(grep -m1 '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | awk '{print $2}')
fetch_debs() {  # fetch_debs SUITE PACKAGES...: their dist-packages into $D, a line each in REVISIONS
  local suite=$1; shift
  [ $# -gt 0 ] || return 0
  local t; t=$(mktemp -d); mkdir -p "$t/lists/partial" "$t/cache/partial" "$t/x"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${uri:-http://deb.debian.org/debian} $suite main" >"$t/sources.list"
  local A=(-o Dir::Etc::sourcelist="$t/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$t/lists"
     -o Dir::Cache="$t/cache" -o APT::Get::List-Cleanup=0)
  apt-get "${A[@]}" update -qq && (cd "$t" && apt-get "${A[@]}" download "$@" >/dev/null)
  for deb in $(ls "$t"/*.deb 2>/dev/null); do
    dpkg-deb -x "$deb" "$t/x"
    echo "$(dpkg-deb -f "$deb" Package) debian-$suite $(dpkg-deb -f "$deb" Version) $(dpkg-deb -f "$deb" Architecture)" >>"$rev_file"
  done
  [ -d "$t/x/usr/lib/python3/dist-packages" ] && cp -a "$t"/x/usr/lib/python3/dist-packages/. "$D/"
  rm -rf "$t"
}
fetch_debs "$SUITE" $DEBS
fetch_debs unstable $UNSTABLE_DEBS
# Not staged (compiled; LeRobot imports them at module level but the step never calls them):
# cv2 (lerobot.policies.groot's processor, through lerobot.policies' factory) and safetensors
# (lerobot.policies.pretrained). lerobot_step.py puts an import-only stand-in in their place only
# where the machine has none, and says so. For π, lerobot_pi_step.py adds transformers' compiled
# import-time needs (tokenizers: import-only classes; regex: the standard library's re) and answers
# importlib.metadata for all of them.
# PyYAML's optional C loader is built for Debian's Python and libyaml: drop it (yaml falls back to Python).
find "$D" -name '*.so' -print -delete | sed 's/^/removed compiled file: /'
find "$D" -name __pycache__ -prune -exec rm -rf {} +
tar czf .dev/lerobot_python.tgz -C "$W" python
echo "stage_lerobot_python: $(wc -l <"$rev_file") packages ($(du -sh "$D" | cut -f1)) into .dev/lerobot_python.tgz:"
sed 's/^/  /' "$rev_file"
