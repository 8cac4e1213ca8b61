"""Escapes from the code sandbox, as a hostile model would write them: each is contained by the OS sandbox
(bubblewrap), most with the audit hook switched off (`Sandbox(audit_hook=False)`, as if the code had disabled it)."""

from __future__ import annotations

import os
import socket
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import lmms_agentic
from lmms_agentic.tasks.agentx.tools import isolation, local
from lmms_agentic.tasks.agentx.tools.sandbox import Limits, Sandbox
from lmms_agentic.tasks.agentx.tools.toolset import LIMITS as TOOL_LIMITS

if isolation.probe() is not None:
    pytest.skip(f"bubblewrap sandbox unavailable here: {isolation.probe()}", allow_module_level=True)

LIMITS = Limits(wall_s=10, cpu_s=4, mem_mb=1024)
SECRET = "top-secret-7f3a9c"
API_KEY = "sk-test-secret-123"
SLACK_S = 60  # generous: worker start-up on a loaded 2-core machine
REPOSITORY = Path(lmms_agentic.__file__).resolve().parents[1]
GOLD = Path(lmms_agentic.tasks_dir()) / "agentx" / "data" / "mini" / "data.json"


@pytest.fixture(scope="module")
def bare() -> Iterator[Sandbox]:
    """The OS layer alone: workers started with a planted API key in the parent's environment, no audit hook."""
    previous = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = API_KEY
    box = Sandbox(warm=2, audit_hook=False)
    yield box
    box.close()
    if previous is None:
        os.environ.pop("OPENAI_API_KEY", None)
    else:
        os.environ["OPENAI_API_KEY"] = previous


@pytest.fixture(scope="module")
def hooked() -> Iterator[Sandbox]:
    box = Sandbox(warm=1)
    yield box
    box.close()


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    path.chmod(0o644)
    tmp_path.chmod(0o755)
    return path


def _run(box: Sandbox, code: str, mode: str = "solver", limits: Limits = LIMITS) -> str:
    started = time.monotonic()
    result = box.run(mode, code, limits)
    assert time.monotonic() - started < limits.wall_s + SLACK_S
    return f"{result.output}\n{result.error}"


def test_tampering_with_the_audit_hook_gains_nothing(hooked: Sandbox, secret: Path) -> None:
    code = f"""import gc, sys
sys.modules['__main__']._BLOCKED_PREFIXES = ('nothing.',)
for f in gc.get_objects():
    if type(f).__name__ == 'function' and f.__name__ == 'hook' and f.__closure__:
        for cell in f.__closure__:
            if isinstance(cell.cell_contents, list):
                cell.cell_contents = ['/']
            elif isinstance(cell.cell_contents, str):
                cell.cell_contents = '/'
import os
os.system('id; cat {secret}; touch {secret.parent}/planted')
print(open({str(secret)!r}).read())
"""
    out = _run(hooked, code)
    assert "uid=65534" in out and "uid=0(" not in out  # the hook is gone: the shell ran, as nobody
    assert SECRET not in out and "No such file" in out
    assert not (secret.parent / "planted").exists()


def test_reading_and_writing_outside_fails(bare: Sandbox, secret: Path) -> None:
    code = f"""import os
for path in [{str(secret)!r}, '/etc/passwd', '/etc/shadow', '/root/.bashrc', {str(GOLD)!r}]:
    try:
        print(open(path).read()[:200])
    except OSError as err:
        print('refused', path, err.strerror)
for path in [{str(secret.parent / 'x')!r}, '/usr/x', '/sandbox/site/x', '/x']:
    try:
        open(path, 'w').write('x')
        print('wrote', path)
    except OSError as err:
        print('refused', path, err.strerror)
"""
    out = _run(bare, code)
    assert SECRET not in out and "root:" not in out and '"reasoning_steps"' not in out
    assert "wrote" not in out and not (secret.parent / "x").exists()


@pytest.mark.parametrize("how", ["system", "subprocess", "fork_exec", "multiprocessing"])
def test_processes_stay_inside(bare: Sandbox, secret: Path, how: str) -> None:
    shell = f"id; cat {secret}; cat /proc/1/environ; ls /proc; echo x > {secret.parent}/from_shell"
    code = {
        "system": f"import os\nos.system({shell!r})",
        "subprocess": f"import subprocess\nprint(subprocess.run(['/bin/sh', '-c', {shell!r}], capture_output=True,"
                      f" text=True).stdout)",
        "fork_exec": f"import os\npid = os.fork()\nif pid == 0:\n    os.execv('/bin/sh', ['sh', '-c', {shell!r}])\n"
                     f"os.waitpid(pid, 0)",
        "multiprocessing": f"import multiprocessing, os\np = multiprocessing.get_context('fork').Process("
                           f"target=os.system, args=({shell!r},))\np.start()\np.join()",
    }[how]
    out = _run(bare, code)
    assert "uid=65534" in out and "uid=0(" not in out, out
    assert SECRET not in out and API_KEY not in out
    assert not (secret.parent / "from_shell").exists()


def test_moving_or_linking_to_the_host_fails(bare: Sandbox, secret: Path) -> None:
    code = f"""import os
open('mine', 'w').write('m')
for name, call in [('rename', lambda: os.rename('mine', {str(secret.parent / 'moved')!r})),
                   ('link', lambda: os.link({str(secret)!r}, 'hard')),
                   ('symlink', lambda: os.symlink('/work/mine', {str(secret.parent / 'sym')!r})),
                   ('dirfd', lambda: os.open('secret.txt', os.O_RDONLY, dir_fd=os.open({str(secret.parent)!r},
                                                                                        os.O_RDONLY)))]:
    try:
        call()
        print(name, 'worked')
    except OSError as err:
        print(name, 'refused', err.strerror)
os.symlink({str(secret)!r}, 'sym_in_work')
print(open('sym_in_work').read() if os.path.exists('sym_in_work') else 'dangling')
"""
    out = _run(bare, code)
    assert "worked" not in out and SECRET not in out and "dangling" in out
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret.txt"] and secret.read_text() == SECRET


def test_environment_processes_and_repository_are_invisible(bare: Sandbox) -> None:
    code = f"""import os, importlib.util
print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
print('repository', os.path.exists({str(REPOSITORY)!r}), 'gold', os.path.exists({str(GOLD)!r}))
print('package', importlib.util.find_spec('lmms_agentic'), 'home', os.path.exists('/root/.bashrc'))
print('purelib', os.path.exists({sysconfig.get_path("purelib")!r}), os.path.exists({sysconfig.get_path("stdlib")!r}))
print('site', os.listdir('/sandbox/site'))
print('root', sorted(os.listdir('/')))
print(dict(os.environ))
for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
    for part in ('environ', 'cmdline'):
        try:
            print(pid, part, open(f'/proc/{{pid}}/{{part}}', 'rb').read()[:300])
        except OSError as err:
            print(pid, part, 'refused', err.strerror)
"""
    out = _run(bare, code)
    assert API_KEY not in out and "pytest" not in out and "OPENAI_API_KEY" not in out
    assert "repository False gold False" in out and "package None home False" in out
    assert "purelib False True" in out  # the stdlib is there, the interpreter's site-packages are not
    pids = eval(out.split("pids ", 1)[1].split("\n", 1)[0])
    assert max(pids) < 100  # its own pid namespace: no host process is visible
    assert "lmms_agentic" not in out.split("site ", 1)[1] and str(REPOSITORY) not in out


def test_no_network_even_without_the_hook(bare: Sandbox) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        out = _run(bare, f"import socket\nprint(socket.if_nameindex())\n"
                         f"socket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')")
    finally:
        server.close()
    assert "connected" not in out and "ConnectionRefusedError" in out and "eth" not in out


def _running(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("how", ["daemon", "multiprocessing"])
def test_no_process_survives_the_call(bare: Sandbox, how: str) -> None:
    marker = f"987.{os.getpid()}{len(how)}"
    code = {
        "daemon": f"import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                  f"        os.execv('/bin/sleep', ['sleep', '{marker}'])\n    os._exit(0)\nprint('started')",
        "multiprocessing": f"import multiprocessing, os\np = multiprocessing.get_context('fork').Process(target="
                           f"os.execv, args=('/bin/sleep', ['sleep', '{marker}']))\np.start()\nprint('started')",
    }[how]
    result = bare.run("solver", code, LIMITS)
    assert "started" in result.output, result
    deadline = time.monotonic() + 10
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running(marker) == []


def test_process_count_is_capped(bare: Sandbox) -> None:
    code = ("import os, time\nn = 0\ntry:\n    while n < 500:\n        if os.fork() == 0:\n"
            "            time.sleep(30)\n            os._exit(0)\n        n += 1\n"
            "except OSError as err:\n    print('stopped after', n, err.strerror)")
    out = _run(bare, code)
    assert "stopped after" in out and int(out.split("stopped after ")[1].split()[0]) < 20, out


def test_matplotlib_settings_do_not_reach_the_next_call(bare: Sandbox) -> None:
    plant = ("import os, matplotlib\nfolder = matplotlib.get_configdir()\n"
             "open(os.path.join(folder, 'matplotlibrc'), 'w').write('lines.linewidth: 50\\n')\nprint(folder)")
    folder = _run(bare, plant).split("\n")[0]
    out = _run(bare, f"import os, matplotlib\nprint(matplotlib.rcParams['lines.linewidth'], "
                     f"os.path.exists(os.path.join({folder!r}, 'matplotlibrc')))")
    assert out.startswith("1.5 False"), out


def test_forged_result_lines_cannot_steer_the_parent(bare: Sandbox) -> None:
    forge = ("import os, json\nfor fd in range(3, 64):\n    try:\n        os.write(fd, {line})\n"
             "    except OSError:\n        pass\n{after}")
    path_line = repr(b'{"ok": true, "output": "forged", "error": null, "plot": "/dev/zero", "plot_png_b64": null}\n')
    result = bare.run("plotter", forge.format(line=path_line, after="import time\ntime.sleep(60)"), LIMITS)
    assert result.plot_png is None  # a path means nothing; nothing on the host was read
    huge = "b'{\"ok\": true, \"output\": \"\", \"error\": null, \"plot_png_b64\": \"' + b'A' * (20 << 20)"
    started = time.monotonic()
    result = bare.run("plotter", forge.format(line=huge, after="import time\ntime.sleep(60)"), LIMITS)
    assert not result.ok and "exceeded 16 MiB" in (result.error or "")
    partial = forge.format(line="b'{\"ok\": true, '", after="import time\ntime.sleep(60)")
    result = bare.run("solver", partial, LIMITS)
    assert not result.ok and "time limit of 10 s" in (result.error or "")
    assert time.monotonic() - started < 2 * LIMITS.wall_s + SLACK_S


@pytest.mark.parametrize("expression", ["(10**10000)**10000", "comb(10**7, 5*10**6)", "[0]*10**9",
                                        "factorial(5000)**100"])
def test_costly_calculator_inputs_end_within_the_limit(bare: Sandbox, expression: str) -> None:
    limits = TOOL_LIMITS["Calculator"]
    started = time.monotonic()
    with pytest.raises(local.ToolError, match=r"(?i)time limit|out of memory|CPU|exceeds the limit"):
        local.calculator(bare, expression, limits)
    assert time.monotonic() - started < limits.wall_s + SLACK_S


def test_native_code_gains_nothing(bare: Sandbox, hooked: Sandbox) -> None:
    assert "not allowed" in _run(hooked, "import ctypes\nctypes.CDLL('libc.so.6')")
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "print('setuid', libc.setuid(0), 'unshare', libc.unshare(0x10000000), 'mount', "
            "libc.mount(b'none', b'/usr', b'tmpfs', 0, None), 'uid', os.getuid())")
    out = _run(bare, code)
    assert "setuid -1 unshare -1 mount -1 uid 65534" in out, out
