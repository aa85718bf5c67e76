#!/usr/bin/python3
"""Image coverage and stamping against a real dockerd and a real registry
(issue 16). The images are made byte by byte (image_fixture.py) from
libraries nvcc builds here: one with sm_80 SASS only, one with sm_80 SASS
and compute_80 PTX. Started here, stopped here by PID (the scripts'): the
dockerd, a registry, and a second registry that asks for a password
(htpasswd) for the credentialed references of issue 28.

usage: coverage_test.py ORCHESTRATE   (exit 77: cannot run here, with why)
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
import image_fixture as fx  # noqa: E402

ORC = None
WORK = None
SOCK = None
REGISTRY = None
AUTH_REGISTRY = None  # one that asks for Basic auth (htpasswd)
PASSWORD = "Pw-9f3kQz"
AUTH = "orc:" + PASSWORD
DEEP = 100000  # levels of the hostile config: 195 KiB
LIBS = {}
ENV = None
PADDED = 0  # the padded layer's size

KERNEL = r"""
__global__ void scale(float* x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
extern "C" int launch(float* x, float a, int n) { scale<<<(n + 255) / 256, 256>>>(x, a, n); return (int)cudaGetLastError(); }
"""

# File names that are Markdown: pipes, backticks, a line break.
MD_NAMES = ["a|b`c``d.so", "nl\n| x | y |.so"]

TIERS = """tiers:
  tier-hopper:
    gpus: ["H100", "H200"]
    driver: "580.65.06"
  tier-ampere:
    gpus: ["A100", "RTX 3090"]
    driver: "580.65.06"
recipes: []
"""


def slurp(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def skip(reason):
    print("coverage suite skipped: " + reason, flush=True)
    sys.exit(77)


def run(*args, check=None):
    p = subprocess.run([ORC] + list(args), capture_output=True, text=True, env=ENV, timeout=600)
    if check is not None and p.returncode != check:
        raise AssertionError("orchestrate %s: exit %d, wanted %d\nstdout:\n%s\nstderr:\n%s"
                             % (" ".join(args), p.returncode, check, p.stdout, p.stderr))
    return p


def setUpModule():
    global WORK, SOCK, REGISTRY, AUTH_REGISTRY, ENV
    WORK = tempfile.mkdtemp(prefix="orc-cov-", dir="/tmp")
    nvcc = "/usr/local/cuda/bin/nvcc"
    with open(os.path.join(WORK, "k.cu"), "w") as f:
        f.write(KERNEL)
    for name, code in (("sm80", "sm_80"), ("ptx", "[sm_80,compute_80]")):
        out = os.path.join(WORK, "lib%s.so" % name)
        subprocess.run([nvcc, "-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_80,code=" + code,
                        "-o", out, os.path.join(WORK, "k.cu")], check=True, cwd=WORK)
        LIBS[name] = slurp(out, "rb")
    sock = subprocess.run([os.path.join(SOURCE, "scripts/start-dockerd.sh"), os.path.join(WORK, "d"), "90"],
                          capture_output=True, text=True)
    if sock.returncode != 0:
        raise RuntimeError("start-dockerd.sh failed: " + sock.stderr)
    SOCK = sock.stdout.strip().splitlines()[-1]
    reg = subprocess.run([os.path.join(SOURCE, "scripts/start-registry.sh"), os.path.join(WORK, "r")],
                         capture_output=True, text=True)
    if reg.returncode != 0:
        raise RuntimeError("start-registry.sh failed: " + reg.stderr)
    REGISTRY = "127.0.0.1:" + slurp(os.path.join(WORK, "r", "port")).strip()
    reg = subprocess.run([os.path.join(SOURCE, "scripts/start-registry.sh"), os.path.join(WORK, "ra"), "--user", AUTH],
                         capture_output=True, text=True)
    if reg.returncode != 0:
        raise RuntimeError("start-registry.sh --user failed: " + reg.stderr)
    AUTH_REGISTRY = "127.0.0.1:" + slurp(os.path.join(WORK, "ra", "port")).strip()
    with open(os.path.join(WORK, "tiers.yaml"), "w") as f:
        f.write(TIERS)
    ENV = dict(os.environ, DOCKER_HOST="unix://" + SOCK, NO_COLOR="1", TMPDIR=os.path.join(WORK, "tmp"))
    os.makedirs(ENV["TMPDIR"])

    base = fx.layer([("dir", "usr"), ("dir", "usr/lib"), ("file", "usr/lib/libk.so", LIBS["sm80"]),
                     ("file", "usr/lib/libgone.so", LIBS["ptx"])])
    delete = fx.layer([("whiteout", "usr/lib/libgone.so")])
    replace = fx.layer([("dir", "usr"), ("dir", "usr/lib"), ("file", "usr/lib/libk.so", LIBS["ptx"])])
    fx.load(SOCK, fx.docker_archive([base, delete], "cov:sm80"))
    fx.load(SOCK, fx.docker_archive([base, delete, replace], "cov:ptx"))
    fx.push(REGISTRY, "cov/img", "sm80", [base, delete])
    fx.push(REGISTRY, "cov/img", "ptx", [base, delete, replace],
            env=["PATH=/bin", "NVIDIA_REQUIRE_CUDA=cuda>=12.0 brand=tesla,driver>=470,driver<471"])
    ok = fx.layer([("dir", "usr"), ("file", "usr/x", b"x")])
    fx.push(REGISTRY, "cov/bad", "dotdot", [ok, fx.layer([("file", "usr/../../etc/evil", b"x")])])
    fx.push(REGISTRY, "cov/bad", "hardlink", [ok, fx.layer([("hardlink", "usr/passwd", "../../etc/passwd")])])
    fx.push(REGISTRY, "cov/bad", "huge", [ok, fx.layer([("declare", "usr/big", 5 << 30)])])
    # A plain tar padded far past its end blocks (tar pads to its record size;
    # nothing stops a writer padding more): the scan must read the blob to its
    # end, or the download is cut and the digest never checked.
    global PADDED
    PADDED = len(base) + (4 << 20)
    fx.push(REGISTRY, "cov/img", "padded", [base + b"\0" * (4 << 20)], compress=False)

    # Issue 28: a config nested 100,000 deep, a config that switches the
    # toolkit's checks off, a registry behind a password, names that are
    # Markdown.
    fx.push(REGISTRY, "cov/deep", "ptx", [base, delete, replace], extra=b"[" * DEEP + b"]" * DEEP)
    disable = ["PATH=/bin", "NVIDIA_DISABLE_REQUIRE=1"]
    fx.push(REGISTRY, "cov/img", "disable", [base, delete, replace], env=disable)
    fx.load(SOCK, fx.docker_archive([base, delete, replace], "cov:disable", env=disable))
    fx.push(AUTH_REGISTRY, "cov/img", "ptx", [base, delete, replace], auth=AUTH)
    fx.push(REGISTRY, "cov/names", "md", [fx.layer([("dir", "usr"), ("dir", "usr/lib")] +
                                                   [("file", "usr/lib/" + n, LIBS["ptx"]) for n in MD_NAMES])])


def tearDownModule():
    if WORK is None:
        return
    subprocess.run([os.path.join(SOURCE, "scripts/stop-registry.sh"), os.path.join(WORK, "r")])
    subprocess.run([os.path.join(SOURCE, "scripts/stop-registry.sh"), os.path.join(WORK, "ra")])
    subprocess.run([os.path.join(SOURCE, "scripts/stop-dockerd.sh"), os.path.join(WORK, "d")])
    shutil.rmtree(WORK, ignore_errors=True)


def scan(ref, *extra, check=None):
    p = run("inspect", ref, "--tier", "tier-hopper", "-f", os.path.join(WORK, "tiers.yaml"), "--json", *extra,
            check=check)
    return p, json.loads(p.stdout)


def cells(doc, path):
    (tier,) = doc["tiers"]
    for row in tier["rows"]:
        if row["path"] == path:
            return {c["gpu"].split(": ")[-1]: (c["verdict"], c["decided_by"]) for c in row["cells"]}
    raise AssertionError("no row %s in %s" % (path, [r["path"] for r in tier["rows"]]))


class Scan(unittest.TestCase):
    def test_sm80_only_gets_none_on_hopper_per_library_and_exit_1(self):
        p, doc = scan("docker://cov:sm80", check=1)
        self.assertEqual(cells(doc, "/usr/lib/libk.so"), {"H100 (9.0)": ("none", ""), "H200 (9.0)": ("none", "")})
        self.assertEqual(len(doc["tiers"][0]["rows"]), 1)
        self.assertEqual(doc["layers"], 2)

    def test_compute_80_ptx_makes_it_jit_and_exit_0(self):
        p, doc = scan("docker://cov:ptx", check=0)
        self.assertEqual(cells(doc, "/usr/lib/libk.so"),
                         {"H100 (9.0)": ("jit", "compute_80"), "H200 (9.0)": ("jit", "compute_80")})

    def test_a_library_a_later_layer_deletes_or_replaces_is_not_counted(self):
        _, doc = scan("docker://cov:sm80", check=1)
        # libgone.so has PTX (it would be jit): deleted by layer 2, it must not count.
        self.assertEqual([r["path"] for r in doc["tiers"][0]["rows"]], ["/usr/lib/libk.so"])
        self.assertEqual(doc["hidden"], ["/usr/lib/libgone.so (layer 1)"])
        _, doc = scan("docker://cov:ptx", check=0)
        self.assertEqual(doc["hidden"], ["/usr/lib/libgone.so (layer 1)", "/usr/lib/libk.so (layer 1)"])

    def test_registry_image_scanned_through_the_registry_client_reads_the_same(self):
        for tag, code in (("sm80", 1), ("ptx", 0)):
            _, engine = scan("docker://cov:" + tag, check=code)
            _, registry = scan("oci://%s/cov/img:%s" % (REGISTRY, tag), check=code)
            self.assertEqual(engine["tiers"], registry["tiers"])
            self.assertEqual(engine["hidden"], registry["hidden"])
            self.assertTrue(registry["identity"].startswith("sha256:"))

    def test_hostile_layers_are_refused_with_a_clear_error_and_nothing_written(self):
        for tag, what in (("dotdot", "has a '..' component"), ("hardlink", "a link out of the image"),
                          ("huge", "over the 4294967296-byte limit")):
            p = run("inspect", "oci://%s/cov/bad:%s" % (REGISTRY, tag), "--gpu", "H100", check=2)
            self.assertIn(what, p.stderr)
            self.assertIn("the layer is refused", p.stderr)
            self.assertIn("nothing was written", p.stderr)
            self.assertEqual(p.stdout, "")
            self.assertEqual(os.listdir(ENV["TMPDIR"]), [])

    def test_a_layer_padded_past_its_end_is_read_to_its_end(self):
        _, doc = scan("oci://%s/cov/img:padded" % REGISTRY, check=1)
        self.assertEqual([r["path"] for r in doc["tiers"][0]["rows"]], ["/usr/lib/libgone.so", "/usr/lib/libk.so"])
        self.assertEqual(doc["layer_bytes"], PADDED)

    def test_missing_image_and_unreachable_registry(self):
        p = run("inspect", "docker://cov:absent", "--gpu", "H100", check=2)
        self.assertIn("has no image 'cov:absent'", p.stderr)
        run("inspect", "oci://%s/cov/img:absent" % REGISTRY, "--gpu", "H100", check=2)
        p = run("inspect", "oci://127.0.0.1:1/cov/img:sm80", "--gpu", "H100", check=3)
        self.assertIn("cannot reach the registry", p.stderr)

    def test_reports_are_self_contained(self):
        html = os.path.join(WORK, "r.html")
        md = os.path.join(WORK, "r.md")
        run("inspect", "docker://cov:ptx", "--tier", "tier-hopper", "-f", os.path.join(WORK, "tiers.yaml"),
            "--report", html, check=0)
        run("inspect", "docker://cov:ptx", "--tier", "tier-hopper", "-f", os.path.join(WORK, "tiers.yaml"),
            "--report", md, check=0)
        page = slurp(html)
        for external in ("src=", "href=", "url(", "@import", "http://", "https://"):
            self.assertNotIn(external, page)
        self.assertEqual(page.count('data-verdict="jit"'), 2)
        text = slurp(md)
        self.assertIn("| `/usr/lib/libk.so` | 🟡 jit compute_80 | 🟡 jit compute_80 |", text)
        p = run("inspect", "docker://cov:ptx", "--gpu", "H100", "--report", os.path.join(WORK, "r.pdf"), check=2)
        self.assertIn("FILE.html", p.stderr)

    def test_text_grid_is_plain_without_a_terminal(self):
        p = run("inspect", "docker://cov:sm80", "--tier", "tier-hopper", "-f", os.path.join(WORK, "tiers.yaml"),
                check=1)
        self.assertNotIn("\x1b[", p.stdout)
        self.assertRegex(p.stdout, r"/usr/lib/libk.so\s+none\s+none")


def image_json(ref):
    return json.loads(fx.engine(SOCK, "GET", "/images/%s/json" % ref)[1])


class Stamp(unittest.TestCase):
    def test_local_image_becomes_a_new_image_with_the_constraints_and_the_old_stays(self):
        before = image_json("cov:ptx")
        p = run("stamp", "docker://cov:ptx", "--tier", "tier-hopper", "-f", os.path.join(WORK, "tiers.yaml"), check=0)
        self.assertIn("stamped cov:ptx-tier-hopper", p.stdout)
        after = image_json("cov:ptx")
        self.assertEqual(before["Id"], after["Id"])
        self.assertEqual(before["Config"]["Env"], after["Config"]["Env"])
        new = image_json("cov:ptx-tier-hopper")
        self.assertNotEqual(new["Id"], before["Id"])
        self.assertEqual(new["RootFS"]["Layers"], before["RootFS"]["Layers"])
        self.assertIn("NVIDIA_REQUIRE_ARCH=arch>=8.0", new["Config"]["Env"])
        self.assertIn("NVIDIA_REQUIRE_CUDA=cuda>=13.0", new["Config"]["Env"])
        self.assertEqual(new["Config"]["Labels"]["org.orchestrate.stamp.tier"], "tier-hopper")
        # The stamped image scans as the original did.
        _, doc = scan("docker://cov:ptx-tier-hopper", check=0)
        self.assertEqual(cells(doc, "/usr/lib/libk.so")["H100 (9.0)"], ("jit", "compute_80"))

    def test_native_only_stamps_sass_alone(self):
        p = run("stamp", "docker://cov:ptx", "--tier", "tier-ampere", "--native-only", "--tag", "native",
                "-f", os.path.join(WORK, "tiers.yaml"), check=0)
        self.assertIn("NVIDIA_REQUIRE_ARCH=arch>=8.0,arch<9.0", image_json("cov:native")["Config"]["Env"])

    def test_native_only_refuses_a_tier_gpu_that_only_ptx_reaches(self):
        # cov:ptx has sm_80 SASS and compute_80 PTX: the H100 and H200 of
        # tier-hopper run it by JIT only, and a native-only stamp would refuse
        # them.
        p = run("stamp", "docker://cov:ptx", "--tier", "tier-hopper", "--native-only", "--tag", "refused",
                "-f", os.path.join(WORK, "tiers.yaml"), check=1)
        self.assertIn("NVIDIA_REQUIRE_ARCH would refuse H100 (9.0), H200 (9.0) of tier-hopper", p.stdout)
        self.assertIn("drop --native-only", p.stdout)
        status, _ = fx.engine(SOCK, "GET", "/images/cov:refused/json")
        self.assertEqual(status, 404)

    def test_an_image_id_names_no_repository_to_stamp_into(self):
        image_id = image_json("cov:ptx")["Id"]
        p = run("stamp", "docker://" + image_id, "--tier", "tier-hopper", "--tag", "x",
                "-f", os.path.join(WORK, "tiers.yaml"), check=2)
        self.assertIn("is an image ID, which names no repository", p.stderr)

    def test_an_image_that_gets_none_on_the_tier_is_not_stamped(self):
        p = run("stamp", "docker://cov:sm80", "--tier", "tier-hopper", "-f", os.path.join(WORK, "tiers.yaml"),
                check=1)
        self.assertIn("not stamped", p.stdout)
        status, _ = fx.engine(SOCK, "GET", "/images/cov:sm80-tier-hopper/json")
        self.assertEqual(status, 404)

    def test_registry_image_gets_a_new_config_and_manifest_beside_the_old(self):
        old = fx.registry_manifest(REGISTRY, "cov/img", "ptx")
        p = run("stamp", "oci://%s/cov/img:ptx" % REGISTRY, "--tier", "tier-ampere",
                "-f", os.path.join(WORK, "tiers.yaml"), check=0)
        self.assertIn("cov/img:ptx-tier-ampere", p.stdout)
        new = fx.registry_manifest(REGISTRY, "cov/img", "ptx-tier-ampere")
        self.assertEqual(new["layers"], old["layers"])
        self.assertNotEqual(new["config"]["digest"], old["config"]["digest"])
        self.assertEqual(fx.registry_manifest(REGISTRY, "cov/img", "ptx"), old)
        env = json.loads(fx.registry_blob(REGISTRY, "cov/img", new["config"]["digest"]))["config"]["Env"]
        self.assertEqual(env, ["PATH=/bin", "NVIDIA_REQUIRE_CUDA_IMAGE=cuda>=12.0 brand=tesla,driver>=470,driver<471",
                               "NVIDIA_REQUIRE_CUDA=cuda>=13.0", "NVIDIA_REQUIRE_ARCH=arch>=8.0"])


def blob_count(registry_dir):
    return sum(len(files) for _, _, files in os.walk(os.path.join(registry_dir, "data/docker/registry/v2/blobs")))


class Tables(html.parser.HTMLParser):
    """The cells of every <table> cmark-gfm wrote, as text."""

    def __init__(self):
        super().__init__()
        self.tables, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


class Hostile(unittest.TestCase):
    """Issue 28: what a registry, an image and a user can hand inspect and stamp."""

    def test_a_config_nested_100000_deep_is_refused_and_nothing_is_pushed(self):
        # dockerd refuses such a config, so it comes through a registry; the
        # dump of it overflowed the stack (SIGSEGV).
        tags, blobs = fx.registry_tags(REGISTRY, "cov/deep"), blob_count(os.path.join(WORK, "r"))
        ref = "oci://%s/cov/deep:ptx" % REGISTRY
        p = run("stamp", ref, "--tier", "tier-ampere", "-f", os.path.join(WORK, "tiers.yaml"), check=2)
        self.assertEqual(p.stderr, "orchestrate: error: %s: the image config nests arrays or objects deeper than 256 "
                                   "levels, which no image config needs; rebuild the image with a config that does "
                                   "not (nothing was pushed)\n" % ref)
        self.assertEqual(fx.registry_tags(REGISTRY, "cov/deep"), tags)
        self.assertEqual(blob_count(os.path.join(WORK, "r")), blobs)

    def test_disable_require_is_removed_and_said_through_the_registry_and_the_engine(self):
        p = run("stamp", "oci://%s/cov/img:disable" % REGISTRY, "--tier", "tier-ampere",
                "-f", os.path.join(WORK, "tiers.yaml"), check=0)
        self.assertIn("\n  removed NVIDIA_DISABLE_REQUIRE=1, which makes every node skip these requirements\n", p.stdout)
        new = fx.registry_manifest(REGISTRY, "cov/img", "disable-tier-ampere")
        env = json.loads(fx.registry_blob(REGISTRY, "cov/img", new["config"]["digest"]))["config"]["Env"]
        self.assertEqual(env, ["PATH=/bin", "NVIDIA_REQUIRE_CUDA=cuda>=13.0", "NVIDIA_REQUIRE_ARCH=arch>=8.0"])
        p = run("stamp", "docker://cov:disable", "--tier", "tier-ampere", "--json",
                "-f", os.path.join(WORK, "tiers.yaml"), check=0)
        self.assertEqual(json.loads(p.stdout)["removed"], ["NVIDIA_DISABLE_REQUIRE=1"])
        self.assertEqual(image_json("cov:disable-tier-ampere")["Config"]["Env"],
                         ["PATH=/bin", "NVIDIA_REQUIRE_CUDA=cuda>=13.0", "NVIDIA_REQUIRE_ARCH=arch>=8.0"])

    def no_password(self, p, *files):
        for text in [p.stdout, p.stderr] + [slurp(f) for f in files]:
            self.assertNotIn(PASSWORD, text)

    def test_credentials_in_a_reference_are_sent_and_printed_nowhere(self):
        tiers = os.path.join(WORK, "tiers.yaml")
        # oci://USER:PW@127.0.0.1 is loopback (plain HTTP): the host is read after the userinfo.
        for scheme in ("oci://", "oci+http://"):
            ref = "%s%s@%s/cov/img:ptx" % (scheme, AUTH, AUTH_REGISTRY)
            shown = "%s%s/cov/img:ptx" % (scheme, AUTH_REGISTRY)
            p, doc = scan(ref, check=0)
            self.no_password(p)
            self.assertEqual(doc["source"], shown)
            html_report, md_report = os.path.join(WORK, "auth.html"), os.path.join(WORK, "auth.md")
            for report in (html_report, md_report):
                p = run("inspect", ref, "--tier", "tier-hopper", "-f", tiers, "--report", report, check=0)
                self.no_password(p, report)
                self.assertTrue(p.stdout.startswith(shown + "  sha256:"), p.stdout)
            self.assertIn("<title>GPU coverage: %s</title>" % shown, slurp(html_report))
            self.assertTrue(slurp(md_report).startswith("### GPU coverage of `%s`\n" % shown))
        p = run("stamp", "oci://%s@%s/cov/img:ptx" % (AUTH, AUTH_REGISTRY), "--tier", "tier-ampere", "-f", tiers,
                check=0)
        self.no_password(p)
        self.assertIn("stamped oci://%s/cov/img:ptx-tier-ampere (sha256:" % AUTH_REGISTRY, p.stdout)
        p = run("stamp", "oci://%s@%s/cov/img:ptx" % (AUTH, AUTH_REGISTRY), "--tier", "tier-ampere", "--tag", "j",
                "--json", "-f", tiers, check=0)
        self.no_password(p)
        self.assertEqual(json.loads(p.stdout)["stamped"], "oci://%s/cov/img:j" % AUTH_REGISTRY)
        self.assertEqual(fx.registry_tags(AUTH_REGISTRY, "cov/img", auth=AUTH), ["j", "ptx", "ptx-tier-ampere"])
        # The registry does ask: no password, or a wrong one, is its refusal (exit 3), the wrong one unprinted.
        run("inspect", "oci://%s/cov/img:ptx" % AUTH_REGISTRY, "--gpu", "H100", check=3)
        p = run("inspect", "oci://orc:Wrong-7Qx@%s/cov/img:ptx" % AUTH_REGISTRY, "--gpu", "H100", check=3)
        self.assertNotIn("Wrong-7Qx", p.stdout + p.stderr)

    def test_names_that_are_markdown_stay_in_their_cells(self):
        if not shutil.which("cmark-gfm"):
            self.skipTest("no cmark-gfm, GitHub's Markdown parser (scripts/install-deps.sh --test)")
        md = os.path.join(WORK, "names.md")
        run("inspect", "oci://%s/cov/names:md" % REGISTRY, "--tier", "tier-hopper", "-f", os.path.join(WORK, "tiers.yaml"),
            "--report", md, check=0)
        page = subprocess.run(["cmark-gfm", "-e", "table", md], capture_output=True, text=True, check=True).stdout
        tables = Tables()
        tables.feed(page)
        self.assertEqual(len(tables.tables), 1, page)
        (grid,) = tables.tables
        self.assertEqual(grid[0], ["library", "H100 (9.0)", "H200 (9.0)"])
        # The line break is shown as \x0a, as in every other output.
        self.assertEqual(sorted(row[0] for row in grid[1:]),
                         sorted("/usr/lib/" + n.replace("\n", "\\x0a") for n in MD_NAMES))
        for row in grid[1:]:
            self.assertEqual(row[1:], ["🟡 jit compute_80", "🟡 jit compute_80"], page)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    ORC = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        skip("dockerd needs root")
    if not os.path.exists("/usr/local/cuda/bin/nvcc"):
        skip("no nvcc at /usr/local/cuda/bin/nvcc to build the test libraries")
    unittest.main(verbosity=2)
