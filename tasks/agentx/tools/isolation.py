"""The bubblewrap command line of a sandbox worker: what the sandbox sees, which namespaces, which user.

Owns the filesystem view (read-only `/usr` and its `/bin`, `/lib*` links; the base interpreter, its libpython and
standard library with every site-packages folder hidden under an empty tmpfs; only the third-party distributions the
worker imports, each top-level entry bound read-only into a synthetic `/sandbox/site`; the worker script and the
calculator module in `/sandbox/lib`; the call's own empty working folder at `/work`; a private `/tmp`, `/proc` of its
own pid namespace, a minimal `/dev`), the namespaces (`--unshare-all` plus `--disable-userns`), the fixed environment,
and the user: a parent running as root starts bwrap as uid/gid 65534 (nobody, no supplementary groups), so bwrap
uses an unprivileged user namespace and `RLIMIT_NPROC` applies.  A source folder that uid 65534 cannot reach (e.g.
an interpreter under `/root`) is mirrored once per process into a root-owned, world-readable staging folder (hard
links where possible, copies otherwise).  bwrap reads its options from a pipe (`--args`), so no command line shows
the host paths.  `probe()` starts the interpreter once under these flags (cached) and builds matplotlib's font
list, which every worker then gets read-only (its own config folder stays private and fresh).
"""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import os
import re
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
SANDBOX_LIB = "/sandbox/lib"
SANDBOX_SITE = "/sandbox/site"
WORK = "/work"
NOBODY = 65534
WORKER_FILES = ("sandbox_worker.py", "calculator.py")
ROOT_PACKAGES = ("sympy", "matplotlib", "numpy")
INSTALL_HINT = "install bubblewrap: apt-get install bubblewrap"
ENVIRONMENT = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/matplotlib",
               "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
FLAGS = ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--clearenv",
         "--cap-drop", "ALL", "--hostname", "sandbox")
PROBE_CODE = ("import os, sys; os.environ['MPLCONFIGDIR'] = '/work'; sys.path.insert(0, '/sandbox/site'); "
              "import matplotlib.font_manager")
_FONT_CACHE: list[tuple[str, str]] = []
_SKIP_STDLIB = {"site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip"}


@dataclass(frozen=True)
class Layout:
    """The bind mounts (host source, sandbox destination), hidden folders and the interpreter path inside."""

    binds: tuple[tuple[str, str], ...]
    links: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]
    python: str
    uid: int


def run_as() -> int | None:
    """The uid bwrap is started as: 65534 when the parent is root, else None (the parent's own user)."""
    return NOBODY if os.geteuid() == 0 else None


def _reachable(path: Path) -> bool:
    """Whether uid 65534 (owner of nothing, in no group) can reach and read `path`."""
    if run_as() is None:
        return True
    for parent in path.parents:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
    mode = os.stat(path).st_mode
    return bool(mode & stat.S_IROTH) and (not stat.S_ISDIR(mode) or bool(mode & stat.S_IXOTH))


@cache
def _staging() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="lmms_agentic_sandbox_stage_"))
    folder.chmod(0o755)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _mirror_file(source: Path, target: Path) -> None:
    if source.is_symlink():
        target.symlink_to(os.readlink(source))
        return
    if os.stat(source).st_mode & stat.S_IROTH:
        try:
            os.link(source, target)
            return
        except OSError:
            pass
    shutil.copy2(source, target)
    target.chmod(0o755 if os.stat(source).st_mode & stat.S_IXUSR else 0o644)


def _stage(source: Path) -> str:
    """`source` itself where uid 65534 reaches it, else its world-readable mirror in the staging folder."""
    if _reachable(source):
        return str(source)
    target = _staging() / str(source).lstrip("/")
    if target.exists():
        return str(target)
    for parent in reversed(target.parents):
        if str(parent).startswith(str(_staging())) and not parent.exists():
            parent.mkdir(mode=0o755)
    if source.is_file():
        _mirror_file(source, target)
        return str(target)
    for folder, dirs, files in os.walk(source):
        relative = Path(folder).relative_to(source)
        dirs[:] = sorted(d for d in dirs if not (folder == str(source) and d in _SKIP_STDLIB))
        (target / relative).mkdir(mode=0o755, exist_ok=True)
        for name in files:
            _mirror_file(Path(folder) / name, target / relative / name)
    return str(target)


def _distributions() -> set[str]:
    """The worker's third-party distributions: `ROOT_PACKAGES` and their non-optional requirements, recursively."""
    from packaging.requirements import Requirement

    found: set[str] = set()
    pending = list(ROOT_PACKAGES)
    while pending:
        name = pending.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            continue
        found.add(key)
        for line in importlib.metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return found


def _package_entries() -> dict[str, Path]:
    """Sandbox site entry name -> host path, for every top-level file or folder of the worker's distributions."""
    entries: dict[str, Path] = {}
    for name in sorted(_distributions()):
        distribution = importlib.metadata.distribution(name)
        for file in distribution.files or []:
            top = file.parts[0]
            if top in ("..", "__pycache__") or top.endswith(".pth"):
                continue
            path = Path(str(distribution.locate_file(top))).resolve()
            if path.exists() and top not in entries:
                entries[top] = path
    return entries


def _base_interpreter() -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidate = Path(sys.base_prefix) / "bin" / version
    return (candidate if candidate.exists() else Path(sys.executable)).resolve()


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _visible(path: Path, binds: list[tuple[str, str]]) -> bool:
    """Whether `path` would exist inside the sandbox under these binds (a staged mirror leaves some folders out)."""
    for source, dest in binds:
        if _under(path, [Path(dest)]):
            return (Path(source) / path.relative_to(dest)).is_dir()
    return False


@cache
def layout() -> Layout:
    """The sandbox's filesystem (computed once per process)."""
    binds: list[tuple[str, str]] = [("/usr", "/usr")]
    links: list[tuple[str, str]] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            links.append((os.readlink(path), str(path)))
        elif path.is_dir():
            binds.append((str(path), str(path)))
    roots = [Path(source) for source, _ in binds]
    python = _base_interpreter()
    stdlib = Path(sysconfig.get_path("stdlib")).resolve()
    host = [python, stdlib]
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        host.append(Path(str(sysconfig.get_config_var("LIBDIR"))) / str(sysconfig.get_config_var("INSTSONAME")))
    for path in host:
        if path.exists() and not _under(path, roots):
            binds.append((_stage(path), str(path)))
    candidates = [*site.getsitepackages(), site.getusersitepackages(), sysconfig.get_path("purelib"),
                  sysconfig.get_path("platlib"), str(stdlib / "site-packages"), str(stdlib / "dist-packages"),
                  *(p for p in sys.path if p.endswith(("site-packages", "dist-packages"))), str(HERE.parents[2])]
    hidden = sorted({str(Path(p).resolve()) for p in candidates
                     if p and Path(p).is_dir() and _visible(Path(p).resolve(), binds)})
    binds += [(_stage(path), f"{SANDBOX_SITE}/{name}") for name, path in sorted(_package_entries().items())]
    binds += [(_stage(HERE / name), f"{SANDBOX_LIB}/{name}") for name in WORKER_FILES]
    return Layout(tuple(binds), tuple(links), tuple(hidden), str(python), run_as() or os.getuid())


def options(workdir: str) -> list[str]:
    """bwrap's options (no command) with `workdir` (host) as the writable `/work`."""
    view = layout()
    args: list[str] = list(FLAGS)
    for source, dest in view.binds:
        args += ["--ro-bind", source, dest]
    for target, path in view.links:
        args += ["--symlink", target, path]
    for path in view.hidden:
        args += ["--tmpfs", path, "--remount-ro", path]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for source, dest in _FONT_CACHE:
        args += ["--ro-bind", source, dest]
    args += ["--bind", workdir, WORK, "--remount-ro", "/", "--chdir", WORK]
    for key, value in ENVIRONMENT.items():
        args += ["--setenv", key, value]
    return args


def popen(workdir: str, argv: list[str], *, stdin: int, stdout: int, stderr: int, env: dict[str, str] | None = None,
          cwd: str | None = None) -> subprocess.Popen[bytes]:
    """Start `argv` (inside paths) under bwrap as the sandbox's user.  The options go through a pipe (`--args`),
    so the host paths of the binds appear in no command line, inside or outside."""
    read, write = os.pipe()
    try:
        payload = b"".join(arg.encode() + b"\0" for arg in options(workdir))
        with os.fdopen(write, "wb") as stream:
            write = -1
            stream.write(payload)
        uid = run_as()
        return subprocess.Popen([shutil.which("bwrap") or "bwrap", "--args", str(read), "--", *argv],
                                pass_fds=(read,), start_new_session=True, close_fds=True, user=uid, group=uid,
                                extra_groups=None if uid is None else [], stdin=stdin, stdout=stdout, stderr=stderr,
                                env=env, cwd=cwd)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


def worker_argv(light: bool = False) -> list[str]:
    return [layout().python, "-I", "-S", "-B", f"{SANDBOX_LIB}/sandbox_worker.py", "--site", SANDBOX_SITE,
            *(["--light"] if light else [])]


def make_workdir() -> str:
    """A fresh, empty working folder owned by the sandbox's user."""
    folder = tempfile.mkdtemp(prefix="agentx_tool_")
    uid = run_as()
    if uid is not None:
        os.chown(folder, uid, uid)
    return folder


def _keep_font_cache(workdir: Path) -> None:
    """Keep the probe's matplotlib font list (built by our own code before any model code ran) read-only in the
    staging folder; every worker gets it bound read-only, so none rebuilds it and none can change it."""
    for found in sorted(workdir.glob("fontlist-*.json")):
        if found.is_symlink() or not found.is_file() or found.stat().st_size > 16 << 20:
            continue
        json.loads(found.read_text())
        kept = _staging() / "matplotlib" / found.name
        kept.parent.mkdir(mode=0o755, exist_ok=True)
        shutil.copyfile(found, kept)
        kept.chmod(0o644)
        _FONT_CACHE.append((str(kept), f"{ENVIRONMENT['MPLCONFIGDIR']}/{found.name}"))


@cache
def probe() -> str | None:
    """None where a worker can start under bubblewrap here, else why not (cached per process)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        view = layout()
        workdir = make_workdir()
    except (OSError, ValueError, importlib.metadata.PackageNotFoundError) as err:
        return f"the sandbox's filesystem cannot be prepared ({err.__class__.__name__}: {err})"
    process = None
    try:
        process = popen(workdir, [view.python, "-I", "-S", "-c", PROBE_CODE], stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, stderr = process.communicate(timeout=120)
        if process.returncode == 0:
            _keep_font_cache(Path(workdir))
    except (OSError, subprocess.SubprocessError) as err:
        return f"bwrap could not run ({err.__class__.__name__}: {err})"
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    if process.returncode != 0:
        lines = stderr.decode(errors="replace").strip().splitlines()
        return f"bwrap failed with status {process.returncode}: {lines[-1] if lines else 'no message'}"
    return None
