"""optsched as a user gets it: the wheel, installed in a fresh virtual environment, run from an
empty folder (no checkout, no team source folder, no data besides what the wheel ships).

Marked ``wheel`` (run by ``make test`` as its own step, ``make test-wheel`` alone): it builds the
wheel, creates a venv and installs the dependencies (from pip's cache after the first run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _run(cmd, cwd, env=None, timeout=900):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def _source_copy(dest: Path) -> Path:
    """The files git tracks (what a clean clone has), copied to ``dest``.

    The wheel is built from this copy, not from the checkout: setuptools builds in the source
    folder (``build/``, ``*.egg-info``), so two builds of one checkout at once (two test workers,
    or a developer's own build) race on those folders; and a wheel built from the tracked files
    alone shows what a clean clone (CI) would ship.
    """
    r = subprocess.run(["git", "ls-files", "-z", "--cached"], cwd=ROOT, capture_output=True)
    if r.returncode == 0:
        for rel in filter(None, r.stdout.decode().split("\0")):
            src = ROOT / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel)
    else:  # not a git checkout (an sdist): everything but build products
        shutil.copytree(
            ROOT,
            dest,
            ignore=shutil.ignore_patterns(".venv", "build", "dist", "*.egg-info", ".git"),
            dirs_exist_ok=True,
        )
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    src = _source_copy(base / "src")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)], cwd=base)
    wheels = list(dist.glob("optsched-*.whl"))
    assert len(wheels) == 1
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=base)
    py = venv / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "-q", str(wheels[0])], cwd=base)
    empty = base / "user"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "OPTSCHED"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return {"wheel": wheels[0], "py": py, "bin": venv / "bin", "cwd": empty, "env": env}


def test_wheel_ships_instances_schemas_and_traces(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    for must in (
        "optsched/instances/toy/rigid-2x2-five.json",
        "optsched/core/schemas/rigid.schema.json",
        "optsched/traces/data/alibaba-gpu-2023-openb/jobs.csv.gz",
        "optsched/traces/data/alibaba-gpu-2023-openb/LICENSE-Apache-2.0.txt",
        "optsched/traces/data/philly/philly_runtime.csv",
        "optsched/traces/data/acme/cluster_summary.csv",
    ):
        assert must in names, must
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "notebooks/"))]


def test_imports_from_site_packages_not_the_checkout(installed):
    r = _run(
        [str(installed["py"]), "-c", "import optsched; print(optsched.__file__)"], installed["cwd"], installed["env"]
    )
    assert "site-packages" in r.stdout and str(ROOT) not in r.stdout


def test_cli_from_an_empty_folder(installed):
    opt = str(installed["bin"] / "optsched")
    cwd, env = installed["cwd"], installed["env"]
    assert "highs" in _run([opt, "info"], cwd, env).stdout
    r = _run([opt, "solve", "toy:rigid-2x2-five", "--json"], cwd, env)
    out = json.loads(r.stdout)
    assert out["status"] == "optimal" and out["verified"] and out["objective"] == pytest.approx(19)
    r = _run([opt, "simulate", "--trace", "openb", "--load", "0.9", "--policy", "srtf", "--json"], cwd, env)
    assert json.loads(r.stdout)["n_jobs"] > 6000
    r = _run(
        [
            opt,
            "simulate",
            "--trace",
            "synthetic",
            "--jobs",
            "1000",
            "--servers",
            "4",
            "--gpus-per-server",
            "8",
            "--policy",
            "las",
            "--json",
        ],
        cwd,
        env,
    )
    assert json.loads(r.stdout)["n_jobs"] == 1000
    assert "sojourn-tables" in _run([opt, "reproduce", "--list"], cwd, env).stdout


def test_demo_quick_has_the_checkout_row_count(installed):
    from optsched.experiments.demo import collect_rows

    expected = len(collect_rows(quick=True, progress=False))
    r = _run([str(installed["bin"] / "optsched"), "demo", "--quick", "--json"], installed["cwd"], installed["env"])
    rows = json.loads(r.stdout)
    assert len(rows) == expected > 0
    assert all(row["verified"] for row in rows)


@pytest.mark.parametrize("i", range(len(re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S))))
def test_readme_python_blocks(installed, i):
    block = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[i]
    _run([str(installed["py"]), "-c", block], installed["cwd"], installed["env"])


def test_readme_shell_examples(installed):
    """Every shell line of the README (but `make`), in order, from the empty folder: exit 0, and no
    simulation warns that no job ever waited (each shows a contended cluster)."""
    import tempfile

    cwd = Path(tempfile.mkdtemp(dir=installed["cwd"].parent, prefix="readme-shell-"))
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        lines += [ln for ln in (re.sub(r"\s+#\s.*$", "", x).strip() for x in block.splitlines()) if ln]
    lines = [ln for ln in lines if not ln.startswith("make ")]
    assert any(ln.startswith("optsched simulate --trace synthetic") for ln in lines)
    for line in lines:
        r = _run(["bash", "-c", line], cwd, installed["env"])
        assert "No job ever waited" not in r.stderr, f"{line}\n{r.stderr}"
