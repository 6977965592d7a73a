"""A screenshot of ``polyparse serve``'s page with a fractional LP drawn, for the README.

    python eval/serve_screenshot.py [--model M] [--text TEXT]

Trains an order-2 model decoded by the LP on the sample treebank (the README's
higher-order command, small: 2 epochs, jackknife 3; kept in ``eval/results/tmp/``)
unless ``--model`` is given, serves it on 127.0.0.1, and in headless Chromium (from the
system's packages, driven as ``tests/test_browser.py`` drives it) types ``--text`` into
the page, switches the LP relaxation on and presses Parse. It checks that the page drew
the LP panel with fractional arcs, and writes the page as ``eval/results/serve.png``.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

from _common import REPO, RESULTS, kept_model

sys.path.insert(0, str(REPO / "tests"))

from browser import Browser, chromium  # noqa: E402

TEXT = "What did she believe Oscar will wash happily?"
"""A sentence whose LP optimum is fractional under the default model (half-integral)."""


def trained_model(args) -> Path:
    sample = REPO / "corpora" / "sample"

    def train(path: Path) -> None:
        subprocess.run(["polyparse", "-q", "train", "--train", str(sample / "train.conllu"),
                        "--dev", str(sample / "dev.conllu"), "--model", str(path),
                        "--order", "2", "--decoder", "lp", "--epochs", "2",
                        "--jackknife", "3", "--tagger-epochs", "4"], check=True)

    return kept_model(args.model, "serve_screenshot_order2", train)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None, help="a model to serve instead")
    ap.add_argument("--text", default=TEXT)
    args = ap.parse_args()
    binary = chromium()
    if binary is None:
        sys.exit("no Chromium on the PATH: apt-get install chromium")
    model = trained_model(args)
    server = subprocess.Popen(["polyparse", "serve", "--model", str(model), "--port", "0"],
                              stderr=subprocess.PIPE, text=True)
    line = server.stderr.readline()
    url = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
    if not url:
        server.kill()
        sys.exit(f"polyparse serve did not start: {line}")
    threading.Thread(target=server.stderr.read, daemon=True).start()
    browser = Browser(binary, width=1100, height=900)
    try:
        browser.open(url.group(1))
        browser.click("#text")
        browser.type(args.text)
        browser.click("#lp")
        browser.click("#parse")
        browser.wait_for("document.body.dataset.answers === '1'")
        error = browser.evaluate("document.getElementById('error').textContent")
        if error:
            sys.exit(f"the page says: {error}")
        values = browser.evaluate("Array.from(document.querySelectorAll('svg.panel.lp "
                                  "g.arc')).map(g => +g.dataset.value)")
        fractional = sum(1 for v in values if 1e-6 < v < 1 - 1e-6)
        if not fractional:
            sys.exit(f"the LP of {args.text!r} is integral under {model}: choose another "
                     "sentence (--text)")
        browser.evaluate("document.getElementById('conllu-box').open = false")
        browser.screenshot(RESULTS / "serve.png")
        print(f"{RESULTS / 'serve.png'}: {args.text!r}, {fractional} fractional LP arcs; "
              + browser.evaluate("document.getElementById('status').textContent"))
    finally:
        browser.close()
        server.send_signal(signal.SIGTERM)
        server.wait(60)


if __name__ == "__main__":
    main()
