#!/bin/sh
# Regenerate the README's pictures of the summary comment and the check run: render the
# markdown with cmark-gfm, style it with GitHub's markdown CSS (npm: github-markdown-css) and
# screenshot it with headless Chromium (Debian: apt-get install chromium fonts-noto-color-emoji;
# pngquant, when installed, makes the pictures about a third of their size).
# Run from the repository root: sh docs/screenshots/make.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
chromium=${CHROMIUM:-chromium}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

npm install --silent --no-audit --no-fund --prefix "$work/npm" github-markdown-css@5 >/dev/null
css="$work/npm/node_modules/github-markdown-css/github-markdown-light.css"
(cd "$root" && PYTHONPATH="$root" "$python" "$here/render.py" "$css" "$work/html")

shoot() {
    # $1: page, $2: picture. First ask the page its height, then take it at that height.
    height=$("$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=892,600 --virtual-time-budget=2000 \
        --run-all-compositor-stages-before-draw --dump-dom \
        "file://$1?measure" 2>/dev/null | sed -n 's/.*data-height="\([0-9]*\)".*/\1/p' | head -n 1)
    "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size="892,${height:-1200}" --screenshot="$2" "file://$1" >/dev/null 2>&1
}

for page in "$work"/html/*.html; do
    # a script that writes the page's height where --dump-dom shows it
    printf '<script>document.body.setAttribute("data-height", document.documentElement.scrollHeight + 2)</script>\n' >> "$page"
    shoot "$page" "$here/$(basename "$page" .html).png"
    if command -v pngquant >/dev/null; then
        pngquant --force --skip-if-larger --output "$here/$(basename "$page" .html).png" 64 \
            "$here/$(basename "$page" .html).png" || true
    fi
    echo "$here/$(basename "$page" .html).png"
done
