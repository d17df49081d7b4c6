#!/bin/sh
# Every C source names the licence that LICENSE holds: LGPL-2.1-or-later.
set -eu
cd "$(dirname "$0")/.."
grep -q 'GNU LESSER GENERAL PUBLIC LICENSE' LICENSE && grep -q 'Version 2.1, February 1999' LICENSE || {
        echo "LICENSE: not the LGPL 2.1 text that the SPDX headers name" >&2
        exit 1
}
bad=$(git ls-files '*.c' '*.h' | while read -r f; do
        head -n 3 "$f" | grep -q 'SPDX-License-Identifier: LGPL-2.1-or-later' || echo "$f"
done)
if [ -n "$bad" ]; then
        echo "no 'SPDX-License-Identifier: LGPL-2.1-or-later' in the first lines of:" >&2
        echo "$bad" >&2
        exit 1
fi
echo "licence: LICENSE and $(git ls-files '*.c' '*.h' | wc -l) SPDX headers agree (LGPL-2.1-or-later)"
