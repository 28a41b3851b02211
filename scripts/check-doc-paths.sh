#!/usr/bin/env bash
# Dangling pointers: every path into the tree (docs/..., src/..., tests/..., scripts/...,
# runner/..., kernels/..., prompts/..., bench/..., tasks/..., tools/...) named in README.md,
# docs/*.md, docs/cli/*.txt and the comments of src/ and runner/ must exist. Paths with
# placeholders (NAME, N, *, {a,b}, ...) are skipped. Prints FILE:LINE: PATH for each missing
# one and exits 1 when there is one.
# usage: scripts/check-doc-paths.sh [ROOT]
set -u
root=${1:-.}
cd "$root" || exit 2
bad=0
files=$(ls README.md docs/*.md docs/cli/*.txt src/*/*.[ch] runner/*.[ch] runner/*.cu 2>/dev/null)
while IFS=: read -r file line path; do
    path=${path%.}
    path=${path%,}
    path=${path%:}
    case "$path" in
    *[A-Z][A-Z]* | *'*'* | *'{'* | *'<'* | *'$'* | *'...'* | *N.* | */N | */NNN*) continue ;;
    esac
    if [ ! -e "$path" ]; then
        echo "$file:$line: $path does not exist"
        bad=1
    fi
done < <(grep -HnoE '(^|[^A-Za-z0-9_./-])(docs|src|tests|scripts|runner|kernels|prompts|bench|tasks|tools)/[A-Za-z0-9_./*{}<>$-]*[A-Za-z0-9_*}>/]' $files |
    sed -E 's/^([^:]*):([0-9]*):[^a-z]*/\1:\2:/')
# a bare NAME.md names a page of docs/ (or of the root: README.md)
while IFS=: read -r file line name; do
    name=${name#[!A-Za-z]}
    case "$name" in OUT.md | FILE.md | NAME.md | PATH.md) continue ;; esac
    if [ ! -e "docs/$name" ] && [ ! -e "$name" ] && [ ! -e "$(dirname "$file")/$name" ]; then
        echo "$file:$line: $name is neither docs/$name nor a file of the root"
        bad=1
    fi
done < <(grep -HnoE '(^|[^A-Za-z0-9_./-])[A-Za-z_-]+\.md\b' $files | sed -E 's/^([^:]*):([0-9]*):[^A-Za-z]*/\1:\2:/')
[ $bad = 0 ] && echo "doc paths: ok"
exit $bad
