#!/usr/bin/env bash
# The layer check (docs/architecture.md, "Layers"): a file under src/FOLDER/ may include only
# its own folder and folders of lower layers; runner/ only common/ and util/. The order is read
# from the line "layers: cmd > suite > ..." of docs/architecture.md (folders of one layer are
# named together and may not include each other). Prints each violation as FILE:LINE and
# exits 1 when there is one.
# usage: scripts/check-layers.sh [ROOT]   (ROOT: the repository, default the current one)
set -u
root=${1:-.}
arch="$root/docs/architecture.md"
order=$(sed -n 's/^layers: *//p' "$arch" 2>/dev/null | head -n 1)
if [ -z "$order" ]; then
    echo "check-layers: no 'layers: ...' line in $arch" >&2
    exit 2
fi
declare -A rank
n=0
IFS='>' read -r -a groups <<<"$order"
for ((i = ${#groups[@]} - 1; i >= 0; i--)); do
    for f in ${groups[$i]}; do rank[$f]=$n; done
    n=$((n + 1))
done
bad=0
violation() { echo "$1: $2"; bad=1; }
for f in "$root"/src/*.[ch]; do
    [ -e "$f" ] && violation "${f#"$root"/}" "a source file outside the layer folders of src/"
done
for dir in "$root"/src/*/; do
    d=$(basename "$dir")
    if [ -z "${rank[$d]+x}" ]; then
        violation "src/$d/" "a folder in no layer: add it to the 'layers:' line of docs/architecture.md"
        continue
    fi
    while IFS=: read -r file line inc; do
        t=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/.*/\1/p' <<<"$inc")
        [ -z "$t" ] || [ "$t" = "$d" ] && continue
        if [ -z "${rank[$t]+x}" ]; then
            violation "${file#"$root"/}:$line" "includes '$t/', a folder in no layer"
        elif [ "${rank[$t]}" -ge "${rank[$d]}" ]; then
            violation "${file#"$root"/}:$line" "$d/ includes $t/, which is not below it ($order)"
        fi
    done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$dir"*.[ch] /dev/null)
done
while IFS=: read -r file line inc; do
    t=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/.*/\1/p' <<<"$inc")
    case "$t" in
    "" | common | util) ;;
    *) violation "${file#"$root"/}:$line" "runner/ includes $t/: the runner links only common/ and util/" ;;
    esac
done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$root"/runner/*.c "$root"/runner/*.h "$root"/runner/*.cu /dev/null 2>/dev/null)
if [ $bad = 0 ]; then
    echo "layers: ok ($order)"
fi
exit $bad
