#!/usr/bin/python3
"""The HTML coverage report in a real browser (issue 16): Debian's
chromium, headless, driven through chromedriver's W3C WebDriver API on
127.0.0.1, loads a report made from a real scan (the CUDA libraries of
/usr/local/cuda/lib64 and an nvcc-built library with sm_80 SASS and
compute_80 PTX, against the example configuration's tiers), reads the
rendered grid back (cells per tier, the computed colour of each verdict
and cause), clicks cells open to read their whole reason (issue 29: no
script, <details>), reads the legend's causes and keeps a screenshot.

usage: browser_test.py ORCHESTRATE OUT_DIR   (exit 77: cannot run here, with why)
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
ORC = OUT = None

# The page's colours (render_coverage.cpp), as getComputedStyle reports them.
COLOURS = {"native": "rgb(183, 235, 198)", "jit": "rgb(251, 226, 154)", "none": "rgb(247, 168, 168)",
           "partial": "rgb(227, 194, 243)", "run-time": "rgb(185, 227, 244)", "no-kernels": "rgb(230, 230, 230)",
           "link": "rgb(230, 230, 230)"}
# A cell the driver makes none (or partial): its own colour, the legend's too.
DRIVER = "rgb(249, 201, 143)"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def webdriver(port, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read())["value"]


class Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="orc-browser-", dir="/tmp")
        root = os.path.join(cls.work, "rootfs")
        lib = os.path.join(root, "usr", "local", "cuda", "lib64")
        os.makedirs(lib)
        for name in ("libcublas.so.13", "libcufft.so.12", "libcurand.so.10", "libcudnn_ops.so.9", "libnccl.so.2",
                     "libcudart.so.13"):
            shutil.copy(os.path.join("/usr/local/cuda/lib64", name), lib)
        cu = os.path.join(cls.work, "k.cu")
        with open(cu, "w") as f:
            f.write("__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n"
                    "extern \"C\" void run(float* x) { k<<<1, 32>>>(x); }\n")
        os.makedirs(os.path.join(root, "usr", "lib"))
        subprocess.run(["/usr/local/cuda/bin/nvcc", "-shared", "-Xcompiler", "-fPIC", "-gencode",
                        "arch=compute_80,code=[sm_80,compute_80]", "-o", os.path.join(root, "usr", "lib", "libapp.so"),
                        cu], check=True)
        cls.page = os.path.join(cls.work, "report.html")
        scan = subprocess.run([ORC, "inspect", root, "-f", os.path.join(SOURCE, "recipes", "orchestrate.yaml"),
                               "--json", "--report", cls.page], capture_output=True, text=True)
        if scan.returncode not in (0, 1):
            raise RuntimeError("inspect failed (%d): %s" % (scan.returncode, scan.stderr))
        cls.scan = json.loads(scan.stdout)
        cls.port = free_port()
        cls.driver = subprocess.Popen(["/usr/bin/chromedriver", "--port=%d" % cls.port, "--allowed-ips=127.0.0.1"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                webdriver(cls.port, "GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1500,2400", "--user-data-dir=" + os.path.join(cls.work, "profile")]}}}}
        cls.session = webdriver(cls.port, "POST", "/session", caps)["sessionId"]

    @classmethod
    def tearDownClass(cls):
        try:
            webdriver(cls.port, "DELETE", "/session/" + cls.session)
        finally:
            cls.driver.terminate()
            cls.driver.wait(timeout=30)
            shutil.rmtree(cls.work, ignore_errors=True)

    def js(self, script):
        return webdriver(self.port, "POST", "/session/%s/execute/sync" % self.session, {"script": script, "args": []})

    def test_the_rendered_grid_is_the_scan(self):
        webdriver(self.port, "POST", "/session/%s/url" % self.session, {"url": "file://" + self.page})
        grids = self.js("""return [...document.querySelectorAll('table.grid')].map(t => ({
            tier: t.dataset.tier,
            columns: t.querySelectorAll('thead th').length - 1,
            cells: [...t.querySelectorAll('td.cell')].map(td => ({
                verdict: td.dataset.verdict,
                cause: td.dataset.cause,
                colour: getComputedStyle(td).backgroundColor,
                shown: td.getBoundingClientRect().width > 0 && td.innerText.trim().length > 0}))}))""")
        self.assertEqual([g["tier"] for g in grids], [t["name"] for t in self.scan["tiers"]])
        seen = set()
        for grid, tier in zip(grids, self.scan["tiers"]):
            self.assertEqual(grid["columns"], len(tier["gpus"]))
            verdicts = [(c["verdict"], c["cause"]) for row in tier["rows"] for c in row["cells"]]
            self.assertEqual([(c["verdict"], c["cause"]) for c in grid["cells"]], verdicts)
            for c in grid["cells"]:
                self.assertTrue(c["shown"])
                self.assertEqual(c["colour"], DRIVER if c["cause"] == "driver" else COLOURS[c["verdict"]], c)
                seen.add(c["verdict"])
                seen.add("cause " + c["cause"])
        # The example tiers and these libraries give every kind of cell that
        # matters: the CUDA 13 libraries need a newer driver than tier-new's.
        self.assertTrue({"native", "jit", "none", "partial", "cause driver", "cause missing-code", "cause jit"} <= seen,
                        seen)
        shot = webdriver(self.port, "GET", "/session/%s/screenshot" % self.session)
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, "coverage-report.png"), "wb") as f:
            f.write(base64.b64decode(shot))
        shutil.copy(self.page, os.path.join(OUT, "coverage-report.html"))
        print("screenshot: " + os.path.join(OUT, "coverage-report.png"), flush=True)


    def click(self, css):
        found = webdriver(self.port, "POST", "/session/%s/element" % self.session,
                          {"using": "css selector", "value": css})
        element = next(iter(found.values()))
        webdriver(self.port, "POST", "/session/%s/element/%s/click" % (self.session, element), {})

    def test_a_click_on_a_cell_shows_its_whole_reason(self):
        webdriver(self.port, "POST", "/session/%s/url" % self.session, {"url": "file://" + self.page})
        # The first cell of each cause, by its place in the page.
        wanted = {}
        for t, tier in enumerate(self.scan["tiers"]):
            for r, row in enumerate(tier["rows"]):
                for c, cell in enumerate(row["cells"]):
                    wanted.setdefault(cell["cause"], (t, r, c, cell["why"]))
        self.assertTrue({"driver", "missing-code", "jit", "runs"} <= set(wanted), wanted.keys())
        for cause in ("driver", "missing-code", "jit", "runs"):
            t, r, c, why = wanted[cause]
            css = ("table.grid[data-tier='%s'] tbody tr:nth-child(%d) td.cell:nth-of-type(%d)"
                   % (self.scan["tiers"][t]["name"], r + 1, c + 1))
            read = """const td = document.querySelector(arguments[0]);
                const why = td.querySelector('details .why');
                return {open: td.querySelector('details').open, text: why.textContent,
                        visible: why.checkVisibility(), shown: td.innerText, cause: td.dataset.cause};"""
            before = webdriver(self.port, "POST", "/session/%s/execute/sync" % self.session,
                               {"script": read, "args": [css]})
            self.assertEqual(before["cause"], cause)
            # In the page whole, shown only once asked for.
            self.assertEqual(before["text"], why)
            self.assertFalse(before["open"])
            self.assertFalse(before["visible"], cause)
            self.assertNotIn(" ".join(why.split()), " ".join(before["shown"].split()))
            self.click(css + " summary")
            after = webdriver(self.port, "POST", "/session/%s/execute/sync" % self.session,
                              {"script": read, "args": [css]})
            self.assertTrue(after["open"], cause)
            self.assertTrue(after["visible"], cause)
            # What the reader sees in the cell: the whole reason.
            self.assertIn(" ".join(why.split()), " ".join(after["shown"].split()))
            self.assertEqual(after["text"], why)
        # The driver's reason is the one the issue saw cut: whole now.
        self.assertIn("needs driver >= ", wanted["driver"][3])

    def test_the_legend_tells_the_causes_apart(self):
        webdriver(self.port, "POST", "/session/%s/url" % self.session, {"url": "file://" + self.page})
        legend = self.js("""return [...document.querySelectorAll('p.legend span')].map(s => ({
            cause: s.dataset.cause, text: s.innerText, colour: getComputedStyle(s).backgroundColor}))""")
        by_text = {l["text"].split(":")[0]: l for l in legend}
        self.assertEqual(by_text["none (driver)"]["cause"], "driver")
        self.assertEqual(by_text["none (driver)"]["colour"], DRIVER)
        self.assertIn("too old", by_text["none (driver)"]["text"])
        self.assertEqual(by_text["none"]["cause"], "missing-code")
        self.assertIn("no kernel image", by_text["none"]["text"])
        self.assertEqual(by_text["none"]["colour"], COLOURS["none"])
        self.assertEqual(by_text["jit"]["cause"], "jit")
        self.assertIn("JIT", by_text["jit"]["text"])
        self.assertEqual(by_text["native"]["colour"], COLOURS["native"])


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    OUT = os.path.abspath(sys.argv.pop(2))
    ORC = os.path.abspath(sys.argv.pop(1))
    for tool in ("/usr/bin/chromium", "/usr/bin/chromedriver", "/usr/local/cuda/bin/nvcc"):
        if not os.path.exists(tool):
            print("browser test skipped: no %s (scripts/install-deps.sh --test installs chromium and "
                  "chromium-driver)" % tool, flush=True)
            sys.exit(77)
    unittest.main(verbosity=2)
