#!/usr/bin/python3
"""The HTML coverage report in a real browser (issue 16): Debian's
chromium, headless, driven through chromedriver's W3C WebDriver API on
127.0.0.1, loads a report made from a real scan (the CUDA libraries of
/usr/local/cuda/lib64 and an nvcc-built library with sm_80 SASS and
compute_80 PTX, against the example configuration's tiers), reads the
rendered grid back (cells per tier, the computed colour of each verdict)
and keeps a screenshot.

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
                colour: getComputedStyle(td).backgroundColor,
                shown: td.getBoundingClientRect().width > 0 && td.innerText.trim().length > 0}))}))""")
        self.assertEqual([g["tier"] for g in grids], [t["name"] for t in self.scan["tiers"]])
        seen = set()
        for grid, tier in zip(grids, self.scan["tiers"]):
            self.assertEqual(grid["columns"], len(tier["gpus"]))
            verdicts = [c["verdict"] for row in tier["rows"] for c in row["cells"]]
            self.assertEqual([c["verdict"] for c in grid["cells"]], verdicts)
            for c in grid["cells"]:
                self.assertTrue(c["shown"])
                self.assertEqual(c["colour"], COLOURS[c["verdict"]], c["verdict"])
                seen.add(c["verdict"])
        # The example tiers and these libraries give every kind of cell that matters.
        self.assertTrue({"native", "jit", "none", "partial"} <= seen, seen)
        shot = webdriver(self.port, "GET", "/session/%s/screenshot" % self.session)
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, "coverage-report.png"), "wb") as f:
            f.write(base64.b64decode(shot))
        shutil.copy(self.page, os.path.join(OUT, "coverage-report.html"))
        print("screenshot: " + os.path.join(OUT, "coverage-report.png"), flush=True)


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
